"""Writes to the conversation store: the one place a refused write is tried again.

``write(uow, work)`` runs ``work`` in a writing unit of work (which commits inside ``work``). A
writing unit of work takes the store's write lock on entry where the store has one (SQLite's
``BEGIN IMMEDIATE``, waiting up to the busy timeout), so two writers queue instead of one failing
half-way. What can still be refused is retried here, the whole ``work`` from a fresh unit of
work, never a part of it: ``BUSY`` (SQLite: the lock was held past the whole busy timeout;
PostgreSQL: a deadlock or serialization failure rolled the transaction back) and the codes a
caller adds (a chat turn adds ``CONFLICT``: another writer took its turn number). A ``BUSY`` that
came only after a long wait is a long writer elsewhere: it is retried once, then reported.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection
from enum import StrEnum
from typing import TypeVar

from folio.domain.errors import ConversationError, StorageError, StorageErrorCode
from folio.domain.ports import ConversationUnitOfWork, UnitOfWorkFactory

T = TypeVar("T")

WRITE_ATTEMPTS = 20
LONG_WAIT_S = 1.0  # a refusal after this long came from a lock held elsewhere, not a race


def write(
    uow: UnitOfWorkFactory,
    work: Callable[[ConversationUnitOfWork], T],
    *,
    also_retry: Collection[StrEnum] = (),
    sleep: Callable[[float], None] = time.sleep,
    attempts: int = WRITE_ATTEMPTS,
) -> T:
    """``work(unit)`` in a writing unit of work, again from the start when the store refused it
    for a reason that passes (``BUSY``, and ``also_retry``); ``sleep`` waits between attempts,
    a little longer each time, with jitter so that two refused writers do not meet again."""
    long_waits = 0
    for attempt in range(attempts):
        tried_at = time.monotonic()
        try:
            with uow() as unit:
                return work(unit)
        except (ConversationError, StorageError) as e:
            # by identity: two codes of different enums may share a value ("CONFLICT")
            if e.code is not StorageErrorCode.BUSY and not any(e.code is c for c in also_retry):
                raise
            if attempt == attempts - 1:
                raise
            waited = time.monotonic() - tried_at >= LONG_WAIT_S
            if e.code is StorageErrorCode.BUSY and waited and (long_waits := long_waits + 1) > 1:
                raise
            sleep(0.02 * (attempt + 1) + random.random() * 0.05)
    raise AssertionError("unreachable: the last attempt returns or raises")
