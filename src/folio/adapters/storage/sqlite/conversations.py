"""Conversations, messages and turns in the SQLite database (schema 002), on the SQL core of
``sql_conversations``: this module is SQLite's session.

Invariants: a unit of work owns one connection and one transaction. A writing one (the default)
opens it with ``BEGIN IMMEDIATE``: it takes the write lock on entry, waiting for it up to the busy
timeout, so concurrent writers (threads or processes) queue instead of failing, and a turn number
read inside it cannot be taken by another writer before it commits. (A deferred transaction that
reads and then writes cannot wait: SQLite refuses its upgrade to a writer at once with BUSY while
another connection writes.) A ``read_only`` one opens a deferred transaction: a WAL reader that
never waits for a writer. Leaving the block without ``commit()`` rolls back. Every read goes to
the database (no cache). The rest (``updated_at``, domain errors) is the core's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from folio.adapters.storage.sql.conversations import SqlUnitOfWork, Violation
from folio.adapters.storage.sql.dialect import SQLITE
from folio.adapters.storage.sqlite.db import Database


class SqliteConversationStore:
    """``unit_of_work()`` is the ``UnitOfWorkFactory``. The database must be migrated first."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def unit_of_work(self, *, read_only: bool = False) -> SqliteUnitOfWork:
        return SqliteUnitOfWork(self.database, read_only=read_only)


class SqliteUnitOfWork(SqlUnitOfWork):
    def __init__(self, database: Database, *, read_only: bool = False) -> None:
        super().__init__(read_only=read_only)
        self._database = database

    def _open(self) -> _SqliteSession:
        conn = self._database.connect()
        try:
            conn.execute("BEGIN" if self._read_only else "BEGIN IMMEDIATE")
        except BaseException:
            conn.close()
            raise
        return _SqliteSession(conn)


class _SqliteSession:
    dialect = SQLITE
    integrity_error = sqlite3.IntegrityError

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._c.execute(sql, params).fetchall()

    def write(self, sql: str, params: Sequence[Any]) -> int:
        return self._c.execute(sql, params).rowcount

    def violation(self, error: Exception) -> Violation:
        text = str(error)
        if "UNIQUE" in text:
            return "unique"
        return "foreign_key" if "FOREIGN KEY" in text else "other"

    def commit(self) -> None:
        self._c.execute("COMMIT")
        # Deferred, so the lock is free as soon as the work is stored (the owner of a new
        # conversation is recorded next, on another connection); nothing writes after a commit.
        self._c.execute("BEGIN")

    def rollback(self) -> None:
        if self._c.in_transaction:
            self._c.execute("ROLLBACK")
        self._c.execute("BEGIN")

    def close(self) -> None:
        try:
            if self._c.in_transaction:
                self._c.execute("ROLLBACK")
        finally:
            self._c.close()
