"""Import jobs in PostgreSQL (table ``import_jobs``).

Several servers share the table, so "unfinished" cannot mean "queued or running" as it does for
SQLite, where only one server runs on the file: a job another live server is importing is running
too. A live import saves its stage and progress as it goes (every second or so while embedding),
so a job whose row has not changed for ``STALE_AFTER`` belongs to a process that stopped; only
those are failed, and a server starting beside others never fails the imports they are running.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from folio.adapters.storage.postgres.db import PgDatabase
from folio.domain.jobs import ImportJob, JobStatus

STALE_AFTER = timedelta(minutes=10)
_COLUMNS = (
    "id, user_id, book_id, filename, status, stage, done, total, error_code, error_message,"
    " created_at, updated_at"
)


class PostgresImportJobs:
    """Implements ``ImportJobRepository``; safe to share between threads."""

    def __init__(self, db: PgDatabase, *, stale_after: timedelta = STALE_AFTER) -> None:
        self._db = db
        self._stale_after = stale_after

    def save(self, job: ImportJob) -> None:
        with self._db.connection() as conn:
            conn.execute(
                f"INSERT INTO import_jobs ({_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id,"
                " book_id = excluded.book_id, filename = excluded.filename,"
                " status = excluded.status, stage = excluded.stage, done = excluded.done,"
                " total = excluded.total, error_code = excluded.error_code,"
                " error_message = excluded.error_message, updated_at = excluded.updated_at"
                # a job declared dead (failed by a starting server) is not brought back by a
                # late save of the process that was running it
                " WHERE import_jobs.status IN ('queued', 'running')",
                (
                    job.id, job.user_id, job.book_id, job.filename, job.status.value,
                    job.stage, job.done, job.total, job.error_code, job.error_message,
                    job.created_at.isoformat(), job.updated_at.isoformat(),
                ),
            )  # fmt: skip

    def get(self, job_id: str) -> ImportJob | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM import_jobs WHERE id = %s", (job_id,)
            ).fetchone()
        return None if row is None else _job(row)

    def fail_unfinished(self, message: str) -> int:
        now = datetime.now(UTC)
        cutoff = now - self._stale_after
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT id, updated_at FROM import_jobs WHERE status IN ('queued', 'running')"
                " FOR UPDATE SKIP LOCKED"
            ).fetchall()
            stale = [r[0] for r in rows if datetime.fromisoformat(r[1]) < cutoff]
            if not stale:
                return 0
            conn.execute(
                "UPDATE import_jobs SET status = 'failed', error_code = 'INTERRUPTED',"
                " error_message = %s, updated_at = %s WHERE id = ANY(%s)",
                (message, now.isoformat(), stale),
            )
        return len(stale)


def _job(row: tuple[Any, ...]) -> ImportJob:
    return ImportJob(
        id=row[0],
        user_id=row[1],
        book_id=row[2],
        filename=row[3],
        status=JobStatus(row[4]),
        stage=row[5],
        done=int(row[6]),
        total=None if row[7] is None else int(row[7]),
        error_code=row[8],
        error_message=row[9],
        created_at=datetime.fromisoformat(row[10]),
        updated_at=datetime.fromisoformat(row[11]),
    )
