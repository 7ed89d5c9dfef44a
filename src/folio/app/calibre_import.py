"""Importing a Calibre library: every book, or those a Calibre-style search matches, each from its
preferred file (EPUB, else PDF, else another format folio reads), with Calibre's title, authors,
series, series index and identifiers.

Invariants: a Calibre book is imported once: its uuid is kept as the book's ``calibre``
identifier, so a re-run adds only what is new (a file already in the library under another name
is recognised by its content, as any re-added file); one book that fails (a missing or damaged
file) is reported and the others still come in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from folio.app.ingest import IngestBook, IngestProgress
from folio.domain.books import Book
from folio.domain.calibre import CalibreBook, matches_all, parse_search
from folio.domain.errors import BookError, IngestError, IngestErrorCode
from folio.domain.ports import BookIdentifierRepository, BookRepository

CALIBRE_SCHEME = "calibre"
ReadLibrary = Callable[[Path], list[CalibreBook]]
ProgressFor = Callable[[CalibreBook, Path], IngestProgress | None]


@dataclass(slots=True)
class CalibreImport:
    """What one import did, book by book."""

    added: list[tuple[CalibreBook, Book]] = field(default_factory=list)
    existing: list[tuple[CalibreBook, str]] = field(default_factory=list)  # (book, folio id)
    no_format: list[CalibreBook] = field(default_factory=list)
    failed: list[tuple[CalibreBook, str]] = field(default_factory=list)
    matched: int = 0


class ImportCalibre:
    def __init__(
        self,
        read_library: ReadLibrary,
        ingest: IngestBook,
        books: BookRepository,
        identifiers: BookIdentifierRepository,
    ) -> None:
        self._read = read_library
        self._ingest = ingest
        self._books = books
        self._identifiers = identifiers

    def execute(
        self, path: Path, *, search: str = "", progress: ProgressFor | None = None
    ) -> CalibreImport:
        """Import the Calibre library at ``path``. Raises ``CalibreError`` for a library that
        cannot be read or an invalid search (nothing is imported then)."""
        terms = parse_search(search)
        report = CalibreImport()
        for entry in self._read(path):
            if not matches_all(entry, terms):
                continue
            report.matched += 1
            self._import_one(entry, report, progress)
        return report

    def _import_one(
        self, entry: CalibreBook, report: CalibreImport, progress: ProgressFor | None
    ) -> None:
        known = self._imported_as(entry)
        if known is not None:
            report.existing.append((entry, known))
            return
        file = entry.preferred_file()
        if file is None:
            report.no_format.append(entry)
            return
        try:
            result = self._ingest.execute(
                file,
                title=entry.title,
                author=entry.author,
                series=entry.series,
                series_index=entry.series_index,
                progress=progress(entry, file) if progress else None,
            )
        except IngestError as e:
            book_id = e.details.get("book_id")
            if e.code is IngestErrorCode.DUPLICATE and isinstance(book_id, str):
                self._remember(entry, book_id)
                report.existing.append((entry, book_id))
            else:
                report.failed.append((entry, e.message))
            return
        except BookError as e:  # metadata folio refuses (a series index out of range, say)
            report.failed.append((entry, e.message))
            return
        self._remember(entry, result.book.id)
        report.added.append((entry, result.book))

    def _imported_as(self, entry: CalibreBook) -> str | None:
        if not entry.uuid:
            return None
        for book_id in self._identifiers.books_with(CALIBRE_SCHEME, entry.uuid):
            try:
                return self._books.get(book_id).id
            except BookError:
                continue  # another user's, or gone
        return None

    def _remember(self, entry: CalibreBook, book_id: str) -> None:
        identifiers = dict(entry.identifiers)
        if entry.uuid:
            identifiers[CALIBRE_SCHEME] = entry.uuid
        if identifiers:
            self._identifiers.set_identifiers(book_id, identifiers)
