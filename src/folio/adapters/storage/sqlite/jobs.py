"""Import jobs in the SQLite database (table ``import_jobs``, migration 006)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from folio.adapters.storage.sqlite.db import Database, transaction
from folio.domain.jobs import ImportJob, JobStatus

_COLUMNS = (
    "id, user_id, book_id, filename, status, stage, done, total, error_code, error_message,"
    " created_at, updated_at"
)


class SqliteImportJobs:
    """Implements ``ImportJobRepository``. A connection per call (jobs are written from worker
    threads)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def save(self, job: ImportJob) -> None:
        conn = self._db.connect()
        try:
            with transaction(conn, immediate=True):
                conn.execute(
                    f"INSERT OR REPLACE INTO import_jobs ({_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        job.id, job.user_id, job.book_id, job.filename, job.status.value,
                        job.stage, job.done, job.total, job.error_code, job.error_message,
                        job.created_at.isoformat(), job.updated_at.isoformat(),
                    ),
                )  # fmt: skip
        finally:
            conn.close()

    def get(self, job_id: str) -> ImportJob | None:
        conn = self._db.connect()
        try:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM import_jobs WHERE id = ?", (job_id,)
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else _job(row)

    def fail_unfinished(self, message: str) -> int:
        conn = self._db.connect()
        try:
            with transaction(conn, immediate=True):
                return conn.execute(
                    "UPDATE import_jobs SET status = 'failed', error_code = 'INTERRUPTED',"
                    " error_message = ?, updated_at = ? WHERE status IN ('queued', 'running')",
                    (message, datetime.now(UTC).isoformat()),
                ).rowcount
        finally:
            conn.close()


def _job(row: sqlite3.Row) -> ImportJob:
    return ImportJob(
        id=row["id"],
        user_id=row["user_id"],
        book_id=row["book_id"],
        filename=row["filename"],
        status=JobStatus(row["status"]),
        stage=row["stage"],
        done=int(row["done"]),
        total=None if row["total"] is None else int(row["total"]),
        error_code=row["error_code"],
        error_message=row["error_message"],
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )
