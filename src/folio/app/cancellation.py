"""Stopping a turn whose caller went away: the turn is stored only if its caller still waits.

``commit_only_if(factory, still_wanted, still_there)`` wraps a unit-of-work factory: entering a
unit of work first asks ``still_wanted()`` (which may wait, e.g. until what the caller was sent
has been delivered; no lock is held yet), and ``commit()`` asks the cheap ``still_there()``; either
false raises ``TurnCancelled`` and nothing is written. A streamed HTTP turn also checks at every
event it sends, so a client that disconnects at any point before the end stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

from folio.domain.ports import ConversationUnitOfWork, UnitOfWorkFactory


class TurnCancelled(BaseException):
    """The turn's caller is gone: stop and store nothing. A ``BaseException``, so that no
    ``except Exception`` on the way (a tool, a strategy) mistakes it for a failure to handle."""


class _CommitIf:
    def __init__(
        self,
        inner: ConversationUnitOfWork,
        still_wanted: Callable[[], bool],
        still_there: Callable[[], bool],
    ) -> None:
        self._inner = inner
        self._still_wanted = still_wanted
        self._still_there = still_there

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        if not self._still_wanted():
            raise TurnCancelled
        self._inner.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._inner.__exit__(*exc_info)

    def commit(self) -> None:
        if not self._still_there():
            self._inner.rollback()
            raise TurnCancelled
        self._inner.commit()

    def rollback(self) -> None:
        self._inner.rollback()


def commit_only_if(
    inner: UnitOfWorkFactory,
    still_wanted: Callable[[], bool],
    still_there: Callable[[], bool] | None = None,
) -> UnitOfWorkFactory:
    def factory(*, read_only: bool = False) -> ConversationUnitOfWork:
        return _CommitIf(inner(read_only=read_only), still_wanted, still_there or still_wanted)

    return factory
