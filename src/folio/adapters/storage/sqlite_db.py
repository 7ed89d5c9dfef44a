"""The SQLite database file: connections, explicit transactions and numbered migrations.

Invariants: every connection has foreign keys on, WAL journaling and a busy timeout, and runs
in autocommit mode (``isolation_level=None``) so that a transaction exists only inside
``transaction()``. Migrations are the files ``migrations/NNN_name.sql`` shipped in the package;
each is applied exactly once, in version order, in its own transaction, and recorded in
``schema_migrations``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from folio.domain.errors import StorageError

MIGRATIONS_PACKAGE = "folio.adapters.storage.migrations"
BUSY_TIMEOUT_MS = 5000
_MIGRATION_FILE = re.compile(r"^(\d{3})_(\w+)\.sql$")

_SCHEMA_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def packaged_migrations(package: str = MIGRATIONS_PACKAGE) -> list[Migration]:
    """The migrations shipped in ``package``, in version order."""
    found = []
    for entry in resources.files(package).iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration versions in {package}: {versions}")
    return found


def split_statements(script: str) -> list[str]:
    """Split an SQL script into complete statements (trigger bodies with ``;`` stay whole)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                statements.append(pending.strip())
            pending = ""
    if pending.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in pending.splitlines()
    ):
        raise ValueError(f"incomplete SQL statement at the end of the script: {pending.strip()!r}")
    return statements


@contextmanager
def transaction(
    conn: sqlite3.Connection, *, immediate: bool = True
) -> Iterator[sqlite3.Connection]:
    """``BEGIN [IMMEDIATE]`` ... ``COMMIT``; ``ROLLBACK`` when the block raises.

    ``immediate`` takes the write lock at the start, so a read-then-write block cannot fail half-way
    with SQLITE_BUSY when another process writes concurrently (the busy timeout waits instead).
    """
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


class Database:
    """One SQLite file. ``connect()`` opens a configured connection; ``migrate()`` brings the schema
    up to date (safe to call at every start-up, from several processes)."""

    def __init__(self, path: Path, *, migrations: Sequence[Migration] | None = None) -> None:
        self.path = Path(path)
        self._migrations = list(migrations) if migrations is not None else None

    @property
    def migrations(self) -> list[Migration]:
        if self._migrations is None:
            self._migrations = packaged_migrations()
        return self._migrations

    def connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def migrate(self, *, target: int | None = None) -> list[int]:
        """Apply pending migrations (up to ``target`` when given); returns the versions applied.

        A file that is not a usable SQLite database raises ``StorageError`` naming it."""
        conn = self._open_checked()
        try:
            applied = []
            for migration in self.migrations:
                if target is not None and migration.version > target:
                    break
                if _apply(conn, migration):
                    applied.append(migration.version)
            return applied
        finally:
            conn.close()

    def _open_checked(self) -> sqlite3.Connection:
        """A connection to a file that is an SQLite database with the migrations table."""
        try:
            conn = self.connect()
        except sqlite3.DatabaseError as e:
            raise self._unusable(e) from e
        try:
            conn.execute(_SCHEMA_MIGRATIONS)
        except sqlite3.DatabaseError as e:
            conn.close()
            raise self._unusable(e) from e
        return conn

    def _unusable(self, error: sqlite3.DatabaseError) -> StorageError:
        return StorageError(
            f"The library database {self.path} cannot be used ({error}). Move it away to start"
            " a new library, or restore it from a backup."
        )

    def applied_versions(self) -> list[int]:
        conn = self.connect()
        try:
            conn.execute(_SCHEMA_MIGRATIONS)
            rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version")
            return [int(r[0]) for r in rows]
        finally:
            conn.close()


def _apply(conn: sqlite3.Connection, migration: Migration) -> bool:
    """Apply one migration in its own transaction unless it is recorded already (checked inside the
    transaction, so two processes migrating at once apply it once)."""
    with transaction(conn):
        done = conn.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
        ).fetchone()
        if done:
            return False
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, datetime.now(UTC).isoformat()),
        )
    return True
