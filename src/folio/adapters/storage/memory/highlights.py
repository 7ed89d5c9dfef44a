"""An in-memory ``HighlightRepository`` for tests and demos, with the SQL store's behaviour."""

from __future__ import annotations

from collections.abc import Sequence

from folio.domain.highlights import Highlight, ImportedHighlight, book_order


class InMemoryHighlightStore:
    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str], Highlight] = {}
        self._pending: dict[tuple[str, str, str, str], ImportedHighlight] = {}

    def add(self, highlights: Sequence[Highlight]) -> int:
        new = 0
        for h in highlights:
            ident = (h.book_id, h.user_id, h.key)
            if ident not in self._rows:
                self._rows[ident] = h
                new += 1
        return new

    def of_book(self, book_id: str, user_id: str) -> list[Highlight]:
        rows = [h for h in self._rows.values() if h.book_id == book_id and h.user_id == user_id]
        return sorted(rows, key=book_order)

    def delete(self, book_id: str, user_id: str, highlight_id: str) -> bool:
        for ident, h in list(self._rows.items()):
            if (h.id, h.book_id, h.user_id) == (highlight_id, book_id, user_id):
                del self._rows[ident]
                return True
        return False

    def keep_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> int:
        new = 0
        for e in entries:
            ident = (user_id, e.title, e.author or "", e.key)
            if ident not in self._pending:
                self._pending[ident] = e
                new += 1
        return new

    def pending(self, user_id: str) -> list[ImportedHighlight]:
        return [e for ident, e in self._pending.items() if ident[0] == user_id]

    def drop_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> None:
        for e in entries:
            self._pending.pop((user_id, e.title, e.author or "", e.key), None)
