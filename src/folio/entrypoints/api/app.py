"""The HTTP API's application factory.

``create_app(container)`` builds the FastAPI app on the same composition root as the CLI
(``bootstrap.Container``). Extending it (the web page, the OpenAI-compatible routes, MCP):

- add a module with an ``APIRouter`` named ``router`` and list it in ``ROUTERS`` (or pass extra
  ``routers=`` to ``create_app``: module names or routers, included after ``ROUTERS``);
- routes declare ``container: ContainerDep, user: UserDep`` from ``folio.entrypoints.api.deps``
  and raise folio errors, which ``errors.py`` turns into the one JSON error body;
- the MCP server (``folio.entrypoints.mcp``) is mounted at ``/mcp/`` behind the same tokens;
- a static page is mounted at ``/`` from ``folio/entrypoints/web/static`` when that folder has an
  ``index.html`` (or pass ``static_dir=``); ``/api``, ``/docs`` and ``/openapi.json`` keep working.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles

from folio.bootstrap import Container
from folio.entrypoints.api import errors
from folio.entrypoints.api.deps import TurnSlots
from folio.entrypoints.api.errors import error_body

# Modules with an ``APIRouter`` called ``router``, included in this order.
ROUTERS: tuple[str, ...] = (
    "folio.entrypoints.api.routes.meta",
    "folio.entrypoints.api.routes.books",
    "folio.entrypoints.api.routes.conversations",
    "folio.entrypoints.api.routes.chat",
    "folio.entrypoints.api.routes.openai_compat",
)

MCP_PATH = "/mcp"
WEB_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"


def create_app(
    container: Container | None = None,
    *,
    routers: Sequence[str | APIRouter] | None = None,
    static_dir: Path | None = None,
) -> FastAPI:
    """The folio HTTP API on ``container`` (default: one built from the settings)."""
    from contextlib import asynccontextmanager
    from importlib.metadata import version

    from folio.entrypoints.mcp.server import http_app

    owned = container is None  # a container the app built is closed with it
    container = container or Container()
    mcp_app, mcp_sessions = http_app(container, version=version("folio"))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            async with mcp_sessions.run():
                yield
        finally:
            if owned:
                container.close()

    app = FastAPI(
        title="folio",
        version=version("folio"),
        summary="Chat with your books: page citations, no spoilers.",
        docs_url="/docs",
        lifespan=lifespan,
    )
    app.state.container = container
    app.state.turn_slots = TurnSlots(container.settings.max_concurrent_turns)
    errors.install(app)
    settings = container.settings
    _limit_request_size(
        app, settings.max_request_bytes, max(settings.max_request_bytes, settings.max_book_bytes)
    )
    for item in (*ROUTERS, *(routers or ())):
        app.include_router(_router(item))
    app.mount(MCP_PATH, mcp_app, name="mcp")  # MCP over streamable HTTP, the API's tokens
    static = static_dir or WEB_STATIC
    if (static / "index.html").is_file():
        app.mount("/", StaticFiles(directory=static, html=True), name="web")
    return app


def _router(item: str | APIRouter) -> APIRouter:
    if isinstance(item, APIRouter):
        return item
    router: APIRouter = importlib.import_module(item).router
    return router


UPLOAD_PATH = "/api/v1/books"


def _limit_request_size(app: FastAPI, limit: int, upload_limit: int) -> None:
    """Refuse a body announced larger than the limit (413) before reading it (a book upload may
    be as large as ``max_book_mb``; the upload route bounds what it reads, too)."""
    from fastapi.responses import JSONResponse

    @app.middleware("http")
    async def body_limit(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        length = request.headers.get("content-length")
        bound = upload_limit if request.url.path == UPLOAD_PATH else limit
        if length is not None:
            if not length.isdigit():
                body = error_body("INVALID_INPUT", "Invalid Content-Length")
                return JSONResponse(body, status_code=400)
            if int(length) > bound:
                setting = "max_book_mb" if bound == upload_limit != limit else "max_request_mb"
                body = error_body(
                    "TOO_LARGE",
                    f"A request body is at most {bound / (1024 * 1024):g} MB (setting {setting})",
                )
                return JSONResponse(body, status_code=413)
        return await call_next(request)
