"""The SQLite database file: connections, explicit transactions and numbered migrations.

Invariants: every connection has foreign keys on, WAL journaling and a busy timeout, and runs
in autocommit mode (``isolation_level=None``) so that a transaction exists only inside
``transaction()``; plain reads take no write lock, so a long writer never blocks them. Migrations
are the files ``migrations/NNN_name.sql`` shipped in the package; each is applied exactly once, in
version order, in its own transaction, and recorded in ``schema_migrations``; when nothing is
pending, ``migrate()`` only reads. Every sqlite3 error a user can meet (busy, read-only, disk full,
a damaged or foreign file) leaves the adapter as a ``StorageError`` with a true message.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from folio.domain.errors import StorageError, StorageErrorCode

MIGRATIONS_PACKAGE = "folio.adapters.storage.sqlite.migrations"
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


def storage_error(error: sqlite3.Error, path: Path | str) -> StorageError:
    """What a sqlite3 error means for the user, at the adapter's edge."""
    text = str(error).lower()
    if "locked" in text or "busy" in text:
        return StorageError(
            f"The library is busy: another folio process is writing to {path}. Try again in a"
            " moment.",
            code=StorageErrorCode.BUSY,
        )
    if "readonly" in text or "read-only" in text or "attempt to write" in text:
        return StorageError(
            f"The library {path} is read-only: reading works, but nothing can be saved there"
            " (check the permissions of the file and its folder, or set FOLIO_HOME).",
            code=StorageErrorCode.READ_ONLY,
        )
    if "full" in text:
        return StorageError(
            f"The disk holding {path} is full: nothing was saved. Free some space and try again.",
            code=StorageErrorCode.DISK_FULL,
        )
    if "not a database" in text or "malformed" in text or "no such table" in text:
        return StorageError(
            f"{path} is not a folio library or is damaged ({error}). Keep a copy of it, then move"
            " it away to start a new library, or restore it from a backup.",
            code=StorageErrorCode.DAMAGED,
        )
    return StorageError(f"The library database {path} failed: {error}")


class _Connection(sqlite3.Connection):
    """A connection whose statements raise ``StorageError`` instead of sqlite3's operational
    errors (constraint violations stay ``IntegrityError``: the repositories translate those)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as e:
            raise storage_error(e, _path_of(self)) from e

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as e:
            raise storage_error(e, _path_of(self)) from e


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _path_of(conn: sqlite3.Connection) -> str:
    row = sqlite3.Connection.execute(conn, "PRAGMA database_list").fetchone()
    return str(row[2]) if row else "the library database"


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
        try:
            if not self.path.parent.is_dir():
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageError(
                f"Cannot create the library folder {self.path.parent}: {e.strerror or e}",
                code=StorageErrorCode.READ_ONLY,
            ) from e
        read_only = self.path.exists() and not _writable(self.path)
        # A library on a read-only disk or folder stays readable: opened read-only and immutable
        # (nothing can change it there), since WAL mode would need to create its -shm file.
        target = f"file:{self.path}?mode=ro&immutable=1" if read_only else str(self.path)
        try:
            conn = sqlite3.connect(
                target,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
                factory=_Connection,
                uri=read_only,
            )
        except sqlite3.Error as e:
            raise storage_error(e, self.path) from e
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except StorageError as e:  # a read-only library stays readable in its journal mode
            if e.code != StorageErrorCode.READ_ONLY:
                conn.close()
                raise
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def migrate(self, *, target: int | None = None) -> list[int]:
        """Apply pending migrations (up to ``target`` when given); returns the versions applied.

        A file that is not a usable SQLite database raises ``StorageError`` naming it."""
        conn = self.connect()
        try:
            wanted = [m for m in self.migrations if target is None or m.version <= target]
            done = _applied(conn, self.path)
            if done is not None and {m.version for m in wanted} <= done:
                return []  # nothing to do: read only, no write lock taken
            if done is None:
                conn.execute(_SCHEMA_MIGRATIONS)
            return [m.version for m in wanted if _apply(conn, m)]
        finally:
            conn.close()

    def applied_versions(self) -> list[int]:
        conn = self.connect()
        try:
            return sorted(_applied(conn, self.path) or ())
        finally:
            conn.close()


def _applied(conn: sqlite3.Connection, path: Path) -> set[int] | None:
    """The recorded migration versions, or None for a database without the table yet. A file
    that is not a folio library (another application's database) is a DAMAGED StorageError."""
    tables = {
        str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if "schema_migrations" not in tables:
        foreign = tables - {"sqlite_sequence"}
        if foreign:
            raise StorageError(
                f"{path} is another application's SQLite database, not a folio library (it has"
                f" tables {', '.join(sorted(foreign)[:5])}). Set FOLIO_HOME to another folder or"
                " move the file away.",
                code=StorageErrorCode.DAMAGED,
            )
        return None
    return {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}


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
