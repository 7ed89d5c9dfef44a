"""Every HTTP request gets a request id: the client's ``X-Request-ID`` when it is a plausible id
(1-128 characters of letters, digits and ``._:-``), else a new one. The response carries it in
``X-Request-ID``, every log line written while the request runs names it (``request_id``), and
one line (logger ``folio.http``) records the request: method, path (never the query string),
status and duration.

A plain ASGI middleware, so it wraps streamed responses whole and holds for every route, mounted
app (MCP, the web page) and other middleware inside it.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from folio.adapters.observability import context

HEADER = "X-Request-ID"
_VALID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
log = logging.getLogger("folio.http")


def request_id_of(incoming: str | None) -> str:
    """The client's id when valid, else a new one (an invalid one is not echoed into logs)."""
    if incoming is not None and _VALID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), None
        )
        rid = request_id_of(incoming)
        token = context.request_id.set(rid)
        started = time.perf_counter()
        status = [500]

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                MutableHeaders(scope=message)[HEADER] = rid
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 2)
            log.info(
                "%s %s %s %.1fms",
                scope["method"],
                scope["path"],
                status[0],
                duration_ms,
                extra={
                    "event": "request",
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status[0],
                    "duration_ms": duration_ms,
                },
            )
            context.request_id.reset(token)
