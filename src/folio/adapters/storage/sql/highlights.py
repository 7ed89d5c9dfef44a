"""The reader's highlights in SQLite or PostgreSQL (table ``highlights`` of SQLite migration 015 /
PostgreSQL migration 009; those waiting for their book in ``pending_highlights``, 016 / 010), on the
SQL runners of ``sql.sync``.

Invariant: one row per (book, owner, key), one waiting row per (owner, title, author, key):
importing the same file again adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any

from folio.adapters.storage.sql.sync import Run
from folio.domain.highlights import Highlight, HighlightKind, ImportedHighlight, book_order

_COLUMNS = (
    "id, book_id, user_id, kind, text, note, chapter, location, char_start, char_end, created,"
    " source, key"
)
_ROW = f"({', '.join('?' * 13)})"
_BATCH = 500  # rows per INSERT (13 parameters each: under SQLite's 32,766 and PostgreSQL's 65,535)


class SqlHighlightStore:
    """Implements ``HighlightRepository`` on one SQL runner (``sqlite_runner``,
    ``postgres_runner``)."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def add(self, highlights: Sequence[Highlight]) -> int:
        """One query for the keys each (book, owner) has, then the new rows in a few multi-row
        INSERTs (not two statements, each its own transaction, per row)."""
        known: dict[tuple[str, str], set[str]] = {}
        new: dict[tuple[str, str, str], Highlight] = {}
        for h in highlights:
            owner = (h.book_id, h.user_id)
            if owner not in known:
                rows = self._run(
                    "SELECT key FROM highlights WHERE book_id = ? AND user_id = ?", owner
                )
                known[owner] = {str(r[0]) for r in rows}
            if h.key not in known[owner]:
                new.setdefault((h.book_id, h.user_id, h.key), h)
        fresh = list(new.values())
        for start in range(0, len(fresh), _BATCH):
            batch = fresh[start : start + _BATCH]
            self._run(
                f"INSERT INTO highlights ({_COLUMNS}) VALUES {', '.join([_ROW] * len(batch))}"
                " ON CONFLICT (book_id, user_id, key) DO NOTHING",
                tuple(value for h in batch for value in _values(h)),
            )
        return len(fresh)

    def of_book(self, book_id: str, user_id: str) -> list[Highlight]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM highlights WHERE book_id = ? AND user_id = ?",
            (book_id, user_id),
        )
        return sorted((_highlight(r) for r in rows), key=book_order)

    def delete(self, book_id: str, user_id: str, highlight_id: str) -> bool:
        found = self._run(
            "SELECT id FROM highlights WHERE id = ? AND book_id = ? AND user_id = ?",
            (highlight_id, book_id, user_id),
        )
        if not found:
            return False
        self._run(
            "DELETE FROM highlights WHERE id = ? AND book_id = ? AND user_id = ?",
            (highlight_id, book_id, user_id),
        )
        return True

    def keep_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> int:
        known = {_pending_id(e) for e in self.pending(user_id)}
        rows = self._run(
            "SELECT COALESCE(MAX(seq), 0) FROM pending_highlights WHERE user_id = ?", (user_id,)
        )
        seq = int(rows[0][0]) if rows else 0
        new = 0
        for entry in entries:
            ident = _pending_id(entry)
            if ident in known:
                continue
            known.add(ident)
            seq, new = seq + 1, new + 1
            self._run(
                "INSERT INTO pending_highlights (user_id, title, author, key, entry, seq)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (user_id, *ident, json.dumps(asdict(entry), ensure_ascii=False), seq),
            )
        return new

    def pending(self, user_id: str) -> list[ImportedHighlight]:
        rows = self._run(
            "SELECT entry FROM pending_highlights WHERE user_id = ? ORDER BY seq", (user_id,)
        )
        return [e for r in rows if (e := _entry(str(r[0]))) is not None]

    def drop_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> None:
        for entry in entries:
            self._run(
                "DELETE FROM pending_highlights WHERE user_id = ? AND title = ? AND author = ?"
                " AND key = ?",
                (user_id, *_pending_id(entry)),
            )


def _pending_id(entry: ImportedHighlight) -> tuple[str, str, str]:
    return entry.title, entry.author or "", entry.key


_FIELDS = {f.name for f in fields(ImportedHighlight)}


def _entry(raw: str) -> ImportedHighlight | None:
    """A waiting entry as stored; None for one no longer readable."""
    try:
        data = json.loads(raw)
        values = {k: v for k, v in data.items() if k in _FIELDS}
        values["kind"] = HighlightKind(values["kind"])
        return ImportedHighlight(**values)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _values(h: Highlight) -> tuple[Any, ...]:
    return (h.id, h.book_id, h.user_id, h.kind.value, h.text, h.note, h.chapter, h.location,
            h.char_start, h.char_end, h.created, h.source, h.key)  # fmt: skip


def _highlight(row: Sequence[Any]) -> Highlight:
    return Highlight(
        id=str(row[0]), book_id=str(row[1]), user_id=str(row[2]), kind=HighlightKind(row[3]),
        text=str(row[4]), note=row[5], chapter=row[6], location=row[7],
        char_start=None if row[8] is None else int(row[8]),
        char_end=None if row[9] is None else int(row[9]),
        created=row[10], source=str(row[11]), key=str(row[12]),
    )  # fmt: skip
