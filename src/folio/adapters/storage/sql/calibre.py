"""What folio remembers of each book imported from Calibre (table ``calibre_sources`` of SQLite
migration 019 / PostgreSQL migration 013), on the SQL runners of ``sql.sync``.

Invariant: one row per book, replaced by each import that brings the book up to date; deleted
with the book.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from folio.adapters.storage.sql.sync import Run
from folio.domain.calibre import CalibreSource

_COLUMNS = "book_id, library_id, calibre_uuid, last_modified, file, file_size, file_mtime_ns"


class SqlCalibreSourceStore:
    """Implements ``CalibreSourceRepository`` on one SQL runner."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def get(self, book_id: str) -> CalibreSource | None:
        rows = self._run(f"SELECT {_COLUMNS} FROM calibre_sources WHERE book_id = ?", (book_id,))
        return _source(rows[0]) if rows else None

    def save(self, source: CalibreSource) -> None:
        self._run(
            f"INSERT INTO calibre_sources ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (book_id) DO UPDATE SET library_id = excluded.library_id,"
            " calibre_uuid = excluded.calibre_uuid, last_modified = excluded.last_modified,"
            " file = excluded.file, file_size = excluded.file_size,"
            " file_mtime_ns = excluded.file_mtime_ns",
            (source.book_id, source.library_id, source.calibre_uuid, source.last_modified,
             source.file, source.file_size, source.file_mtime_ns),
        )  # fmt: skip

    def of_library(self, library_id: str) -> list[CalibreSource]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM calibre_sources WHERE library_id = ? ORDER BY book_id",
            (library_id,),
        )
        return [_source(r) for r in rows]


def _source(row: Sequence[Any]) -> CalibreSource:
    def number(value: Any) -> int | None:
        return None if value is None else int(value)

    return CalibreSource(
        book_id=str(row[0]), library_id=str(row[1]), calibre_uuid=str(row[2]),
        last_modified=None if row[3] is None else str(row[3]),
        file=None if row[4] is None else str(row[4]),
        file_size=number(row[5]), file_mtime_ns=number(row[6]),
    )  # fmt: skip
