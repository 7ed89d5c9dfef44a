"""A Calibre library's books as folio values, and Calibre-style searches over them.

A search is a list of terms, all of which must match (Calibre's implicit ``and``): ``field:value``
with field ``title``, ``author`` / ``authors``, ``series``, ``tag`` / ``tags`` or ``identifier``
(``identifier:isbn:978...``), a bare word (title or author), a ``"quoted phrase"``, ``=value`` for
an exact (case-insensitive) match instead of "contains", and a leading ``-`` or ``not`` to exclude.

Invariant: a book's preferred file is its EPUB, else its PDF, else the first other format folio
reads, in ``PREFERRED_FORMATS`` order; a book with none of them is not importable.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from folio.domain.errors import FolioError

# The formats folio reads, best first (Calibre names a format by its upper-case extension).
PREFERRED_FORMATS = ("EPUB", "PDF", "HTML", "HTM", "MD", "MARKDOWN", "TXT")
MAX_SEARCH_CHARS = 500
_FIELDS = {
    "title": "title",
    "author": "authors",
    "authors": "authors",
    "series": "series",
    "tag": "tags",
    "tags": "tags",
    "identifier": "identifiers",
    "identifiers": "identifiers",
}


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
class SearchTerm:
    field: str | None  # None: title or author
    value: str
    exact: bool = False
    negated: bool = False

    def matches(self, book: CalibreBook) -> bool:
        return self._found(book) != self.negated

    def _found(self, book: CalibreBook) -> bool:
        wanted = self.value.casefold()
        if self.field == "identifiers":
            scheme, _, value = wanted.partition(":")
            found = {k.casefold(): v.casefold() for k, v in book.identifiers.items()}
            if scheme not in found or not value:
                return scheme in found
            exact = value.startswith("=")
            return found[scheme] == value[1:] if exact else value in found[scheme]
        return any(self._same(v.casefold(), wanted) for v in self._values(book))

    def _values(self, book: CalibreBook) -> tuple[str, ...]:
        if self.field == "title":
            return (book.title,)
        if self.field == "authors":
            return book.authors
        if self.field == "series":
            return (book.series,) if book.series else ()
        if self.field == "tags":
            return book.tags
        return (book.title, *book.authors)

    def _same(self, have: str, wanted: str) -> bool:
        return have == wanted if self.exact else wanted in have


def parse_search(query: str) -> tuple[SearchTerm, ...]:
    """The terms of a Calibre-style search (see the module docstring).

    Raises:
        CalibreError: ``INVALID_SEARCH`` for an unknown field, an unclosed quote or a search
            longer than ``MAX_SEARCH_CHARS``.
    """
    if len(query) > MAX_SEARCH_CHARS:
        raise CalibreError(
            f"A Calibre search has at most {MAX_SEARCH_CHARS} characters",
            code=CalibreErrorCode.INVALID_SEARCH,
        )
    try:
        words = shlex.split(query)
    except ValueError as e:
        raise CalibreError(
            f"Invalid search {query!r}: {e}", code=CalibreErrorCode.INVALID_SEARCH
        ) from e
    terms: list[SearchTerm] = []
    negate = False
    for word in words:
        if word.casefold() in {"and", "not"}:
            negate = negate or word.casefold() == "not"
            continue
        terms.append(_term(word, negate))
        negate = False
    return tuple(terms)


def _term(word: str, negated: bool) -> SearchTerm:
    if word.startswith("-") and len(word) > 1:
        negated, word = True, word[1:]
    name, colon, value = word.partition(":")
    fld: str | None = None
    if colon and name.casefold() in _FIELDS:
        fld, word = _FIELDS[name.casefold()], value
    elif colon and name.isalpha() and name.casefold() not in _FIELDS:
        known = ", ".join(sorted({f"{k}:" for k in _FIELDS}))
        raise CalibreError(
            f"Unknown search field {name + ':'!r}; folio searches {known}",
            code=CalibreErrorCode.INVALID_SEARCH,
        )
    exact = word.startswith("=")
    return SearchTerm(fld, word[1:] if exact else word, exact=exact, negated=negated)


def matches_all(book: CalibreBook, terms: tuple[SearchTerm, ...]) -> bool:
    return all(term.matches(book) for term in terms)
