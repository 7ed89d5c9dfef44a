"""Conversations, messages and turns on one SQL core, for SQLite and PostgreSQL alike.

The statements are written once, with ``?`` marks; a ``Dialect`` says what differs between the
databases (the mark, ``max`` or ``greatest``, the row lock a writing unit of work takes when it
reads a conversation), and a ``Session`` is one backend's connection inside one unit of work:
its rows, its writes, its commit, and which constraint a refused write broke. The backends keep
only their sessions (``sqlite.conversations``, ``postgres.conversations``).

Invariants: a unit of work owns one session and one transaction; leaving the block without
``commit()`` rolls back. Saving messages moves the conversation's ``updated_at`` forward to the
newest message (never back). Constraint violations become domain errors: a taken turn or message
number is ``ConversationError(CONFLICT)``, an unknown conversation ``NOT_FOUND``, an unknown book
``BookError(NOT_FOUND)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Protocol, Self

from folio.adapters.storage.conversation_codec import (
    CONVERSATION_COLUMNS,
    MESSAGE_COLUMNS,
    TURN_COLUMNS,
    conversation_from_row,
    conversation_params,
    message_from_row,
    message_params,
    turn_from_row,
    turn_params,
)
from folio.adapters.storage.row_values import encode_datetime
from folio.adapters.storage.sql.dialect import Dialect
from folio.domain.conversations import ChatMessage, Conversation, Turn, validate_title
from folio.domain.errors import BookError, BookErrorCode, ConversationError, ConversationErrorCode

Violation = Literal["unique", "foreign_key", "other"]


class Session(Protocol):
    """One backend's connection inside a unit of work."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def integrity_error(self) -> type[Exception]:
        """The driver's constraint violation."""
        ...

    def rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """The rows of a query, each read by column name."""
        ...

    def write(self, sql: str, params: Sequence[Any]) -> int:
        """Run one statement that changes rows; returns how many it changed."""
        ...

    def violation(self, error: Exception) -> Violation: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class _Statements:
    save_conversation: str
    get_conversation: str
    get_conversation_locked: str
    conversations_of_book: str
    all_conversations: str
    delete_conversation: str
    update_title: str
    save_message: str
    touch_conversation: str
    messages_of: str
    delete_messages: str
    last_turn_number: str
    save_turn: str
    turns_of: str


def _marks(columns: str) -> str:
    return ", ".join("?" * len(columns.split(",")))


@cache
def _statements(dialect: Dialect) -> _Statements:
    sql = dialect.sql
    get = f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?"
    return _Statements(
        save_conversation=sql(
            f"INSERT INTO conversations ({CONVERSATION_COLUMNS})"
            f" VALUES ({_marks(CONVERSATION_COLUMNS)})"
            " ON CONFLICT (id) DO UPDATE SET book_id = excluded.book_id,"
            " title = excluded.title, created_at = excluded.created_at,"
            " updated_at = excluded.updated_at, auto_title = excluded.auto_title"
        ),
        get_conversation=sql(get),
        get_conversation_locked=sql(get + dialect.row_lock),
        conversations_of_book=sql(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE book_id = ?"
            " ORDER BY updated_at DESC, created_at DESC, id"
        ),
        all_conversations=sql(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations"
            " ORDER BY updated_at DESC, created_at DESC, id"
        ),
        delete_conversation=sql("DELETE FROM conversations WHERE id = ?"),
        update_title=sql("UPDATE conversations SET title = ?, auto_title = ? WHERE id = ?"),
        save_message=sql(
            f"INSERT INTO chat_messages ({MESSAGE_COLUMNS}) VALUES ({_marks(MESSAGE_COLUMNS)})"
        ),
        touch_conversation=sql(
            f"UPDATE conversations SET updated_at = {dialect.greatest}(updated_at, ?) WHERE id = ?"
        ),
        messages_of=sql(
            f"SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE conversation_id = ?"
            " ORDER BY turn_number, seq"
        ),
        delete_messages=sql("DELETE FROM chat_messages WHERE conversation_id = ?"),
        last_turn_number=sql(
            f"SELECT {dialect.greatest}(coalesce((SELECT max(turn_number) FROM chat_messages"
            " WHERE conversation_id = ?), 0), coalesce((SELECT max(turn_number) FROM turns"
            " WHERE conversation_id = ?), 0)) AS last"
        ),
        save_turn=sql(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({_marks(TURN_COLUMNS)})"),
        turns_of=sql(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE conversation_id = ? ORDER BY turn_number"
        ),
    )


def _not_found(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
    )


class SqlUnitOfWork:
    """The ``ConversationUnitOfWork`` of both SQL stores; a backend opens and closes its session
    (``_open``, ``_close``: the only hooks)."""

    def __init__(self, *, read_only: bool = False) -> None:
        self._read_only = read_only
        self._session: Session | None = None

    def _open(self) -> Session:
        raise NotImplementedError

    def _close(self, session: Session) -> None:
        session.close()

    def __enter__(self) -> Self:
        session = self._open()
        self._session = session
        self.conversations = SqlConversations(session, lock=not self._read_only)
        self.messages = SqlMessages(session)
        self.turns = SqlTurns(session)
        return self

    def __exit__(self, *exc_info: object) -> None:
        session = self._require()
        self._session = None
        self._close(session)

    def commit(self) -> None:
        self._require().commit()

    def rollback(self) -> None:
        self._require().rollback()

    def _require(self) -> Session:
        if self._session is None:
            raise ConversationError(
                "A unit of work is used outside its `with` block",
                code=ConversationErrorCode.INVALID_STATE,
            )
        return self._session


@contextmanager
def _translated(session: Session, what: str, conversation_id: str) -> Iterator[None]:
    """The driver's constraint errors -> domain errors, at the adapter's edge."""
    try:
        yield
    except session.integrity_error as e:
        kind = session.violation(e)
        if kind == "unique":
            raise ConversationError(
                f"{what} of conversation {conversation_id} already exists (a concurrent writer?)",
                code=ConversationErrorCode.CONFLICT,
            ) from e
        if kind == "foreign_key":
            raise _not_found(conversation_id) from e
        raise ConversationError(
            f"Invalid {what.lower()} for conversation {conversation_id}: {str(e).strip()}",
            code=ConversationErrorCode.INVALID_INPUT,
        ) from e


class SqlConversations:
    def __init__(self, session: Session, *, lock: bool = True) -> None:
        self._s = session
        self._sql = _statements(session.dialect)
        self._get = self._sql.get_conversation_locked if lock else self._sql.get_conversation

    def save(self, conversation: Conversation) -> None:
        c = conversation
        try:
            self._s.write(self._sql.save_conversation, conversation_params(c))
        except self._s.integrity_error as e:
            if self._s.violation(e) == "foreign_key":
                raise BookError(f"No book {c.book_id!r}", code=BookErrorCode.NOT_FOUND) from e
            raise ConversationError(
                f"Invalid conversation {c.id}: {str(e).strip()}",
                code=ConversationErrorCode.INVALID_INPUT,
            ) from e

    def get(self, conversation_id: str) -> Conversation:
        # In a writing unit of work on PostgreSQL, the row lock serialises turns on this
        # conversation; it is held until the unit of work ends, which is short: no model call
        # happens inside a unit of work.
        rows = self._s.rows(self._get, (conversation_id,))
        if not rows:
            raise _not_found(conversation_id)
        return conversation_from_row(rows[0])

    def get_by_book(self, book_id: str) -> list[Conversation]:
        return [
            conversation_from_row(r)
            for r in self._s.rows(self._sql.conversations_of_book, (book_id,))
        ]

    def list_all(self) -> list[Conversation]:
        return [conversation_from_row(r) for r in self._s.rows(self._sql.all_conversations, ())]

    def delete(self, conversation_id: str) -> None:
        if self._s.write(self._sql.delete_conversation, (conversation_id,)) == 0:
            raise _not_found(conversation_id)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        changed = self._s.write(
            self._sql.update_title, (validate_title(title), False, conversation_id)
        )
        if changed == 0:
            raise _not_found(conversation_id)
        return self.get(conversation_id)


class SqlMessages:
    def __init__(self, session: Session) -> None:
        self._s = session
        self._sql = _statements(session.dialect)

    def save(self, message: ChatMessage) -> None:
        self.save_batch([message])

    def save_batch(self, messages: Sequence[ChatMessage]) -> None:
        for m in messages:
            with _translated(
                self._s, f"Message {m.seq} of turn {m.turn_number}", m.conversation_id
            ):
                self._s.write(self._sql.save_message, message_params(m))
            self._s.write(
                self._sql.touch_conversation, (encode_datetime(m.created_at), m.conversation_id)
            )

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        return [
            message_from_row(r) for r in self._s.rows(self._sql.messages_of, (conversation_id,))
        ]

    def delete_by_conversation(self, conversation_id: str) -> None:
        self._s.write(self._sql.delete_messages, (conversation_id,))

    def last_turn_number(self, conversation_id: str) -> int:
        rows = self._s.rows(self._sql.last_turn_number, (conversation_id, conversation_id))
        return int(rows[0]["last"]) if rows else 0


class SqlTurns:
    def __init__(self, session: Session) -> None:
        self._s = session
        self._sql = _statements(session.dialect)

    def save(self, turn: Turn) -> None:
        with _translated(self._s, f"Turn {turn.turn_number}", turn.conversation_id):
            self._s.write(self._sql.save_turn, turn_params(turn))

    def get_by_conversation(self, conversation_id: str) -> list[Turn]:
        return [turn_from_row(r) for r in self._s.rows(self._sql.turns_of, (conversation_id,))]
