"""Counts every HTTP request for ``/metrics`` by method, route TEMPLATE and status, and times it
(arrival to the response's last byte, a stream's included).

The template is the route that answered (``/api/v1/books/{book_id}``; a mounted app as
``/mcp/{path}``, the web page as ``/{path}``). A request refused before routing (the guard's 401,
413) is counted under the API path template its path fits, else ``<unmatched>``; an unusual method
is ``OTHER``: no client can grow the number of series. A plain ASGI middleware: it sees every
response, streamed or not, and an exception as the 500 it becomes.
"""

from __future__ import annotations

import re
import time
from typing import Any

from starlette.routing import Mount, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from folio.adapters.observability.metrics import PrometheusTelemetry

UNMATCHED = "<unmatched>"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class HttpMetricsMiddleware:
    def __init__(self, app: ASGIApp, *, telemetry: PrometheusTelemetry) -> None:
        self.app = app
        self.telemetry = telemetry
        self._paths: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"] if scope["method"] in METHODS else "OTHER"
        path = scope["path"]
        started = time.perf_counter()
        status = [500]  # what an exception before the response becomes

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            elapsed = time.perf_counter() - started
            route = answered_by(scope) or self._fitting(scope.get("app"), path)
            self.telemetry.http_request(method, route, status[0], elapsed)

    def _fitting(self, app: Any, path: str) -> str:
        """The template of the app's paths that ``path`` fits (literal paths first)."""
        if self._paths is None:
            self._paths = _path_templates(app)
        return next((t for pattern, t in self._paths if pattern.fullmatch(path)), UNMATCHED)


def answered_by(scope: Scope) -> str | None:
    """The template of the route that answered the request in ``scope``, if one did: the app's
    router records it in the scope (``route``; a mount: ``app_root_path``)."""
    path = getattr(scope.get("route"), "path", None)
    if isinstance(path, str) and path:
        return path
    if "app_root_path" in scope:  # a mounted app: its prefix, then whatever path it serves
        prefix = scope.get("root_path", "")[len(scope["app_root_path"]) :]
        return f"{prefix}/{{path}}"
    return None


def _path_templates(app: Any) -> list[tuple[re.Pattern[str], str]]:
    openapi = getattr(app, "openapi", None)
    paths = list(openapi()["paths"]) if callable(openapi) else []
    paths.sort(key=lambda t: t.count("{"))  # stable: a literal path before a template it fits
    fitted = [(compile_path(t)[0], t) for t in paths]
    for route in getattr(app, "routes", ()):
        if isinstance(route, Mount):  # a mounted app serves every path under its prefix
            fitted.append(
                (compile_path(f"{route.path}/{{path:path}}")[0], f"{route.path}/{{path}}")
            )
    return fitted
