"""The checks every request passes before any route sees it: the page, ``/api``, ``/v1``,
``/mcp`` and any route added later (an ASGI middleware in front of the whole app).

1. **Host** names this server: a loopback name, one of the setting ``allowed_hosts`` (a page
   that reached the server through DNS rebinding names its own host), or an IP address (a browser
   sends one only when it connected to that very address, so no name was rebound: an e-reader or
   a browser on the LAN, a port forwarded from a router or a container): else 421 (401/402 on
   KOReader's Login/Register, the statuses whose message it shows), naming what to set.
2. **Origin**, when a browser sends one, names such a name, or is the request's own host (the
   page served from one of the machine's addresses) (403). A state-changing request
   (POST, PUT, PATCH, DELETE) whose body is not JSON - a form, multipart, text/plain: what a
   browser sends to another site without asking first - must come from this very origin, or from
   no browser at all (no ``Origin``, no cross-site ``Sec-Fetch-Site``): else 403. The page's own
   uploads are same-origin; a token alone would not stop a browser while the server has no users.
3. **Credentials** of a state-changing request are checked from its headers before any of its body
   is read (401); the user is kept in the scope for the route (``deps.AUTHENTICATED_USER``).
   Routes with their own header auth are listed in ``own_auth_prefixes``.
4. **A JSON body** (or a text body, which a route may read as JSON) is parsed strictly before the
   route: a lone surrogate or nesting over 200 levels is a 422, on every route.
5. **The body** is counted while it streams, chunked or not, against its route's bound
   (``body_bound``; Starlette's ``RequestBodyLimitMiddleware`` does the counting): reading stops
   at the bound with a 413 that names the setting, and a declared ``Content-Length`` over it is
   refused before reading.
6. **HEAD** of a JSON route (``HEAD_AS_GET``) is answered as its GET, headers only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import pydantic_core
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from folio.config import MB, Settings
from folio.domain.errors import FolioError
from folio.entrypoints.api.deps import AUTHENTICATED_USER
from folio.entrypoints.api.errors import (
    BODY_BOUND_KEY,
    CLIENT_LEFT,
    error_response,
    status_for,
)
from folio.entrypoints.api.routes.kosync import SHOWN_STATUS

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# A book upload's form fields besides the file (title, author, the multipart framing).
UPLOAD_OVERHEAD = 64 * 1024
# A turn's JSON body: the message (at most 6 bytes a character, escaped) and a few fields.
TURN_OVERHEAD = 16 * 1024
# Paths of plain JSON routes, which take GET only: a HEAD is answered as a GET, headers only (the
# page's mount, which answers every other path, found no file there: 404). The catalogue answers
# HEAD itself, without reading a book's file; /mcp streams.
HEAD_AS_GET = ("/api/", "/v1/", "/metrics")
_TURN_ROUTES = re.compile(r"^/api/v1/(chat|conversations/[^/]+/messages|koreader/[^/]+)/?$")


@dataclass(frozen=True, slots=True)
class BodyBound:
    """The most a route reads of a request body, and the setting that says so."""

    limit: int
    message: str


def body_bound(settings: Settings, method: str, path: str) -> BodyBound:
    """The bound of a request's body: per route where the route has its own setting, else
    ``max_request_mb``."""
    if method == "POST" and path.rstrip("/") == "/api/v1/books":
        return BodyBound(
            settings.max_book_bytes + UPLOAD_OVERHEAD,
            f"A book is at most {settings.max_book_mb:g} MB (setting max_book_mb)",
        )
    if method == "POST" and path.rstrip("/") == "/api/v1/conversations/import":
        return BodyBound(
            settings.max_import_bytes,
            f"An import is at most {settings.max_import_mb:g} MB (setting max_import_mb)",
        )
    if method == "POST" and path.rstrip("/") == "/api/v1/highlights/import":
        return BodyBound(
            settings.max_highlights_bytes + UPLOAD_OVERHEAD,
            f"A highlights file is at most {settings.max_highlights_mb:g} MB"
            " (setting max_highlights_mb)",
        )
    if method == "POST" and _TURN_ROUTES.match(path):
        limit = 6 * settings.max_message_chars + TURN_OVERHEAD
        return BodyBound(
            limit,
            f"A turn's request body is at most {limit // 1024} KB: a message of at most "
            f"{settings.max_message_chars} characters (setting max_message_chars)",
        )
    return BodyBound(
        settings.max_request_bytes,
        f"A request body is at most {settings.max_request_bytes / MB:g} MB "
        "(setting max_request_mb)",
    )


def host_name(value: str) -> str:
    """The name of a ``Host`` header or an origin's netloc, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


class RequestGuard:
    """The ASGI middleware of the checks above (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        authenticate: Callable[[str], str],
        own_auth_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.settings = settings
        self.hosts = frozenset(settings.served_hosts)
        self.authenticate = authenticate
        self.own_auth_prefixes = own_auth_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path: str = scope["path"]
        method: str = scope["method"]
        refusal = self.refusal(method, headers)
        own_auth = self._own_auth(path)
        if refusal is None and method in STATE_CHANGING and not own_auth:
            refusal = await self._authenticate(scope, headers)
        bound = body_bound(self.settings, method, path)
        if refusal is None:
            refusal = _declared_length_refusal(headers, bound)
        if refusal is not None:
            status, code, message = refusal
            if status == 421:  # KOReader shows a message only with the status it expects
                status = SHOWN_STATUS.get(path.rstrip("/"), status)
            await error_response(path, status, code, message)(scope, receive, send)
            return
        scope[BODY_BOUND_KEY] = bound.message
        inner = self.app
        # Routes with their own credentials read their body only after checking them (and parse
        # it strictly themselves): it is not read here before they could.
        json_body = parsed_as_json(headers.get("content-type"))
        if method in STATE_CHANGING and not own_auth and json_body:
            inner = _CheckedJson(self.app, bound)
        if method == "HEAD" and path.startswith(HEAD_AS_GET):
            scope, send = {**scope, "method": "GET"}, _headers_only(send)
        await RequestBodyLimitMiddleware(inner, max_body_size=bound.limit)(scope, receive, send)

    def refusal(self, method: str, headers: Headers) -> tuple[int, str, str] | None:
        """Why the Host or Origin of a request is refused, or None."""
        host = headers.get("host", "")
        if not host_name(host):
            return (421, "MISDIRECTED", "A request names this server in its Host header")
        if not self.serves(host_name(host)):
            return (
                421,
                "MISDIRECTED",
                f"This folio server does not answer to the name {host_name(host)[:100]!r}: set"
                f" FOLIO_ALLOWED_HOSTS={host_name(host)[:100]} (setting allowed_hosts) where folio"
                f" serve runs; it answers to IP addresses and {', '.join(sorted(self.hosts))}",
            )
        origin = headers.get("origin")
        if origin is not None:
            netloc = urlsplit(origin).netloc
            if host_name(netloc) not in self.hosts and netloc.lower() != host.lower():
                why = f"Requests from the page {origin[:100]!r} are refused"
                return (403, "FORBIDDEN_ORIGIN", why)
        if method in STATE_CHANGING and not is_json(headers.get("content-type", "")):
            if origin is not None and urlsplit(origin).netloc.lower() != host.lower():
                return (
                    403,
                    "FORBIDDEN_ORIGIN",
                    "A form or text body is accepted from this server's own page only; "
                    "other clients send JSON (Content-Type: application/json)",
                )
            if origin is None and headers.get("sec-fetch-site", "") in ("cross-site", "same-site"):
                return (403, "FORBIDDEN_ORIGIN", "A cross-site form or text body is refused")
        return None

    def serves(self, name: str) -> bool:
        """Does a request's Host name this server (see the module docstring)?"""
        if name in self.hosts:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    def _own_auth(self, path: str) -> bool:
        return any(path.startswith(prefix) for prefix in self.own_auth_prefixes)

    async def _authenticate(self, scope: Scope, headers: Headers) -> tuple[int, str, str] | None:
        try:
            user = await anyio.to_thread.run_sync(
                self.authenticate, headers.get("authorization", "")
            )
        except FolioError as e:
            return status_for(e), str(e.code), e.message
        scope[AUTHENTICATED_USER] = user
        return None


def parsed_as_json(content_type: str | None) -> bool:
    """Whether a route would read a body of this type as JSON (a JSON type, text, or none)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return not media or media == "text/plain" or is_json(media)


class _CheckedJson:
    """Reads the (bounded) body, refuses JSON that no route could use - malformed Unicode (a lone
    surrogate), nesting deeper than pydantic's parser allows (200) - with 422, and replays the
    body to the app. The strict parser is pydantic's: Python's ``json`` accepts lone surrogates
    (they fail later, when encoded) and raises ``RecursionError`` on deep nesting."""

    def __init__(self, app: ASGIApp, bound: BodyBound) -> None:
        self.app = app
        self.bound = bound

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chunks: list[bytes] = []
        try:
            while True:
                message = await receive()
                if message["type"] != "http.request":  # the client left: its doing, not a 500
                    why = "The client went away"
                    left = error_response(scope["path"], CLIENT_LEFT, "CLIENT_CLOSED_REQUEST", why)
                    await left(scope, receive, send)
                    return
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    break
        except HTTPException as e:  # the bound, counted while the body streamed
            if e.status_code != 413:
                raise
            await error_response(scope["path"], 413, "TOO_LARGE", self.bound.message)(
                scope, receive, send
            )
            return
        body = b"".join(chunks)
        del chunks
        if body.strip():
            try:
                pydantic_core.from_json(body)
            except ValueError as e:
                why = f"The body is not valid JSON: {e}"
                await error_response(scope["path"], 422, "INVALID_INPUT", why)(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _headers_only(send: Send) -> Send:
    """``send`` without the response's body (a HEAD answered by a GET route)."""

    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return headers_only


def _declared_length_refusal(headers: Headers, bound: BodyBound) -> tuple[int, str, str] | None:
    length = headers.get("content-length")
    if length is None:
        return None
    if not length.strip().isdigit():
        return 400, "INVALID_INPUT", "Invalid Content-Length"
    if int(length) > bound.limit:
        return 413, "TOO_LARGE", bound.message
    return None
