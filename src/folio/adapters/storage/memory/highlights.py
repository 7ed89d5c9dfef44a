"""An in-memory ``HighlightRepository`` for tests and demos, with the SQL store's behaviour."""

from __future__ import annotations

from collections.abc import Sequence

from folio.domain.highlights import Highlight, book_order


class InMemoryHighlightStore:
    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str], Highlight] = {}

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
