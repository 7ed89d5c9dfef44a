"""Conversations, messages and turns in PostgreSQL (the seed's conversations/turns tables).

Invariants: a unit of work holds one pooled connection and one transaction. Reading a conversation
inside a writing one (``conversations.get``) takes a ``FOR NO KEY UPDATE`` row lock, so concurrent
turns on one conversation -- from threads, workers or machines -- serialise in the database: the
second waits until the first commits, then reads its turn number and title (READ COMMITTED gives
each statement a fresh snapshot). ``UNIQUE (conversation_id, turn_number)`` remains the last
guard: a taken number is ``ConversationError(CONFLICT)``, which the chat use case retries; a
deadlock is ``StorageError(BUSY)``, which every write retries (``app/writes.py``). A
``read_only`` unit of work takes no row lock: it reads beside a turn being stored instead of
waiting for it. Leaving the block without ``commit()`` rolls back. Saving messages moves
``updated_at`` forward (never back).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

import psycopg
from psycopg.rows import dict_row

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
from folio.adapters.storage.postgres_db import PgDatabase, pg_storage_error
from folio.adapters.storage.row_values import encode_datetime
from folio.domain.conversations import ChatMessage, Conversation, Turn, validate_title
from folio.domain.errors import BookError, BookErrorCode, ConversationError, ConversationErrorCode


class PostgresConversationStore:
    """``unit_of_work()`` is the ``UnitOfWorkFactory``. The database must be migrated first."""

    def __init__(self, database: PgDatabase) -> None:
        self.database = database

    def unit_of_work(self, *, read_only: bool = False) -> PostgresUnitOfWork:
        return PostgresUnitOfWork(self.database, read_only=read_only)


def _not_found(conversation_id: str) -> ConversationError:
    return ConversationError(
        f"No conversation {conversation_id!r}", code=ConversationErrorCode.NOT_FOUND
    )


class _Sql:
    """Statements on the unit of work's connection; psycopg errors other than constraint
    violations leave as ``StorageError``."""

    def __init__(self, conn: psycopg.Connection[Any], url: str) -> None:
        self.conn = conn
        self.url = url

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> psycopg.Cursor[Any]:
        try:
            return self.conn.execute(sql, params)
        except psycopg.errors.IntegrityError:
            raise
        except psycopg.Error as e:
            raise pg_storage_error(e, self.url) from e

    def write(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> psycopg.Cursor[Any]:
        """A write inside a savepoint: a refused write (a taken turn number, an unknown book)
        leaves the unit of work usable, as in SQLite, instead of aborting its transaction."""
        self.run("SAVEPOINT folio_write")
        try:
            cursor = self.run(sql, params)
        except BaseException:
            if not self.conn.closed:
                self.run("ROLLBACK TO SAVEPOINT folio_write")
            raise
        self.run("RELEASE SAVEPOINT folio_write")
        return cursor

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        try:
            with self.conn.cursor(row_factory=dict_row) as cur:
                cur.execute(sql, params)
                found: list[dict[str, Any]] = cur.fetchall()
                return found
        except psycopg.Error as e:
            raise pg_storage_error(e, self.url) from e


@contextmanager
def _translated(what: str, conversation_id: str) -> Iterator[None]:
    """psycopg constraint errors -> domain errors, at the adapter's edge."""
    try:
        yield
    except psycopg.errors.UniqueViolation as e:
        raise ConversationError(
            f"{what} of conversation {conversation_id} already exists (a concurrent writer?)",
            code=ConversationErrorCode.CONFLICT,
        ) from e
    except psycopg.errors.ForeignKeyViolation as e:
        raise _not_found(conversation_id) from e
    except psycopg.errors.IntegrityError as e:
        raise ConversationError(
            f"Invalid {what.lower()} for conversation {conversation_id}: {str(e).strip()}",
            code=ConversationErrorCode.INVALID_INPUT,
        ) from e


class PostgresUnitOfWork:
    """One pooled connection, one transaction. With ``connection``: the work joins that
    connection's transaction, which its owner commits or rolls back (``folio db copy`` writes a
    whole library in one transaction this way)."""

    def __init__(
        self,
        database: PgDatabase,
        *,
        connection: psycopg.Connection[Any] | None = None,
        read_only: bool = False,
    ) -> None:
        self._database = database
        self._borrowed = connection
        self._read_only = read_only
        self._conn: psycopg.Connection[Any] | None = None

    def __enter__(self) -> Self:
        conn = self._borrowed or self._database.acquire()
        self._conn = conn
        sql = _Sql(conn, self._database.url)
        self.conversations = _Conversations(sql, lock=not self._read_only)
        self.messages = _Messages(sql)
        self.turns = _Turns(sql)
        return self

    def __exit__(self, *exc_info: object) -> None:
        conn = self._require()
        self._conn = None
        if self._borrowed is None:
            self._database.release(conn)  # rolls back what was not committed

    def commit(self) -> None:
        conn = self._require()
        if self._borrowed is not None:
            return  # the connection's owner commits the whole
        try:
            conn.commit()
        except psycopg.Error as e:
            raise pg_storage_error(e, self._database.url) from e

    def rollback(self) -> None:
        self._require().rollback()

    def _require(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise ConversationError(
                "A unit of work is used outside its `with` block",
                code=ConversationErrorCode.INVALID_STATE,
            )
        return self._conn


class _Conversations:
    _COLUMNS = CONVERSATION_COLUMNS

    def __init__(self, sql: _Sql, *, lock: bool = True) -> None:
        self._sql = sql
        self._lock = " FOR NO KEY UPDATE" if lock else ""

    def save(self, conversation: Conversation) -> None:
        c = conversation
        try:
            self._sql.write(
                f"INSERT INTO conversations ({self._COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET book_id = excluded.book_id, "
                "title = excluded.title, created_at = excluded.created_at, "
                "updated_at = excluded.updated_at, auto_title = excluded.auto_title",
                conversation_params(c),
            )
        except psycopg.errors.ForeignKeyViolation as e:
            raise BookError(f"No book {c.book_id!r}", code=BookErrorCode.NOT_FOUND) from e
        except psycopg.errors.IntegrityError as e:
            raise ConversationError(
                f"Invalid conversation {c.id}: {str(e).strip()}",
                code=ConversationErrorCode.INVALID_INPUT,
            ) from e

    def get(self, conversation_id: str) -> Conversation:
        # The row lock serialises turns on this conversation (see the module's invariants); it is
        # held until the unit of work commits or ends, which is short: no model call happens
        # inside a unit of work.
        rows = self._sql.rows(
            f"SELECT {self._COLUMNS} FROM conversations WHERE id = %s{self._lock}",
            (conversation_id,),
        )
        if not rows:
            raise _not_found(conversation_id)
        return conversation_from_row(rows[0])

    def get_by_book(self, book_id: str) -> list[Conversation]:
        rows = self._sql.rows(
            f"SELECT {self._COLUMNS} FROM conversations WHERE book_id = %s "
            "ORDER BY updated_at DESC, created_at DESC, id",
            (book_id,),
        )
        return [conversation_from_row(r) for r in rows]

    def list_all(self) -> list[Conversation]:
        rows = self._sql.rows(
            f"SELECT {self._COLUMNS} FROM conversations "
            "ORDER BY updated_at DESC, created_at DESC, id"
        )
        return [conversation_from_row(r) for r in rows]

    def delete(self, conversation_id: str) -> None:
        cursor = self._sql.write("DELETE FROM conversations WHERE id = %s", (conversation_id,))
        if cursor.rowcount == 0:
            raise _not_found(conversation_id)

    def update_title(self, conversation_id: str, title: str) -> Conversation:
        cursor = self._sql.write(
            "UPDATE conversations SET title = %s, auto_title = FALSE WHERE id = %s",
            (validate_title(title), conversation_id),
        )
        if cursor.rowcount == 0:
            raise _not_found(conversation_id)
        return self.get(conversation_id)


class _Messages:
    _COLUMNS = MESSAGE_COLUMNS

    def __init__(self, sql: _Sql) -> None:
        self._sql = sql

    def save(self, message: ChatMessage) -> None:
        self.save_batch([message])

    def save_batch(self, messages: Sequence[ChatMessage]) -> None:
        for m in messages:
            with _translated(f"Message {m.seq} of turn {m.turn_number}", m.conversation_id):
                self._sql.write(
                    f"INSERT INTO chat_messages ({self._COLUMNS}) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    message_params(m),
                )
            self._sql.write(
                "UPDATE conversations SET updated_at = greatest(updated_at, %s) WHERE id = %s",
                (encode_datetime(m.created_at), m.conversation_id),
            )

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        rows = self._sql.rows(
            f"SELECT {self._COLUMNS} FROM chat_messages WHERE conversation_id = %s "
            "ORDER BY turn_number, seq",
            (conversation_id,),
        )
        return [message_from_row(r) for r in rows]

    def delete_by_conversation(self, conversation_id: str) -> None:
        self._sql.write("DELETE FROM chat_messages WHERE conversation_id = %s", (conversation_id,))

    def last_turn_number(self, conversation_id: str) -> int:
        row = self._sql.run(
            "SELECT greatest(coalesce((SELECT max(turn_number) FROM chat_messages"
            " WHERE conversation_id = %(c)s), 0), coalesce((SELECT max(turn_number) FROM turns"
            " WHERE conversation_id = %(c)s), 0))",
            {"c": conversation_id},
        ).fetchone()
        return int(row[0]) if row else 0


class _Turns:
    _COLUMNS = TURN_COLUMNS

    def __init__(self, sql: _Sql) -> None:
        self._sql = sql

    def save(self, turn: Turn) -> None:
        with _translated(f"Turn {turn.turn_number}", turn.conversation_id):
            self._sql.write(
                f"INSERT INTO turns ({self._COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                turn_params(turn),
            )

    def get_by_conversation(self, conversation_id: str) -> list[Turn]:
        rows = self._sql.rows(
            f"SELECT {self._COLUMNS} FROM turns WHERE conversation_id = %s ORDER BY turn_number",
            (conversation_id,),
        )
        return [turn_from_row(r) for r in rows]
