"""The only place where errors become HTTP responses: one JSON body for every failure,
``{"error": {"code": ..., "message": ...}}``, and the domain error -> status mapping. Under the
OpenAI-compatible prefix ``/v1/`` the same failures take OpenAI's error shape
(``{"error": {"message", "type", "param", "code"}}``), which OpenAI clients turn into their own
exceptions.

Invariant: no request can produce a traceback or an HTML page; an unexpected exception is a 500
with the same body (and is logged), never the exception's text.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from folio.domain.errors import (
    BookError,
    BookErrorCode,
    ConfigError,
    ConversationError,
    ConversationErrorCode,
    FolioError,
    IngestError,
    IngestErrorCode,
    LLMError,
    LLMErrorCode,
    StorageError,
)
from folio.domain.users import UserError, UserErrorCode

log = logging.getLogger("folio.api")
CLIENT_LEFT = 499  # nginx's status for a request its client closed before the answer


class ApiError(Exception):
    """An error of the HTTP layer itself (auth, limits) with its status and code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


_LLM_STATUS = {
    LLMErrorCode.AUTH: 502,
    LLMErrorCode.BAD_RESPONSE: 502,
    LLMErrorCode.UNSUPPORTED_FEATURE: 502,
    LLMErrorCode.RATE_LIMITED: 503,
    LLMErrorCode.UNAVAILABLE: 503,
    LLMErrorCode.TIMEOUT: 504,
}
_INGEST_STATUS = {
    IngestErrorCode.UNSUPPORTED: 415,
    IngestErrorCode.CORRUPT: 422,
    IngestErrorCode.EMPTY: 422,
    IngestErrorCode.DUPLICATE: 409,
    IngestErrorCode.NOT_FOUND: 404,
    IngestErrorCode.TOO_LARGE: 413,
    IngestErrorCode.INVALID_POSITION: 422,
}

_CONVERSATION_409 = (ConversationErrorCode.CONFLICT, ConversationErrorCode.AMBIGUOUS)


def status_for(error: FolioError) -> int:
    """The HTTP status of a domain error (the one mapping)."""
    if isinstance(error, LLMError):
        return _LLM_STATUS.get(error.code, 502)
    if isinstance(error, IngestError):
        return _INGEST_STATUS.get(error.code, 422)
    if isinstance(error, UserError) and error.code is UserErrorCode.UNAUTHORIZED:
        return 401
    if isinstance(error, UserError) and error.code is UserErrorCode.DUPLICATE:
        return 409
    if isinstance(error, (ConfigError, StorageError)):
        return 503
    if error.is_not_found:
        return 404
    if isinstance(error, ConversationError) and error.code in _CONVERSATION_409:
        return 409
    if isinstance(error, BookError) and error.code is BookErrorCode.AMBIGUOUS:
        return 409
    return 400


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"code": str(code), "message": " ".join(message.split())}
    body.update({k: v for k, v in details.items() if v is not None})
    return {"error": body}


OPENAI_PREFIX = "/v1/"
# The request scope's key for the message naming the body bound of its route (set by the guard).
BODY_BOUND_KEY = "folio.body_bound"


def openai_error_body(status: int, code: str, message: str) -> dict[str, Any]:
    """An error as OpenAI's API writes it."""
    if status == 401:
        kind = "authentication_error"
    elif status == 429:
        kind = "rate_limit_error"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = "invalid_request_error"
    text = " ".join(message.split())
    return {"error": {"message": text, "type": kind, "param": None, "code": str(code)}}


# KOReader's progress sync routes (routes/kosync.py) answer in that protocol's error shape.
KOSYNC_PREFIXES = ("/users/create", "/users/auth", "/syncs/")


def kosync_error(status: int, message: str) -> JSONResponse:
    """A failure before a progress sync route ran (the request guard's) in the protocol's shape,
    ``{"code", "message"}``, with KOReader's server's codes: a body that is not JSON is 400/103,
    a login refused 401/2001, anything else invalid 2003 with its own status."""
    if status == 422:
        return JSONResponse({"code": 103, "message": "Could not parse JSON in body."}, 400)
    return JSONResponse({"code": 2001 if status == 401 else 2003, "message": message}, status)


def error_response(path: str, status: int, code: str, message: str, **details: Any) -> JSONResponse:
    """The error as the route at ``path`` writes it (OpenAI's shape under ``/v1/``, KOReader's
    under its progress sync routes)."""
    if path.startswith(KOSYNC_PREFIXES):
        return kosync_error(status, message)
    if path.startswith(OPENAI_PREFIX):
        response = JSONResponse(openai_error_body(status, code, message), status_code=status)
    else:
        response = JSONResponse(error_body(code, message, **details), status_code=status)
    if status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def _response(
    request: Request, status: int, code: str, message: str, **details: Any
) -> JSONResponse:
    return error_response(request.url.path, status, code, message, **details)


def _status_code_name(status: int) -> str:
    try:
        return HTTPStatus(status).name
    except ValueError:
        return "ERROR"


def install(app: FastAPI) -> None:
    """Register the handlers that give every failure the one error body."""

    @app.exception_handler(FolioError)
    async def folio_error(request: Request, e: FolioError) -> JSONResponse:
        return _response(request, status_for(e), e.code, e.message)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, e: ApiError) -> JSONResponse:
        return _response(request, e.status, e.code, e.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        problems = []
        for item in e.errors()[:5]:
            where = ".".join(str(x) for x in item.get("loc", ()) if x != "body") or "request"
            problems.append(f"{where}: {item.get('msg', 'invalid')}")
        message = "Invalid request: " + "; ".join(problems)
        return _response(request, 422, "INVALID_INPUT", message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        message = e.detail if isinstance(e.detail, str) else _status_code_name(e.status_code)
        if e.status_code == 413 and BODY_BOUND_KEY in request.scope:
            return _response(request, 413, "TOO_LARGE", request.scope[BODY_BOUND_KEY])
        response = _response(request, e.status_code, _status_code_name(e.status_code), message)
        if e.headers:
            response.headers.update(e.headers)
        return response

    @app.exception_handler(ClientDisconnect)
    async def client_left(request: Request, e: ClientDisconnect) -> JSONResponse:
        # The client went away while sending its body (a route reading it itself: progress
        # sync, the KOReader routes): its doing, not a bug; 499 as proxies count it, sent to no one.
        log.info("Client left during the body of %s %s", request.method, request.url.path)
        return _response(request, CLIENT_LEFT, "CLIENT_CLOSED_REQUEST", "The client went away")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, e: Exception) -> JSONResponse:
        log.exception("Unexpected error on %s %s", request.method, request.url.path)
        message = "Unexpected server error (this is a bug in folio)"
        return _response(request, 500, "INTERNAL", message)
