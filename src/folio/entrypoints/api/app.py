"""The HTTP API's application factory.

``create_app(container)`` builds the FastAPI app on the same composition root as the CLI
(``bootstrap.Container``). Extending it (the web page, the OpenAI-compatible routes, MCP):

- add a module with an ``APIRouter`` named ``router`` and list it in ``ROUTERS`` (or pass extra
  ``routers=`` to ``create_app``: module names or routers, included after ``ROUTERS``);
- routes declare ``container: ContainerDep, user: UserDep`` from ``folio.entrypoints.api.deps``
  and raise folio errors, which ``errors.py`` turns into the one JSON error body;
- a static page is mounted at ``/`` from ``folio/entrypoints/web/static`` when that folder has an
  ``index.html`` (or pass ``static_dir=``); ``/api``, ``/docs`` and ``/openapi.json`` keep working.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Sequence
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
)

WEB_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"


def create_app(
    container: Container | None = None,
    *,
    routers: Sequence[str | APIRouter] | None = None,
    static_dir: Path | None = None,
) -> FastAPI:
    """The folio HTTP API on ``container`` (default: one built from the settings)."""
    from importlib.metadata import version

    container = container or Container()
    app = FastAPI(
        title="folio",
        version=version("folio"),
        summary="Chat with your books: page citations, no spoilers.",
        docs_url="/docs",
    )
    app.state.container = container
    app.state.turn_slots = TurnSlots(container.settings.max_concurrent_turns)
    errors.install(app)
    _limit_request_size(app, container.settings.max_request_bytes)
    for item in (*ROUTERS, *(routers or ())):
        app.include_router(_router(item))
    static = static_dir or WEB_STATIC
    if (static / "index.html").is_file():
        app.mount("/", StaticFiles(directory=static, html=True), name="web")
    return app


def _router(item: str | APIRouter) -> APIRouter:
    if isinstance(item, APIRouter):
        return item
    router: APIRouter = importlib.import_module(item).router
    return router


def _limit_request_size(app: FastAPI, limit: int) -> None:
    """Refuse a body announced larger than the limit (413) before reading it."""
    from fastapi.responses import JSONResponse

    @app.middleware("http")
    async def body_limit(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                body = error_body("INVALID_INPUT", "Invalid Content-Length")
                return JSONResponse(body, status_code=400)
            if int(length) > limit:
                body = error_body(
                    "TOO_LARGE",
                    f"A request body is at most {limit // (1024 * 1024)} MB "
                    "(setting max_request_mb)",
                )
                return JSONResponse(body, status_code=413)
        return await call_next(request)
