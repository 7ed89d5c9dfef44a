"""An in-memory ``CalibreSourceRepository`` for tests and demos, with the SQL store's behaviour
(but nothing is forgotten with a deleted book: callers check that the book is still there)."""

from __future__ import annotations

from folio.domain.calibre import CalibreSource


class InMemoryCalibreSources:
    def __init__(self) -> None:
        self.rows: dict[str, CalibreSource] = {}

    def get(self, book_id: str) -> CalibreSource | None:
        return self.rows.get(book_id)

    def save(self, source: CalibreSource) -> None:
        self.rows[source.book_id] = source

    def of_library(self, library_id: str) -> list[CalibreSource]:
        return sorted(
            (s for s in self.rows.values() if s.library_id == library_id), key=lambda s: s.book_id
        )
