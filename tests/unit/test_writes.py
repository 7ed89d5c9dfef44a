"""``app.writes.write``: the one retry of refused writes, on the in-memory store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.app import writes
from folio.app.writes import write
from folio.domain.conversations import Conversation
from folio.domain.errors import (
    ConversationError,
    ConversationErrorCode,
    StorageError,
    StorageErrorCode,
)
from folio.domain.ports import ConversationUnitOfWork

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
BUSY = StorageError("busy", code=StorageErrorCode.BUSY)


class Refusing:
    """Work that the store refuses with ``errors`` first, then stores a conversation."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self, uow: ConversationUnitOfWork) -> str:
        self.calls += 1
        uow.conversations.save(Conversation(f"c{self.calls}", "b1", "T", T0, T0))
        if self.errors:
            raise self.errors.pop(0)
        uow.commit()
        return f"c{self.calls}"


def test_a_busy_store_is_tried_again_from_the_start_and_only_the_last_attempt_is_stored():
    store, pauses = InMemoryConversationStore(), []
    work = Refusing(BUSY, BUSY)

    assert write(store.unit_of_work, work, sleep=pauses.append) == "c3"

    assert work.calls == 3 and len(pauses) == 2 and pauses[1] > 0
    with store.unit_of_work(read_only=True) as uow:
        assert [c.id for c in uow.conversations.list_all()] == ["c3"]


def test_other_refusals_are_raised_at_once_and_a_conflict_only_when_the_caller_says_so():
    store, pauses = InMemoryConversationStore(), []
    missing = ConversationError("gone", code=ConversationErrorCode.NOT_FOUND)
    conflict = ConversationError("taken", code=ConversationErrorCode.CONFLICT)

    with pytest.raises(ConversationError) as e:
        write(store.unit_of_work, Refusing(missing), sleep=pauses.append)
    assert e.value.code is ConversationErrorCode.NOT_FOUND
    with pytest.raises(ConversationError):
        write(store.unit_of_work, Refusing(conflict), sleep=pauses.append)
    assert pauses == []

    again = ConversationErrorCode.CONFLICT
    assert write(store.unit_of_work, Refusing(conflict), also_retry={again}, sleep=pauses.append)
    assert len(pauses) == 1


def test_a_code_of_another_kind_with_the_same_value_is_not_retried():
    """StorageErrorCode.CONFLICT == ConversationErrorCode.CONFLICT as strings, not as codes."""
    store, pauses = InMemoryConversationStore(), []
    copied = StorageError("already there", code=StorageErrorCode.CONFLICT)
    with pytest.raises(StorageError):
        write(store.unit_of_work, Refusing(copied), also_retry={ConversationErrorCode.CONFLICT},
              sleep=pauses.append)  # fmt: skip
    assert pauses == []


def test_a_refusal_that_lasts_is_reported_after_the_last_attempt(monkeypatch):
    store, pauses = InMemoryConversationStore(), []
    work = Refusing(*[BUSY] * 10)
    with pytest.raises(StorageError):
        write(store.unit_of_work, work, sleep=pauses.append, attempts=4)
    assert work.calls == 4 and len(pauses) == 3

    # A refusal that came after a long wait is a lock held elsewhere: tried once more only.
    monkeypatch.setattr(writes, "LONG_WAIT_S", 0.0)
    work = Refusing(*[BUSY] * 10)
    with pytest.raises(StorageError):
        write(store.unit_of_work, work, sleep=pauses.append)
    assert work.calls == 2
