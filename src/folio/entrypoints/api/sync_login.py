"""Progress sync's login, checked one way on every route that takes it: progress sync itself
(``x-auth-user`` / ``x-auth-key``), the OPDS catalogue (HTTP Basic) and the KOReader routes.

Invariant: a login or client address over its failed-login limits is refused before any key is
checked, and a key check (scrypt, tens of ms) runs on at most ``KEY_CHECKS_AT_ONCE`` worker
threads at a time, so that a flood of logins waits without holding the threads every other
request (the health check included) needs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
from fastapi import HTTPException, Request

from folio.bootstrap import Container
from folio.domain.sync import SyncError

T = TypeVar("T")
KEY_CHECKS_AT_ONCE = 2  # requests checking a sync key in threads at once; the others await
_key_limiter: list[anyio.CapacityLimiter] = []  # one per process, made in its event loop


async def checking_key(check: Callable[..., T], *args: Any) -> T:
    """``check(*args)`` (it verifies a sync key) in a worker thread, at most
    ``KEY_CHECKS_AT_ONCE`` at a time."""
    if not _key_limiter:
        _key_limiter.append(anyio.CapacityLimiter(KEY_CHECKS_AT_ONCE))
    return await anyio.to_thread.run_sync(partial(check, *args), limiter=_key_limiter[0])


def client_address(request: Request) -> str | None:
    """The client's address (behind a proxy on this machine, the one it forwards: uvicorn
    trusts X-Forwarded-For from 127.0.0.1)."""
    return request.client.host if request.client else None


async def sync_user(
    container: Container, username: str | None, key: str | None, address: str | None
) -> str:
    """The user id of the sync login ``username`` with ``key`` (the MD5 of its password), counted
    against the failed-login limits of the login and of ``address``: ``SyncError(UNAUTHORIZED)``
    for a wrong login, ``SyncError(RATE_LIMITED)`` over the limits, before any key check."""
    sync = container.progress_sync
    sync.refuse_if_limited(username, address)
    user_id: str = await checking_key(partial(sync.authenticate, address=address), username, key)
    return user_id


async def header_user(request: Request, container: Container) -> str:
    """The user id of the request's sync login headers (``x-auth-user``, ``x-auth-key``), as
    ``sync_user`` checks them."""
    headers = request.headers
    return await sync_user(
        container, headers.get("x-auth-user"), headers.get("x-auth-key"), client_address(request)
    )


def too_many_failures(error: SyncError) -> HTTPException:
    """A 429 with ``Retry-After`` for ``SyncError(RATE_LIMITED)``, on a route that answers in
    folio's own error body (progress sync's own routes answer in the protocol's)."""
    wait = str(error.details.get("retry_after", 60))
    return HTTPException(429, error.message, headers={"Retry-After": wait})
