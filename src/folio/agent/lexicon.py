"""Each book's lexicon for the agent (the people tool, the offline policy): the one stored with
the book at import, read once per process and kept.

The lexicon itself (what a name is, how it is built) is the domain's (``folio.domain.lexicon``);
its names are re-exported here for the modules that import them from this one.

Invariant: a book gets the same lexicon whether it was built at import and stored, or (a book
imported before lexicons were stored, or by an older way of building them) built here from its
whole text on first use; that one is then stored, so the next process reads it.
"""

from __future__ import annotations

import logging
from typing import Protocol

from folio.domain.books import Book
from folio.domain.errors import FolioError
from folio.domain.lexicon import RUN, Lexicon, Name, normal_form, runs

__all__ = ["RUN", "Lexicon", "LexiconStore", "Lexicons", "Name", "normal_form", "runs"]

log = logging.getLogger(__name__)


class LexiconStore(Protocol):
    """What ``Lexicons`` needs of a ``BookRepository``."""

    def lexicon(self, book_id: str) -> Lexicon | None: ...

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None: ...

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str: ...


class Lexicons:
    """Each book's lexicon, read from the store (or built from the whole text and stored when
    the store has none) and kept (a few books at most)."""

    def __init__(self, *, keep: int = 8) -> None:
        self._keep = keep
        self._kept: dict[tuple[str, str, int], Lexicon] = {}

    def get(self, book: Book, books: LexiconStore) -> Lexicon:
        key = (book.id, book.content_hash, book.char_count)
        if key not in self._kept:
            if len(self._kept) >= self._keep:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = books.lexicon(book.id) or _build(book, books)
        return self._kept[key]


def _build(book: Book, books: LexiconStore) -> Lexicon:
    """A book stored without a lexicon: build it from the text and store it. A store that cannot
    keep it (a read-only library, a book removed meanwhile) still gets its answer."""
    lexicon = Lexicon.of(books.get_text(book.id, 0, book.char_count))
    try:
        books.save_lexicon(book.id, lexicon)
    except FolioError as e:
        log.warning("The lexicon of book %s was built but not stored: %s", book.id[:8], e)
    return lexicon
