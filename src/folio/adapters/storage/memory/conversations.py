"""In-memory conversation storage: the fake of the conversation ports, for tests and demos.

It keeps the same contract as the SQLite and JSON-file stores (same contract tests): a unit of
work stages writes and publishes them only on ``commit()``; turn numbers and (turn, seq) message
numbers are unique per conversation (``CONFLICT``); saving messages moves the conversation's
``updated_at`` forward to the newest message.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Self

from folio.domain.conversations import ChatMessage, Conversation, Turn, validate_title
from folio.domain.errors import ConversationError, ConversationErrorCode


@dataclass
class _State:
    conversations: dict[str, Conversation] = field(default_factory=dict)
    messages: dict[str, list[ChatMessage]] = field(default_factory=dict)
    turns: dict[str, list[Turn]] = field(default_factory=dict)


class _Conversations:
    def __init__(self, state: _State) -> None:
        self._s = state

    def save(self, conversation: Conversation) -> None:
        self._s.conversations[conversation.id] = conversation

    def get(self, conversation_id: str) -> Conversation:
        try:
            return self._s.conversations[conversation_id]
        except KeyError:
            raise ConversationError(
                f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
            ) from None

    def get_by_book(self, book_id: str) -> list[Conversation]:
        return [c for c in self.list_all() if c.book_id == book_id]

    def list_all(self) -> list[Conversation]:
        by_id = sorted(self._s.conversations.values(), key=lambda c: c.id)
        return sorted(by_id, key=lambda c: (c.updated_at, c.created_at), reverse=True)

    def delete(self, conversation_id: str) -> None:
        self.get(conversation_id)
        del self._s.conversations[conversation_id]
        self._s.messages.pop(conversation_id, None)
        self._s.turns.pop(conversation_id, None)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        updated = replace(self.get(conversation_id), title=validate_title(title), auto_title=False)
        self.save(updated)
        return updated


class _Messages:
    def __init__(self, state: _State) -> None:
        self._s = state

    def save(self, message: ChatMessage) -> None:
        self.save_batch([message])

    def save_batch(self, messages: Sequence[ChatMessage]) -> None:
        for m in messages:
            conversation = _Conversations(self._s).get(m.conversation_id)
            existing = self._s.messages.setdefault(m.conversation_id, [])
            if any((e.turn_number, e.seq) == (m.turn_number, m.seq) for e in existing):
                raise ConversationError(
                    f"Message {m.seq} of turn {m.turn_number} of {m.conversation_id} exists",
                    code=ConversationErrorCode.CONFLICT,
                )
            existing.append(m)
            if m.created_at > conversation.updated_at:
                self._s.conversations[m.conversation_id] = conversation.touched(m.created_at)

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        return sorted(
            self._s.messages.get(conversation_id, []), key=lambda m: (m.turn_number, m.seq)
        )

    def delete_by_conversation(self, conversation_id: str) -> None:
        self._s.messages.pop(conversation_id, None)

    def last_turn_number(self, conversation_id: str) -> int:
        numbers = [m.turn_number for m in self._s.messages.get(conversation_id, [])]
        numbers += [t.turn_number for t in self._s.turns.get(conversation_id, [])]
        return max(numbers, default=0)


class _Turns:
    def __init__(self, state: _State) -> None:
        self._s = state

    def save(self, turn: Turn) -> None:
        _Conversations(self._s).get(turn.conversation_id)
        existing = self._s.turns.setdefault(turn.conversation_id, [])
        if any(t.turn_number == turn.turn_number for t in existing):
            raise ConversationError(
                f"Turn {turn.turn_number} of {turn.conversation_id} already exists",
                code=ConversationErrorCode.CONFLICT,
            )
        existing.append(turn)

    def get_by_conversation(self, conversation_id: str) -> list[Turn]:
        return sorted(self._s.turns.get(conversation_id, []), key=lambda t: t.turn_number)


class InMemoryConversationStore:
    """Holds the committed state; ``unit_of_work()`` is the ``UnitOfWorkFactory``."""

    def __init__(self) -> None:
        self.state = _State()

    def unit_of_work(self, *, read_only: bool = False) -> InMemoryUnitOfWork:
        """``read_only`` changes nothing here: a unit of work works on a copy until its commit."""
        return InMemoryUnitOfWork(self)


class InMemoryUnitOfWork:
    def __init__(self, store: InMemoryConversationStore) -> None:
        self._store = store
        self._staged = copy.deepcopy(store.state)
        self.conversations = _Conversations(self._staged)
        self.messages = _Messages(self._staged)
        self.turns = _Turns(self._staged)
        self.committed = False

    def __enter__(self) -> Self:
        self._staged = copy.deepcopy(self._store.state)
        self.conversations = _Conversations(self._staged)
        self.messages = _Messages(self._staged)
        self.turns = _Turns(self._staged)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.rollback()

    def commit(self) -> None:
        self._store.state = copy.deepcopy(self._staged)
        self.committed = True

    def rollback(self) -> None:
        self._staged = copy.deepcopy(self._store.state)
        self.conversations = _Conversations(self._staged)
        self.messages = _Messages(self._staged)
        self.turns = _Turns(self._staged)
