"""Import jobs: a book file being imported in the background, with its progress."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Self


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ImportJob:
    id: str
    user_id: str
    book_id: str  # the id the book gets (known before it is parsed)
    filename: str
    status: JobStatus
    created_at: datetime
    updated_at: datetime
    stage: str | None = None  # parse, chunk, store, embed
    done: int = 0
    total: int | None = None
    error_code: str | None = None
    error_message: str | None = None

    def moved(self, now: datetime, **changes: object) -> Self:
        return replace(self, updated_at=now, **changes)  # type: ignore[arg-type]

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.DONE, JobStatus.FAILED)
