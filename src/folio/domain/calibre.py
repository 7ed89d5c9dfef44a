"""A Calibre library's books as folio values, and what folio remembers of each import (the
searches over them are ``folio.domain.calibre_search``'s).

Invariants: a book's preferred file is its EPUB, else its PDF, else the first other format folio
reads, in ``PREFERRED_FORMATS`` order; a book with none of them is not importable. A
``CalibreSource`` records, per imported book, the Calibre ``last_modified`` and the file (path,
size, modification time) it was last brought up to date with: Calibre is the source of truth, and
a later import applies what changed since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, Protocol

from folio.domain.errors import FolioError

# The formats folio reads, best first (Calibre names a format by its upper-case extension).
PREFERRED_FORMATS = ("EPUB", "PDF", "HTML", "HTM", "MD", "MARKDOWN", "TXT")


class CalibreErrorCode(StrEnum):
    NOT_FOUND = "NOT_FOUND"
    NOT_CALIBRE = "NOT_CALIBRE"
    DAMAGED = "DAMAGED"
    INVALID_SEARCH = "INVALID_SEARCH"


class CalibreError(FolioError):
    codes: ClassVar[type[StrEnum]] = CalibreErrorCode
    code: CalibreErrorCode = CalibreErrorCode.NOT_CALIBRE


@dataclass(frozen=True, slots=True)
class CalibreBook:
    """One book of a Calibre library: its metadata and the files of its formats."""

    calibre_id: int
    uuid: str | None
    title: str
    authors: tuple[str, ...] = ()
    series: str | None = None
    series_index: float | None = None
    tags: tuple[str, ...] = ()
    identifiers: dict[str, str] = field(default_factory=dict)
    formats: dict[str, Path] = field(default_factory=dict)  # "EPUB" -> its file
    last_modified: str | None = None  # Calibre's books.last_modified, as Calibre wrote it

    @property
    def author(self) -> str | None:
        """Calibre's way of writing several authors: joined by " & "."""
        return " & ".join(self.authors) or None

    def preferred_file(self) -> Path | None:
        for fmt in PREFERRED_FORMATS:
            if fmt in self.formats:
                return self.formats[fmt]
        return None


@dataclass(frozen=True, slots=True)
class CalibreLibrary:
    """A Calibre library read at one moment: its identity (Calibre's ``library_id`` uuid, else
    its folder) and every book in it."""

    library_id: str
    books: tuple[CalibreBook, ...] = ()


@dataclass(frozen=True, slots=True)
class CalibreSource:
    """Where a folio book came from in Calibre, as of its last import: the library and book
    (uuid), Calibre's ``last_modified`` then, and the file read (its size and modification time
    in nanoseconds, so that an unchanged file is not read again)."""

    book_id: str
    library_id: str
    calibre_uuid: str
    last_modified: str | None
    file: str | None = None
    file_size: int | None = None
    file_mtime_ns: int | None = None


class CalibreSourceRepository(Protocol):
    """What folio remembers of each book imported from Calibre; forgotten with the book."""

    def get(self, book_id: str) -> CalibreSource | None: ...

    def save(self, source: CalibreSource) -> None:
        """Record (or replace) the book's source."""
        ...

    def of_library(self, library_id: str) -> list[CalibreSource]:
        """Every book imported from that library (of any user: callers check the owner)."""
        ...
