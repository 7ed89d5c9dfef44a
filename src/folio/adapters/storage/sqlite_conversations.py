"""Conversations, messages and turns in the SQLite database (schema 002).

Invariants: a unit of work owns one connection and one transaction. A writing one (the default)
opens it with ``BEGIN IMMEDIATE``: it takes the write lock on entry, waiting for it up to the busy
timeout, so concurrent writers (threads or processes) queue instead of failing, and a turn number
read inside it cannot be taken by another writer before it commits. (A deferred transaction that
reads and then writes cannot wait: SQLite refuses its upgrade to a writer at once with BUSY while
another connection writes.) A ``read_only`` one opens a deferred transaction: a WAL reader that
never waits for a writer. Leaving the block without ``commit()`` rolls back. Every read goes to
the database (no cache). Saving messages moves the conversation's ``updated_at`` forward to the
newest message (never back), so "most recent activity first" holds without the writer touching
the conversation. Constraint violations become domain errors: a taken turn or message number is
``ConversationError(CONFLICT)``, an unknown conversation ``NOT_FOUND``, an unknown book
``BookError(NOT_FOUND)``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Self

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
from folio.adapters.storage.sqlite_db import Database
from folio.domain.conversations import ChatMessage, Conversation, Turn, validate_title
from folio.domain.errors import BookError, BookErrorCode, ConversationError, ConversationErrorCode


class SqliteConversationStore:
    """``unit_of_work()`` is the ``UnitOfWorkFactory``. The database must be migrated first."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def unit_of_work(self, *, read_only: bool = False) -> SqliteUnitOfWork:
        return SqliteUnitOfWork(self.database, read_only=read_only)


def _not_found(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
    )


@contextmanager
def _translated(what: str, conversation_id: str) -> Iterator[None]:
    """sqlite3 constraint errors -> domain errors, at the adapter's edge."""
    try:
        yield
    except sqlite3.IntegrityError as e:
        text = str(e)
        if "UNIQUE" in text:
            raise ConversationError(
                f"{what} of conversation {conversation_id} already exists (a concurrent writer?)",
                code=ConversationErrorCode.CONFLICT,
            ) from e
        if "FOREIGN KEY" in text:
            raise _not_found(conversation_id) from e
        raise ConversationError(
            f"Invalid {what.lower()} for conversation {conversation_id}: {text}",
            code=ConversationErrorCode.INVALID_INPUT,
        ) from e


class SqliteUnitOfWork:
    def __init__(self, database: Database, *, read_only: bool = False) -> None:
        self._database = database
        self._read_only = read_only
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> Self:
        conn = self._database.connect()
        try:
            conn.execute("BEGIN" if self._read_only else "BEGIN IMMEDIATE")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self.conversations = _Conversations(conn)
        self.messages = _Messages(conn)
        self.turns = _Turns(conn)
        return self

    def __exit__(self, *exc_info: object) -> None:
        conn = self._require()
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            conn.close()
            self._conn = None

    def commit(self) -> None:
        conn = self._require()
        conn.execute("COMMIT")
        # Deferred, so the lock is free as soon as the work is stored (the owner of a new
        # conversation is recorded next, on another connection); nothing writes after a commit.
        conn.execute("BEGIN")

    def rollback(self) -> None:
        conn = self._require()
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("BEGIN")

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ConversationError(
                "A unit of work is used outside its `with` block",
                code=ConversationErrorCode.INVALID_STATE,
            )
        return self._conn


class _Conversations:
    _COLUMNS = CONVERSATION_COLUMNS

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def save(self, conversation: Conversation) -> None:
        c = conversation
        try:
            self._c.execute(
                f"INSERT INTO conversations ({self._COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET book_id = excluded.book_id, "
                "title = excluded.title, created_at = excluded.created_at, "
                "updated_at = excluded.updated_at, auto_title = excluded.auto_title",
                conversation_params(c),
            )
        except sqlite3.IntegrityError as e:
            if "FOREIGN KEY" in str(e):
                raise BookError(f"No book {c.book_id!r}", code=BookErrorCode.NOT_FOUND) from e
            raise ConversationError(
                f"Invalid conversation {c.id}: {e}", code=ConversationErrorCode.INVALID_INPUT
            ) from e

    def get(self, conversation_id: str) -> Conversation:
        row = self._c.execute(
            f"SELECT {self._COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if row is None:
            raise _not_found(conversation_id)
        return conversation_from_row(row)

    def get_by_book(self, book_id: str) -> list[Conversation]:
        rows = self._c.execute(
            f"SELECT {self._COLUMNS} FROM conversations WHERE book_id = ? "
            "ORDER BY updated_at DESC, created_at DESC, id",
            (book_id,),
        )
        return [conversation_from_row(r) for r in rows]

    def list_all(self) -> list[Conversation]:
        rows = self._c.execute(
            f"SELECT {self._COLUMNS} FROM conversations "
            "ORDER BY updated_at DESC, created_at DESC, id"
        )
        return [conversation_from_row(r) for r in rows]

    def delete(self, conversation_id: str) -> None:
        cursor = self._c.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        if cursor.rowcount == 0:
            raise _not_found(conversation_id)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        cursor = self._c.execute(
            "UPDATE conversations SET title = ?, auto_title = 0 WHERE id = ?",
            (validate_title(title), conversation_id),
        )
        if cursor.rowcount == 0:
            raise _not_found(conversation_id)
        return self.get(conversation_id)


class _Messages:
    _COLUMNS = MESSAGE_COLUMNS

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def save(self, message: ChatMessage) -> None:
        self.save_batch([message])

    def save_batch(self, messages: Sequence[ChatMessage]) -> None:
        for m in messages:
            with _translated(f"Message {m.seq} of turn {m.turn_number}", m.conversation_id):
                self._c.execute(
                    f"INSERT INTO chat_messages ({self._COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    message_params(m),
                )
            self._c.execute(
                "UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?",
                (encode_datetime(m.created_at), m.conversation_id),
            )

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        rows = self._c.execute(
            f"SELECT {self._COLUMNS} FROM chat_messages WHERE conversation_id = ? "
            "ORDER BY turn_number, seq",
            (conversation_id,),
        )
        return [message_from_row(r) for r in rows]

    def delete_by_conversation(self, conversation_id: str) -> None:
        self._c.execute("DELETE FROM chat_messages WHERE conversation_id = ?", (conversation_id,))

    def last_turn_number(self, conversation_id: str) -> int:
        row = self._c.execute(
            "SELECT max(coalesce((SELECT max(turn_number) FROM chat_messages"
            " WHERE conversation_id = :c), 0), coalesce((SELECT max(turn_number) FROM turns"
            " WHERE conversation_id = :c), 0))",
            {"c": conversation_id},
        ).fetchone()
        return int(row[0])


class _Turns:
    _COLUMNS = TURN_COLUMNS

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def save(self, turn: Turn) -> None:
        with _translated(f"Turn {turn.turn_number}", turn.conversation_id):
            self._c.execute(
                f"INSERT INTO turns ({self._COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                turn_params(turn),
            )

    def get_by_conversation(self, conversation_id: str) -> list[Turn]:
        rows = self._c.execute(
            f"SELECT {self._COLUMNS} FROM turns WHERE conversation_id = ? ORDER BY turn_number",
            (conversation_id,),
        )
        return [turn_from_row(r) for r in rows]
