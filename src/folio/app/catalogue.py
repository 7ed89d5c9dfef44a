"""The catalogue of a reader's library, as an e-reader's catalogue browser (OPDS) shows it: the
books recently added, by author, by series, all of them, and a search, a page at a time, each
book with the file folio imported when it was kept.

Invariants: only the reader's own books appear (the use case runs on the reader's ``Library``);
a book is listed under the name that tells it apart from another of the same title; nothing
about the reading position or the text is shown. A book imported before files were kept is
listed without a file (``has_file`` false), never refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

from folio.app.library import Library
from folio.domain.book_files import BookFileStore, StoredFile
from folio.domain.books import Book
from folio.domain.errors import BookError, BookErrorCode

PER_PAGE = 50
MAX_QUERY_CHARS = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WORD = re.compile(r"\w+")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Listed:
    """A book of the catalogue and whether its imported file is kept."""

    book: Book
    has_file: bool


@dataclass(frozen=True, slots=True)
class Group:
    """An author or a series and how many of the reader's books it holds (``name`` is ``""`` for
    the books without an author)."""

    name: str
    count: int
    updated: datetime


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page (1-based) of ``total`` items, ``per_page`` a page."""

    items: list[T]
    number: int
    total: int
    per_page: int

    @property
    def last(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def start_index(self) -> int:
        return (self.number - 1) * self.per_page + 1


def _page(items: Sequence[T], number: int, per_page: int) -> Page[T]:
    start = (number - 1) * per_page
    return Page(list(items[start : start + per_page]), number, len(items), per_page)


def added_at(book: Book) -> datetime:
    return book.created_at or _EPOCH


def _key(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


class Catalogue:
    """The reader's library as a catalogue. ``library``: the reader's own; ``files``: where the
    imported files are kept."""

    def __init__(self, library: Library, files: BookFileStore, *, per_page: int = PER_PAGE) -> None:
        self._library = library
        self._files = files
        self._per_page = per_page

    def recent(self, page: int = 1) -> Page[Listed]:
        """The books, the last added first."""
        books = sorted(self._library.list_books(), key=added_at, reverse=True)
        return self._listed(books, page)

    def all(self, page: int = 1) -> Page[Listed]:
        """The books by title (the library's order)."""
        return self._listed(self._library.list_books(), page)

    def authors(self, page: int = 1) -> Page[Group]:
        return _page(self._groups(lambda b: b.author), page, self._per_page)

    def series(self, page: int = 1) -> Page[Group]:
        named = [g for g in self._groups(lambda b: b.series) if g.name]
        return _page(named, page, self._per_page)

    def by_author(self, name: str, page: int = 1) -> Page[Listed]:
        """The books of the author ``name`` (``""``: the books without one), by title."""
        wanted = _key(name)
        return self._listed(
            [b for b in self._library.list_books() if _key(b.author) == wanted], page
        )

    def in_series(self, name: str, page: int = 1) -> Page[Listed]:
        """The books of the series ``name``, in the series' order."""
        wanted = _key(name)
        books = [b for b in self._library.list_books() if b.series and _key(b.series) == wanted]
        books.sort(key=lambda b: (b.series_index is None, b.series_index or 0.0, b.title))
        return self._listed(books, page)

    def search(self, query: str, page: int = 1) -> Page[Listed]:
        """The books whose name, author or series hold every word of ``query``; when none does,
        the book the library resolves ``query`` to (an id, a part of a name), or the books it
        finds closest (a misspelt title)."""
        wanted = set(_WORD.findall(query[:MAX_QUERY_CHARS].casefold()))
        if not wanted:
            return self._listed([], page)
        books = self._library.list_books()
        found = [b for b in books if wanted <= _words(b)]
        if not found:
            found = self._resolved(query[:MAX_QUERY_CHARS], books)
        return self._listed(found, page)

    def file(self, book_id: str) -> tuple[Book, StoredFile]:
        """The reader's book and its kept file. Raises ``BookError(NOT_FOUND)`` for another
        user's book, an unknown one, or a book whose file was not kept."""
        book = self._library.get(book_id)
        stored = self._files.open(book.content_hash)
        if stored is None:
            raise BookError(
                f"folio did not keep the file of {book.name!r} (imported before files were "
                "kept): add the same file again to keep it",
                code=BookErrorCode.NOT_FOUND,
            )
        return book, stored

    def _resolved(self, query: str, books: list[Book]) -> list[Book]:
        try:
            return [self._library.resolve(query)]
        except BookError as e:
            candidates = e.details.get("candidates")
            ids = set(candidates) if isinstance(candidates, list) else set()
            return [b for b in books if b.id in ids]

    def _groups(self, field: Callable[[Book], str | None]) -> list[Group]:
        groups: dict[str, tuple[str, int, datetime]] = {}
        for book in self._library.list_books():
            value = " ".join((field(book) or "").split())
            name, count, updated = groups.get(value.casefold(), (value, 0, _EPOCH))
            groups[value.casefold()] = (name, count + 1, max(updated, added_at(book)))
        found = [Group(name, count, updated) for name, count, updated in groups.values()]
        return sorted(found, key=lambda g: (g.name == "", g.name.casefold()))

    def _listed(self, books: Sequence[Book], page: int) -> Page[Listed]:
        shown = _page(books, page, self._per_page)
        kept = self._files.stored(b.content_hash for b in shown.items)
        items = [Listed(b, b.content_hash in kept) for b in shown.items]
        return Page(items, shown.number, shown.total, shown.per_page)


def _words(book: Book) -> set[str]:
    text = " ".join(x for x in (book.name, book.author, book.series) if x)
    return set(_WORD.findall(text.casefold()))
