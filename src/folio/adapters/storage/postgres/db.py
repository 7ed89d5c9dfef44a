"""The PostgreSQL database: a psycopg 3 connection pool and numbered migrations.

Invariants: migrations are the files ``pg_migrations/NNN_name.sql`` shipped in the package; each is
applied exactly once, in version order, in its own transaction, and recorded in
``schema_migrations``. ``migrate()`` holds a session advisory lock while it applies them, so several
workers (on one machine or many) starting together queue behind the first and then find nothing
to do. Every connection handed out has pgvector's adapter registered (a numpy vector goes in, a
numpy vector comes out). The errors a user can meet (server unreachable, refused login, a database
that is not folio's) leave the adapter as a ``StorageError`` with a true message.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from folio.domain.errors import StorageError, StorageErrorCode
from folio.domain.redaction import redact_url, scrub

MIGRATIONS_PACKAGE = "folio.adapters.storage.postgres.migrations"
# Any constant shared by every folio process: the key of the advisory lock taken while migrating.
MIGRATION_LOCK_KEY = 0x466F6C696F  # "Folio"
_MIGRATION_FILE = re.compile(r"^(\d{3})_(\w+)\.sql$")

_SCHEMA_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True, slots=True)
class PgMigration:
    version: int
    name: str
    sql: str


def packaged_pg_migrations(package: str = MIGRATIONS_PACKAGE) -> list[PgMigration]:
    """The PostgreSQL migrations shipped in ``package``, in version order."""
    found = []
    for entry in resources.files(package).iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append(PgMigration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration versions in {package}: {versions}")
    return found


def redacted(url: str) -> str:
    """The URL without its password, fit for messages and logs."""
    return redact_url(url)


# The server rolled the transaction back because of another one (SQLSTATE class 40: deadlock,
# serialization failure) or refused to wait for its lock (55P03); the same work tried again passes.
REFUSED_WRITES = (
    psycopg.errors.TransactionRollback,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.LockNotAvailable,
)


def pg_storage_error(error: psycopg.Error, url: str) -> StorageError:
    """What a psycopg error means for the user, at the adapter's edge."""
    where = redacted(url)
    detail = scrub(str(error).strip(), url)
    if isinstance(error, psycopg.ProgrammingError) and "conninfo" in detail.lower():
        detail = "the URL is not a valid PostgreSQL connection string"
    if isinstance(error, REFUSED_WRITES):
        # app/writes.py retries every write that ends here (BUSY).
        return StorageError(
            f"The PostgreSQL database {where} refused a write that met another writer's ({detail})."
            " Try again in a moment.",
            code=StorageErrorCode.BUSY,
        )
    if isinstance(error, psycopg.OperationalError):
        return StorageError(
            f"Cannot reach the PostgreSQL database {where}: {detail}. Check that the"
            " server runs and FOLIO_DATABASE_URL is right.",
            code=StorageErrorCode.BUSY,
        )
    if isinstance(error, psycopg.errors.InsufficientPrivilege):
        return StorageError(
            f"The PostgreSQL database {where} refused a change: {detail}",
            code=StorageErrorCode.READ_ONLY,
        )
    if isinstance(error, psycopg.errors.DiskFull):
        return StorageError(
            f"The PostgreSQL server of {where} is out of disk space: nothing was saved.",
            code=StorageErrorCode.DISK_FULL,
        )
    if isinstance(error, psycopg.errors.UndefinedTable | psycopg.errors.UndefinedObject):
        return StorageError(
            f"{where} is not a migrated folio database ({detail}).",
            code=StorageErrorCode.DAMAGED,
        )
    return StorageError(f"The PostgreSQL database {where} failed: {detail}")


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)
    conn.commit()  # the type lookup opened a transaction; a pooled connection must come back idle


class PgDatabase:
    """One PostgreSQL database. ``migrate()`` first; then ``connection()`` lends a pooled
    connection whose block is one transaction (committed on normal exit, rolled back on error)."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        migrations: Sequence[PgMigration] | None = None,
    ) -> None:
        self.url = url
        self._min_size = min_size
        self._max_size = max_size
        self._migrations = list(migrations) if migrations is not None else None
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._lock = threading.Lock()

    @property
    def migrations(self) -> list[PgMigration]:
        if self._migrations is None:
            self._migrations = packaged_pg_migrations()
        return self._migrations

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, connect_timeout=10)
        except psycopg.Error as e:
            raise pg_storage_error(e, self.url) from e

    def migrate(self, *, target: int | None = None) -> list[int]:
        """Apply pending migrations (up to ``target``) under the advisory lock; returns the
        versions applied by this call (empty when another process applied them first)."""
        wanted = [m for m in self.migrations if target is None or m.version <= target]
        applied: list[int] = []
        with self._connect() as conn:
            try:
                conn.autocommit = True
                conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
                try:
                    conn.execute(_SCHEMA_MIGRATIONS)
                    done = {
                        int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")
                    }
                    for migration in wanted:
                        if migration.version in done:
                            continue
                        with conn.transaction():
                            conn.execute(migration.sql.encode())
                            conn.execute(
                                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                                (migration.version, migration.name),
                            )
                        applied.append(migration.version)
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
            except psycopg.Error as e:
                raise pg_storage_error(e, self.url) from e
        return applied

    def applied_versions(self) -> list[int]:
        with self._connect() as conn:
            try:
                rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version")
                return [int(r[0]) for r in rows]
            except psycopg.errors.UndefinedTable:
                return []
            except psycopg.Error as e:
                raise pg_storage_error(e, self.url) from e

    @property
    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        with self._lock:
            if self._pool is None:
                pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                    self.url,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    configure=_configure,
                    open=False,
                    name="folio",
                )
                try:
                    pool.open(wait=True, timeout=15)
                except Exception as e:  # the pool reports an unreachable server as PoolTimeout
                    pool.close()
                    raise StorageError(
                        f"Cannot reach the PostgreSQL database {redacted(self.url)}:"
                        f" {scrub(str(e), self.url)}",
                        code=StorageErrorCode.BUSY,
                    ) from e
                self._pool = pool
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for one transaction; psycopg errors that are not constraint
        violations leave as ``StorageError`` (the repositories translate constraint errors)."""
        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.errors.IntegrityError:
            raise
        except psycopg.Error as e:
            raise pg_storage_error(e, self.url) from e

    def acquire(self) -> psycopg.Connection[Any]:
        """A pooled connection held by its caller (a unit of work) until ``release``."""
        try:
            return self.pool.getconn(timeout=30)
        except Exception as e:
            raise StorageError(
                f"No free connection to the PostgreSQL database {redacted(self.url)} within 30 s"
                f" ({scrub(str(e), self.url)}); the server or the pool is overloaded. Try again"
                " in a moment.",
                code=StorageErrorCode.BUSY,
            ) from e

    def release(self, conn: psycopg.Connection[Any]) -> None:
        """Roll back whatever the holder left uncommitted and give the connection back."""
        try:
            if not conn.closed:
                conn.rollback()
        except psycopg.Error:
            pass  # a broken connection: the pool discards it
        self.pool.putconn(conn)

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
