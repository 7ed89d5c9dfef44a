"""The HTTP API's application factory.

``create_app(container)`` builds the FastAPI app on the same composition root as the CLI
(``bootstrap.Container``). Extending it (the web page, the OpenAI-compatible routes, MCP):

- add a module with an ``APIRouter`` named ``router`` and list it in ``ROUTERS`` (or pass extra
  ``routers=`` to ``create_app``: module names or routers, included after ``ROUTERS``);
- every request passes ``guard.RequestGuard`` first (Host and Origin allow-lists, credentials of
  a state-changing request before its body, the body bounded while it streams, per route);
- routes declare ``container: ContainerDep, user: UserDep`` from ``folio.entrypoints.api.deps``
  and raise folio errors, which ``errors.py`` turns into the one JSON error body;
- the MCP server (``folio.entrypoints.mcp``) is mounted at ``/mcp/`` behind the same tokens, and
  built on its first request (``mcp_mount.py``: the MCP SDK is slow to import);
- a static page is mounted at ``/`` from ``folio/entrypoints/web/static`` when that folder has an
  ``index.html`` (or pass ``static_dir=``); ``/api``, ``/docs`` and ``/openapi.json`` keep working;
- every response carries an ``X-Request-ID`` that the request's log lines name
  (``request_id.py``); an app that builds its own container counts turns, tool and model calls and
  imports for ``/metrics`` (Prometheus; pass a container with a ``PrometheusTelemetry`` to get
  them with your own).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from folio.bootstrap import Container
from folio.entrypoints.api import errors
from folio.entrypoints.api.deps import TurnSlots
from folio.entrypoints.api.guard import RequestGuard
from folio.entrypoints.api.routes.koreader import KOREADER_AUTH_PREFIXES
from folio.entrypoints.api.routes.kosync import KOSYNC_AUTH_PREFIXES

# Modules with an ``APIRouter`` called ``router``, included in this order.
ROUTERS: tuple[str, ...] = (
    "folio.entrypoints.api.routes.meta",
    "folio.entrypoints.api.routes.books",
    "folio.entrypoints.api.routes.conversations",
    "folio.entrypoints.api.routes.chat",
    "folio.entrypoints.api.routes.openai_compat",
    "folio.entrypoints.api.routes.metrics",
    "folio.entrypoints.api.routes.kosync",
    "folio.entrypoints.api.routes.koreader",
    "folio.entrypoints.api.routes.opds",
    "folio.entrypoints.api.routes.highlights",
)

MCP_PATH = "/mcp"
WEB_STATIC = Path(__file__).resolve().parent.parent / "web" / "static"


def create_app(
    container: Container | None = None,
    *,
    routers: Sequence[str | APIRouter] | None = None,
    static_dir: Path | None = None,
    own_auth_prefixes: Sequence[str] = (),
) -> FastAPI:
    """The folio HTTP API on ``container`` (default: one built from the settings).
    ``own_auth_prefixes``: paths whose routes check their own header credentials (not a bearer
    token); the guard still bounds their bodies and checks Host and Origin."""
    from contextlib import asynccontextmanager

    from folio import __version__
    from folio.adapters.observability.metrics import PrometheusTelemetry
    from folio.entrypoints.api.http_metrics import HttpMetricsMiddleware
    from folio.entrypoints.api.mcp_mount import McpOnFirstRequest
    from folio.entrypoints.api.request_id import RequestIdMiddleware

    owned = container is None  # a container the app built is closed with it
    container = container or Container(telemetry=PrometheusTelemetry(version=__version__))
    mcp_app = McpOnFirstRequest(container, version=__version__)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await mcp_app.close()
            if owned:
                container.close()
                if isinstance(container.telemetry, PrometheusTelemetry):
                    container.telemetry.close()

    app = FastAPI(
        title="folio",
        version=__version__,
        summary="Chat with your books: page citations, no spoilers.",
        docs_url="/docs",
        lifespan=lifespan,
    )
    app.state.container = container
    app.state.turn_slots = TurnSlots(container.settings.max_concurrent_turns)
    errors.install(app)
    settings = container.settings
    if settings.require_tokens or container.users.any():
        container.users.require_tokens()  # fixed at start: removing the last user never opens it
    app.add_middleware(
        RequestGuard,
        settings=settings,
        authenticate=container.users.authenticate_header,
        own_auth_prefixes=(*KOSYNC_AUTH_PREFIXES, *KOREADER_AUTH_PREFIXES, *own_auth_prefixes),
    )
    for item in (*ROUTERS, *(routers or ())):
        app.include_router(_router(item))
    app.mount(MCP_PATH, mcp_app, name="mcp")  # MCP over streamable HTTP, the API's tokens
    static = static_dir or WEB_STATIC
    if (static / "index.html").is_file():
        app.mount("/", StaticFiles(directory=static, html=True), name="web")
    if isinstance(container.telemetry, PrometheusTelemetry):  # requests by route and status
        app.add_middleware(HttpMetricsMiddleware, telemetry=container.telemetry)
    app.add_middleware(RequestIdMiddleware)  # added last: outermost, around every other one
    return app


def _router(item: str | APIRouter) -> APIRouter:
    if isinstance(item, APIRouter):
        return item
    router: APIRouter = importlib.import_module(item).router
    return router
