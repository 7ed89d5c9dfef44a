"""Dependencies of the routes, as ``Annotated`` aliases (the full-stack FastAPI template's style):
a route declares ``container: ContainerDep, user: UserDep`` and gets them.

- ``ContainerDep``: the process's ``bootstrap.Container`` (the CLI's composition root).
- ``ScopeDep``: the caller's use cases (``library``, ``conversations``, ``books``, ``chat()``...),
  built on repositories that hold only the caller's books and conversations.
- ``UserDep``: who is calling. A server started without users serves the local single user
  (``serve`` then binds loopback only) until a user is added; a server that has seen users, or
  runs with ``require_tokens``, requires a bearer token for good (removing the last user never
  opens it).
- ``BookIdDep``, ``ConversationIdDep``: the full id of the caller's book or conversation that the
  path's ``{book_id}`` / ``{conversation_id}`` names by its id or a unique prefix (the short ids
  the CLI prints): 404 when none matches, 409 when several do. Ids in bodies and queries go
  through the same ``get_book_id`` / ``get_conversation_id``.
- ``TurnSlotsDep``: the per-user count of concurrent turns (``max_concurrent_turns``, 429 over it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from folio.bootstrap import Container, UserScope
from folio.entrypoints.api.errors import ApiError


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated user of a request."""

    user_id: str
    name: str


def get_container(request: Request) -> Container:
    container: Container = request.app.state.container
    return container


ContainerDep = Annotated[Container, Depends(get_container)]


# The request scope's key for the user the guard authenticated before reading the body.
AUTHENTICATED_USER = "folio.user"


def get_caller(request: Request, container: ContainerDep) -> Caller:
    """The local single user while the server runs without users; else the user of the bearer
    token (401 without a valid one). A state-changing request was authenticated by the guard
    already, before its body was read."""
    user_id = request.scope.get(AUTHENTICATED_USER)
    if not isinstance(user_id, str):
        user_id = container.users.authenticate_header(request.headers.get("authorization", ""))
    return Caller(user_id, user_id)


UserDep = Annotated[Caller, Depends(get_caller)]


def get_scope(caller: UserDep, container: ContainerDep) -> UserScope:
    return container.for_user(caller.user_id)


# The caller's use cases: only their books and conversations exist for them.
ScopeDep = Annotated[UserScope, Depends(get_scope)]


def get_book_id(book_id: str, scope: ScopeDep) -> str:
    """The full id of the caller's book that ``{book_id}`` names: the id or a unique prefix of
    it, as ``folio books`` prints it (404 for none, 409 for several)."""
    return scope.library.full_id(book_id)


def get_conversation_id(conversation_id: str, scope: ScopeDep) -> str:
    """The full id of the caller's conversation that ``{conversation_id}`` names: the id or a
    unique prefix of it (404 for none, 409 for several)."""
    return scope.conversations.resolve(conversation_id).id


# A path's ``{book_id}`` / ``{conversation_id}`` as a full id of the caller's.
BookIdDep = Annotated[str, Depends(get_book_id)]
ConversationIdDep = Annotated[str, Depends(get_conversation_id)]


class TurnSlots:
    """Counts the turns each user runs at once; a turn over the limit is refused (429)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._running: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, user_id: str) -> None:
        with self._lock:
            running = self._running.get(user_id, 0)
            if running >= self.limit:
                raise ApiError(
                    429,
                    "TOO_MANY_TURNS",
                    f"At most {self.limit} turns may run at once per user "
                    "(setting max_concurrent_turns); wait for one to finish",
                )
            self._running[user_id] = running + 1

    def release(self, user_id: str) -> None:
        with self._lock:
            self._running[user_id] = max(0, self._running.get(user_id, 1) - 1)


def get_turn_slots(request: Request) -> TurnSlots:
    slots: TurnSlots = request.app.state.turn_slots
    return slots


TurnSlotsDep = Annotated[TurnSlots, Depends(get_turn_slots)]
