"""Importing a Calibre library, Calibre being the source of truth on every run: every book, or
those a Calibre search matches (``folio.domain.calibre_search``), each from its preferred file
(EPUB, else PDF, else another format folio reads), with Calibre's title, authors, series, series
index and identifiers.

Invariants:
- a Calibre book is imported once: its uuid is kept as the book's ``calibre`` identifier, so a
  re-run adds only what is new (a file already in the library under another name is recognised
  by its content, as any re-added file);
- a book changed in Calibre since its last import (its ``last_modified``) gets Calibre's title,
  authors, series, index and identifiers again; a book whose preferred file changed (path, size
  or modification time, then its content) is read again in place (``IngestBook.reingest``: its
  conversations stay, its reading position is carried over, never past where the reader was);
- a book imported from the library and no longer in it is reported, and kept unless the caller
  asks to remove such books (removing one deletes its conversations);
- one book that fails (a missing or damaged file) is reported and the others still come in.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from folio.app.ingest import IngestBook, IngestProgress, file_hash
from folio.domain.books import Book
from folio.domain.calibre import (
    CalibreBook,
    CalibreLibrary,
    CalibreSource,
    CalibreSourceRepository,
)
from folio.domain.calibre_search import parse_search
from folio.domain.editions import Carried
from folio.domain.errors import BookError, IngestError, IngestErrorCode
from folio.domain.ports import BookIdentifierRepository, BookRepository
from folio.domain.series import series_fields

CALIBRE_SCHEME = "calibre"
ReadLibrary = Callable[[Path], CalibreLibrary]
ProgressFor = Callable[[CalibreBook, Path], IngestProgress | None]


@dataclass(frozen=True, slots=True)
class Updated:
    """A book brought up to date with Calibre: what changed (``title``, ``authors``,
    ``series``, ``series index``, ``identifiers``, ``text``), and how the reading position
    moved when the text changed."""

    entry: CalibreBook
    book: Book
    changes: tuple[str, ...]
    position: Carried | None = None


@dataclass(slots=True)
class CalibreImport:
    """What one import did, book by book."""

    added: list[tuple[CalibreBook, Book]] = field(default_factory=list)
    updated: list[Updated] = field(default_factory=list)
    existing: list[tuple[CalibreBook, str]] = field(default_factory=list)  # (book, folio id)
    no_format: list[CalibreBook] = field(default_factory=list)
    failed: list[tuple[CalibreBook, str]] = field(default_factory=list)
    removed: list[Book] = field(default_factory=list)  # gone from Calibre, still in folio
    deleted: list[Book] = field(default_factory=list)  # gone from Calibre, removed from folio
    matched: int = 0


class ImportCalibre:
    def __init__(
        self,
        read_library: ReadLibrary,
        ingest: IngestBook,
        books: BookRepository,
        identifiers: BookIdentifierRepository,
        sources: CalibreSourceRepository,
        *,
        remove_book: Callable[[str], object] | None = None,
    ) -> None:
        """``remove_book``: how a book is removed from folio with its conversations
        (``Library.remove``); by default, from ``books``."""
        self._read = read_library
        self._ingest = ingest
        self._books = books
        self._identifiers = identifiers
        self._sources = sources
        self._remove = remove_book or books.delete

    def execute(
        self,
        path: Path,
        *,
        search: str = "",
        progress: ProgressFor | None = None,
        remove_missing: bool = False,
    ) -> CalibreImport:
        """Import the Calibre library at ``path`` and bring the books imported before up to date;
        ``remove_missing`` removes from folio the books no longer in the library (else they are
        only reported). Raises ``CalibreError`` for a library that cannot be read or an invalid
        search (nothing is imported then)."""
        search_for = parse_search(search)
        library = self._read(path)
        report = CalibreImport()
        for entry in library.books:
            if not search_for.matches(entry):
                continue
            report.matched += 1
            self._import_one(library.library_id, entry, report, progress)
        self._gone(library, report, remove=remove_missing)
        return report

    def _import_one(
        self,
        library_id: str,
        entry: CalibreBook,
        report: CalibreImport,
        progress: ProgressFor | None,
    ) -> None:
        known = self._imported_as(entry)
        if known is not None:
            self._refresh(library_id, entry, known, report, progress)
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
            if e.code is not IngestErrorCode.DUPLICATE or not isinstance(book_id, str):
                report.failed.append((entry, e.message))
                return
            self._remember(entry, book_id)  # the same file, added another way before
            self._refresh(library_id, entry, self._books.get(book_id), report, progress)
            return
        except BookError as e:  # metadata folio refuses (a series index out of range, say)
            report.failed.append((entry, e.message))
            return
        self._remember(entry, result.book.id)
        self._record(library_id, entry, result.book.id, file)
        report.added.append((entry, result.book))

    def _refresh(
        self,
        library_id: str,
        entry: CalibreBook,
        book: Book,
        report: CalibreImport,
        progress: ProgressFor | None,
    ) -> None:
        """Bring ``book`` up to date with ``entry``: its metadata when Calibre changed it since
        the last import (or no import recorded it), its text when its file changed."""
        source = self._sources.get(book.id)
        changes: list[str] = []
        carried: Carried | None = None
        try:
            if source is None or source.last_modified != entry.last_modified:
                book, changes = self._apply_metadata(entry, book, recorded=source is not None)
            file = entry.preferred_file()
            if file is not None and self._file_changed(source, file, book):
                result = self._ingest.reingest(
                    book, file, progress=progress(entry, file) if progress else None
                )
                book, carried = result.book, result.carried.how if result.carried else None
                changes.append("text")
        except (IngestError, BookError) as e:
            report.failed.append((entry, e.message))
            return
        self._record(library_id, entry, book.id, entry.preferred_file())
        if changes:
            report.updated.append(Updated(entry, book, tuple(changes), carried))
        else:
            report.existing.append((entry, book.id))

    def _apply_metadata(
        self, entry: CalibreBook, book: Book, *, recorded: bool
    ) -> tuple[Book, list[str]]:
        """Calibre's metadata on ``book``; a series the file named is kept when Calibre names
        none, unless an import recorded Calibre's state before (Calibre took it away since)."""
        changes = []
        title = entry.title.strip() or book.title
        if (title, entry.author) != (book.title, book.author):
            changes += ["title"] if title != book.title else []
            changes += ["authors"] if entry.author != book.author else []
            book = self._books.update_details(book.id, title=title, author=entry.author)
        series, index = series_fields(entry.series, entry.series_index)
        if (series, index) != (book.series, book.series_index) and (series or recorded):
            changes.append("series" if series != book.series else "series index")
            book = self._books.set_series(book.id, series=series, series_index=index)
        wanted = {**entry.identifiers, **({CALIBRE_SCHEME: entry.uuid} if entry.uuid else {})}
        have = self._identifiers.identifiers_of(book.id)
        if any(have.get(k) != v for k, v in wanted.items()):
            changes.append("identifiers")
            self._identifiers.set_identifiers(book.id, wanted)
        return book, changes

    def _file_changed(self, source: CalibreSource | None, file: Path, book: Book) -> bool:
        """Has the book's file changed since the last import? Its path, size and modification
        time say it has not; otherwise its content is compared."""
        try:
            stat = os.stat(file)
        except OSError:
            return False  # a file Calibre lists but that is gone: keep what folio has
        if source is not None and (source.file, source.file_size, source.file_mtime_ns) == (
            str(file),
            stat.st_size,
            stat.st_mtime_ns,
        ):
            return False
        return file_hash(file) != book.content_hash

    def _gone(self, library: CalibreLibrary, report: CalibreImport, *, remove: bool) -> None:
        present = {b.uuid for b in library.books if b.uuid}
        for source in self._sources.of_library(library.library_id):
            if source.calibre_uuid in present:
                continue
            try:
                book = self._books.get(source.book_id)
            except BookError:
                continue  # another user's, or removed from folio already
            if remove:
                self._remove(book.id)
                report.deleted.append(book)
            else:
                report.removed.append(book)

    def _imported_as(self, entry: CalibreBook) -> Book | None:
        if not entry.uuid:
            return None
        for book_id in self._identifiers.books_with(CALIBRE_SCHEME, entry.uuid):
            try:
                return self._books.get(book_id)
            except BookError:
                continue  # another user's, or gone
        return None

    def _remember(self, entry: CalibreBook, book_id: str) -> None:
        identifiers = dict(entry.identifiers)
        if entry.uuid:
            identifiers[CALIBRE_SCHEME] = entry.uuid
        if identifiers:
            self._identifiers.set_identifiers(book_id, identifiers)

    def _record(self, library_id: str, entry: CalibreBook, book_id: str, file: Path | None) -> None:
        if not entry.uuid:
            return
        try:
            stat = os.stat(file) if file is not None else None
        except OSError:
            stat = None
        self._sources.save(
            CalibreSource(
                book_id,
                library_id,
                entry.uuid,
                entry.last_modified,
                str(file) if file is not None else None,
                stat.st_size if stat else None,
                stat.st_mtime_ns if stat else None,
            )
        )
