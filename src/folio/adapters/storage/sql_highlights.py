"""The reader's highlights in SQLite or PostgreSQL (table ``highlights`` of SQLite migration 015 /
PostgreSQL migration 009), on the SQL runners of ``sql_sync``.

Invariant: one row per (book, owner, key): importing the same file again adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from folio.adapters.storage.memory_highlights import book_order
from folio.adapters.storage.sql_sync import Run
from folio.domain.highlights import Highlight, HighlightKind

_COLUMNS = (
    "id, book_id, user_id, kind, text, note, chapter, location, char_start, char_end, created,"
    " source, key"
)


class SqlHighlightStore:
    """Implements ``HighlightRepository`` on one SQL runner (``sqlite_runner``,
    ``postgres_runner``)."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def add(self, highlights: Sequence[Highlight]) -> int:
        new = 0
        for h in highlights:
            known = self._run(
                "SELECT 1 FROM highlights WHERE book_id = ? AND user_id = ? AND key = ?",
                (h.book_id, h.user_id, h.key),
            )
            if known:
                continue
            self._run(
                f"INSERT INTO highlights ({_COLUMNS}) VALUES ({', '.join('?' * 13)})"
                " ON CONFLICT (book_id, user_id, key) DO NOTHING",
                (h.id, h.book_id, h.user_id, h.kind.value, h.text, h.note, h.chapter, h.location,
                 h.char_start, h.char_end, h.created, h.source, h.key),
            )  # fmt: skip
            new += 1
        return new

    def of_book(self, book_id: str, user_id: str) -> list[Highlight]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM highlights WHERE book_id = ? AND user_id = ?",
            (book_id, user_id),
        )
        return sorted((_highlight(r) for r in rows), key=book_order)


def _highlight(row: Sequence[Any]) -> Highlight:
    return Highlight(
        id=str(row[0]), book_id=str(row[1]), user_id=str(row[2]), kind=HighlightKind(row[3]),
        text=str(row[4]), note=row[5], chapter=row[6], location=row[7],
        char_start=None if row[8] is None else int(row[8]),
        char_end=None if row[9] is None else int(row[9]),
        created=row[10], source=str(row[11]), key=str(row[12]),
    )  # fmt: skip
