"""Conversations, messages and turns in PostgreSQL (the seed's conversations/turns tables), on the
SQL core of ``sql_conversations``: this module is PostgreSQL's session.

Invariants: a unit of work holds one pooled connection and one transaction. Reading a conversation
inside a writing one (``conversations.get``) takes a ``FOR NO KEY UPDATE`` row lock, so concurrent
turns on one conversation -- from threads, workers or machines -- serialise in the database: the
second waits until the first commits, then reads its turn number and title (READ COMMITTED gives
each statement a fresh snapshot). ``UNIQUE (conversation_id, turn_number)`` remains the last
guard: a taken number is ``ConversationError(CONFLICT)``, which the chat use case retries; a
deadlock is ``StorageError(BUSY)``, which every write retries (``app/writes.py``). A
``read_only`` unit of work takes no row lock: it reads beside a turn being stored instead of
waiting for it. Leaving the block without ``commit()`` rolls back. Every write runs in a
savepoint: a refused write (a taken turn number, an unknown book) leaves the unit of work usable,
as in SQLite, instead of aborting its transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from folio.adapters.storage.postgres.db import REFUSED_WRITES, PgDatabase, pg_storage_error
from folio.adapters.storage.sql.conversations import SqlUnitOfWork, Violation
from folio.adapters.storage.sql.dialect import POSTGRES
from folio.domain.errors import StorageError, StorageErrorCode


class PostgresConversationStore:
    """``unit_of_work()`` is the ``UnitOfWorkFactory``. The database must be migrated first."""

    def __init__(self, database: PgDatabase) -> None:
        self.database = database

    def unit_of_work(self, *, read_only: bool = False) -> PostgresUnitOfWork:
        return PostgresUnitOfWork(self.database, read_only=read_only)


class PostgresUnitOfWork(SqlUnitOfWork):
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
        super().__init__(read_only=read_only)
        self._database = database
        self._borrowed = connection

    def _open(self) -> _PostgresSession:
        if self._borrowed is not None:
            return _PostgresSession(self._borrowed, self._database, owned=False)
        return _PostgresSession(self._database.acquire(), self._database, owned=True)


class _PostgresSession:
    """Statements on the unit of work's connection; psycopg errors other than constraint
    violations leave as ``StorageError``."""

    dialect = POSTGRES
    integrity_error = psycopg.errors.IntegrityError

    def __init__(self, conn: psycopg.Connection[Any], database: PgDatabase, *, owned: bool) -> None:
        self._conn = conn
        self._database = database
        self._url = database.url
        self._owned = owned  # else borrowed: its owner commits, rolls back and releases it

    def _run(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        try:
            return self._conn.execute(sql, params)
        except psycopg.errors.IntegrityError:
            raise
        except psycopg.Error as e:
            raise pg_storage_error(e, self._url) from e

    def write(self, sql: str, params: Sequence[Any]) -> int:
        self._run("SAVEPOINT folio_write")
        try:
            cursor = self._run(sql, params)
        except BaseException:
            if not self._conn.closed:
                self._run("ROLLBACK TO SAVEPOINT folio_write")
            raise
        self._run("RELEASE SAVEPOINT folio_write")
        return cursor.rowcount

    def rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        try:
            with self._conn.cursor(row_factory=dict_row) as cur:
                cur.execute(sql, params)
                return cur.fetchall()
        except psycopg.Error as e:
            raise pg_storage_error(e, self._url) from e

    def violation(self, error: Exception) -> Violation:
        if isinstance(error, psycopg.errors.UniqueViolation):
            return "unique"
        return "foreign_key" if isinstance(error, psycopg.errors.ForeignKeyViolation) else "other"

    def commit(self) -> None:
        if not self._owned:
            return  # the connection's owner commits the whole
        try:
            self._conn.commit()
        except psycopg.Error as e:
            error = pg_storage_error(e, self._url)
            if error.code is StorageErrorCode.BUSY and not isinstance(e, REFUSED_WRITES):
                # the connection failed during COMMIT: the server may have committed, so the
                # unit must not run again (app/writes.py retries BUSY)
                raise StorageError(
                    f"{error.message} Whether the last change was saved is unknown.",
                    code=StorageErrorCode.STORAGE,
                ) from e
            raise error from e

    def rollback(self) -> None:
        self._conn.rollback()

    def close(self) -> None:
        if self._owned:
            self._database.release(self._conn)  # rolls back what was not committed
