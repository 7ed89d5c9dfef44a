"""Book imports as background jobs: ``start`` answers at once with the job (and the id the book
will have); the import runs in a worker and records its stage and progress in the job, which any
server process can read. A failed import stores no book and says why in the job."""

from __future__ import annotations

import logging
import re
import shutil
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from folio.app.ingest import IngestBook
from folio.domain.books import BookFormat
from folio.domain.errors import FolioError
from folio.domain.jobs import ImportJob, JobStatus
from folio.domain.ports import ImportJobRepository
from folio.domain.telemetry import NoTelemetry, Telemetry

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.5
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def _utcnow() -> datetime:
    return datetime.now(UTC)


class JobErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"


class JobError(FolioError):
    codes: ClassVar[type[StrEnum]] = JobErrorCode
    code: JobErrorCode = JobErrorCode.NOT_FOUND


class _JobProgress:
    """Writes the job's stage at once (and reports it to the telemetry) and its progress at most
    every ``PROGRESS_EVERY_S``."""

    def __init__(
        self,
        jobs: ImportJobRepository,
        job: ImportJob,
        clock: Callable[[], datetime],
        telemetry: Telemetry,
    ):
        self._jobs = jobs
        self.job = job
        self._clock = clock
        self._telemetry = telemetry
        self._written = 0.0

    def stage(self, name: str, total: int | None = None) -> None:
        self._telemetry.import_stage(name)
        self._save(stage=name, total=total, done=0, force=True)

    def advance(self, n: int = 1) -> None:
        self._save(done=self.job.done + n)

    def _save(self, *, force: bool = False, **changes: object) -> None:
        self.job = self.job.moved(self._clock(), **changes)
        now = time.monotonic()
        if force or now - self._written >= PROGRESS_EVERY_S:
            self._jobs.save(self.job)
            self._written = now


class ImportBooks:
    """``make_ingest(book_id)`` builds the ingest use case (on the user's books) that gives the
    new book ``book_id``; ``sniff(path, filename)`` tells the format from the content; ``spawn``
    runs a job in the background (a thread in the server); ``telemetry`` counts the imports
    entering each stage (``queued``, the ingest's stages, then ``done`` or ``failed``)."""

    def __init__(
        self,
        jobs: ImportJobRepository,
        make_ingest: Callable[[str], IngestBook],
        sniff: Callable[[Path, str], BookFormat],
        spawn: Callable[[Callable[[], None]], None],
        user_id: str,
        *,
        clock: Callable[[], datetime] = _utcnow,
        telemetry: Telemetry | None = None,
    ) -> None:
        self._telemetry = telemetry or NoTelemetry()
        self._jobs = jobs
        self._make_ingest = make_ingest
        self._sniff = sniff
        self._spawn = spawn
        self._user_id = user_id
        self._clock = clock

    def start(
        self,
        upload: Path,
        filename: str,
        *,
        title: str | None = None,
        author: str | None = None,
        position: str | None = None,
    ) -> ImportJob:
        """Check the file's type (``IngestError(UNSUPPORTED|EMPTY)`` at once), then import it in
        the background. ``upload`` is moved away: the job owns it and deletes it at the end.
        ``position``: how far the reader has read, in their words (see ``IngestBook.execute``);
        a position that names no place in the book fails the job (``INVALID_POSITION``)."""
        fmt = self._sniff(upload, filename)
        stem = _UNSAFE.sub("_", Path(filename or "book").stem).strip(" ._")[:100] or "book"
        named = upload.parent / f"{stem}.{fmt.value}"
        upload.rename(named)
        now = self._clock()
        job = ImportJob(
            id=uuid.uuid4().hex,
            user_id=self._user_id,
            book_id=uuid.uuid4().hex,
            filename=named.name,
            status=JobStatus.QUEUED,
            created_at=now,
            updated_at=now,
        )
        self._jobs.save(job)
        self._telemetry.import_stage(JobStatus.QUEUED.value)
        self._spawn(lambda: self._run(job, named, title, author, position))
        return job

    def get(self, job_id: str) -> ImportJob:
        job = self._jobs.get(job_id)
        if job is None or job.user_id != self._user_id:
            raise JobError(f"No import job {job_id!r}")
        return job

    def _run(
        self,
        job: ImportJob,
        path: Path,
        title: str | None,
        author: str | None,
        position: str | None = None,
    ) -> None:
        running = job.moved(self._clock(), status=JobStatus.RUNNING)
        progress = _JobProgress(self._jobs, running, self._clock, self._telemetry)
        self._jobs.save(progress.job)
        try:
            ingest = self._make_ingest(job.book_id)
            result = ingest.execute(
                path, title=title, author=author, progress=progress, position=position
            )
            done = progress.job.moved(self._clock(), status=JobStatus.DONE, book_id=result.book.id)
            self._jobs.save(done)
            self._telemetry.import_stage(JobStatus.DONE.value)
        except FolioError as e:
            failed = progress.job.moved(
                self._clock(), status=JobStatus.FAILED, error_code=e.code, error_message=e.message
            )
            self._jobs.save(failed)
            self._telemetry.import_stage(JobStatus.FAILED.value)
        except Exception as e:
            log.exception("Import job %s failed", job.id)
            failed = progress.job.moved(
                self._clock(),
                status=JobStatus.FAILED,
                error_code="INTERNAL",
                error_message=f"The import failed unexpectedly ({type(e).__name__})",
            )
            self._jobs.save(failed)
            self._telemetry.import_stage(JobStatus.FAILED.value)
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)
