"""KOReader's progress sync protocol ("kosync"), so that KOReader and Readest keep folio's reading
position: Settings > Progress sync > Custom sync server > ``http://HOST:8000``.

The routes, bodies, statuses and error codes are those of KOReader's own server
(koreader/koreader-sync-server: app/controllers/1/syncs_controller.lua, config/errors.lua and
its framework's 103/104 for a body that is not a JSON object), which the plugin
(plugins/kosync.koplugin, api.json) is written against. A device authenticates with the headers
``x-auth-user`` (the sync login) and ``x-auth-key`` (the MD5 of the password), not with folio's
bearer tokens; errors use the protocol's ``{"code", "message"}`` body, not folio's.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pydantic_core
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from folio.domain.sync import PushedProgress, SyncError, SyncErrorCode
from folio.entrypoints.api.deps import ContainerDep
from folio.entrypoints.api.errors import KOSYNC_PREFIXES
from folio.entrypoints.api.schemas import (
    NoProgress,
    SyncAuthorized,
    SyncErrorBody,
    SyncHealth,
    SyncProgress,
    SyncPushed,
    SyncUser,
    errors_for,
)
from folio.entrypoints.api.sync_login import checking_key, client_address, header_user

router = APIRouter(tags=["progress sync (KOReader)"])
# KOReader authenticates with x-auth-user / x-auth-key, not a bearer token: the request guard
# leaves these routes' credentials to them (it still checks Host, Origin and the body's size).
KOSYNC_AUTH_PREFIXES = KOSYNC_PREFIXES

MAX_BODY_BYTES = 16 * 1024
MEDIA_TYPE = "application/json"
_ERRORS = {  # code -> (status, protocol code)
    SyncErrorCode.UNAUTHORIZED: (401, 2001),
    SyncErrorCode.USER_EXISTS: (402, 2002),
    SyncErrorCode.INVALID_INPUT: (403, 2003),
    SyncErrorCode.DOCUMENT_MISSING: (403, 2004),
    SyncErrorCode.REGISTRATION_DISABLED: (402, 2005),
    SyncErrorCode.RATE_LIMITED: (429, 2001),
}
# KOReader's Login and Register dialogs show a server's ``message`` only with a status their
# api.json expects (401 for /users/auth, 402 for /users/create); any other status raises in its
# HTTP client and the dialog says "Unknown server error". So too many failed logins answer there
# with that status (and Retry-After); a push or pull gets 429, which KOReader queues and retries.
SHOWN_STATUS = {"/users/auth": 401, "/users/create": 402}


def _errors(*statuses: int) -> dict[int | str, Any]:
    """The protocol's error body for ``statuses``, and for any other client error: the protocol
    has no 422 (a request the framework finds invalid is its 400, code 103)."""
    any_other = {"model": SyncErrorBody, "description": "The protocol's error body"}
    return {**errors_for(*statuses, body=SyncErrorBody), "4XX": any_other}


class _BadBody(Exception):
    def __init__(self, code: int, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _reply(status: int, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE)


def _error(error: SyncError | _BadBody, route: str = "") -> JSONResponse:
    if isinstance(error, _BadBody):
        return _reply(error.status, {"code": error.code, "message": error.message})
    status, code = _ERRORS[SyncErrorCode(error.code)]
    if error.code is not SyncErrorCode.RATE_LIMITED:
        return _reply(status, {"code": code, "message": error.message})
    response = _reply(SHOWN_STATUS.get(route, status), {"code": code, "message": error.message})
    response.headers["Retry-After"] = str(error.details.get("retry_after", 60))
    return response


async def _json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object, at most ``MAX_BODY_BYTES`` (413 past it, checked as it
    streams in)."""
    data = bytearray()
    async for chunk in request.stream():
        data.extend(chunk)
        if len(data) > MAX_BODY_BYTES:
            raise _BadBody(2003, f"A sync request body is at most {MAX_BODY_BYTES} bytes", 413)
    try:  # pydantic's strict parser: no lone surrogates, no nesting past 200 levels
        body = pydantic_core.from_json(bytes(data) or b"null")
    except ValueError as e:
        raise _BadBody(103, "Could not parse JSON in body.") from e
    if not isinstance(body, dict):
        raise _BadBody(104, "Body should be a JSON hash.")
    return body


@router.post(
    "/users/create",
    status_code=201,
    response_model=SyncUser,
    responses=_errors(400, 401, 402, 413),
)
async def create_user(request: Request, container: ContainerDep) -> JSONResponse:
    """KOReader's Register: logins are made on the server (``folio users sync-password``), so
    this confirms an existing login with its own password (201) and refuses anything else
    (402)."""
    sync = container.progress_sync
    address = client_address(request)
    try:
        body = await _json_object(request)
        sync.refuse_if_limited(None, address)
        name = await checking_key(partial(sync.register, address=address), body)
    except (SyncError, _BadBody) as e:
        return _error(e, "/users/create")
    return _reply(201, {"username": name})


@router.get("/users/auth", response_model=SyncAuthorized, responses=_errors(401))
async def authorize(request: Request, container: ContainerDep) -> JSONResponse:
    try:
        await header_user(request, container)
    except SyncError as e:
        return _error(e, "/users/auth")
    return _reply(200, {"authorized": "OK"})


@router.put(
    "/syncs/progress",
    response_model=SyncPushed,
    responses=_errors(400, 401, 413, 429),
)
async def update_progress(request: Request, container: ContainerDep) -> JSONResponse:
    """A device's position: kept, and applied to the user's books it names (its file, else its
    EPUB structure digest, else its title and authors: ``ProgressSync.push``). 200 whether or not
    a book matched: KOReader's client (KOSyncClient:update_progress) counts only 200 as pushed;
    202, though its api.json expects it, would show "Something went wrong" and queue the push
    again."""
    sync = container.progress_sync
    try:
        user_id = await header_user(request, container)
        body = await _json_object(request)
        pushed = await run_in_threadpool(sync.push, user_id, body)
    except (SyncError, _BadBody) as e:
        return _error(e)
    return _reply(200, {"document": pushed.document, "timestamp": _timestamp(pushed)})


@router.get(
    "/syncs/progress/{document}",
    response_model=SyncProgress | NoProgress,
    responses=_errors(401, 429),
)
async def get_progress(document: str, request: Request, container: ContainerDep) -> JSONResponse:
    """The last position pushed for ``document``; ``{}`` when there is none (the plugin then
    says "No progress found for this document")."""
    sync = container.progress_sync
    try:
        user_id = await header_user(request, container)
        pushed = await run_in_threadpool(sync.pull, user_id, document)
    except SyncError as e:
        return _error(e)
    if pushed is None:
        return _reply(200, {})
    return _reply(
        200,
        {
            "document": pushed.document,
            "percentage": pushed.percentage,
            "progress": pushed.progress,
            "device": pushed.device,
            "device_id": pushed.device_id,
            "timestamp": _timestamp(pushed),
        },
    )


@router.get("/healthcheck", response_model=SyncHealth, responses=errors_for())
def healthcheck() -> dict[str, str]:
    return {"state": "OK"}


def _timestamp(pushed: PushedProgress) -> int:
    return int(pushed.pushed_at.timestamp())
