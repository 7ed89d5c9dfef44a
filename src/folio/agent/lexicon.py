"""Each book's lexicon for the agent (the people tool, the offline policy): the one stored with
the book at import, read once per process and kept.

The lexicon itself (what a name is, how it is built) is the domain's (``folio.domain.lexicon``).

Invariant: a book gets the same lexicon whether it was built at import and stored, or (a book
imported before lexicons were stored, or by an older way of building them) built here from its
whole text on first use; that one is then stored, so the next process reads it.
"""

from __future__ import annotations

import logging

from folio.domain.books import Book
from folio.domain.errors import FolioError
from folio.domain.lexicon import Lexicon
from folio.domain.ports import BookRepository

log = logging.getLogger(__name__)


class Lexicons:
    """Each book's lexicon, read from the store (or built from the whole text and stored when
    the store has none) and kept (a few books at most)."""

    def __init__(self, *, keep: int = 8) -> None:
        self._keep = keep
        self._kept: dict[tuple[str, str, int], Lexicon] = {}

    def get(self, book: Book, books: BookRepository) -> Lexicon:
        key = (book.id, book.content_hash, book.char_count)
        if key not in self._kept:
            if len(self._kept) >= self._keep:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = books.lexicon(book.id) or _build(book, books)
        return self._kept[key]


def _build(book: Book, books: BookRepository) -> Lexicon:
    """A book stored without a lexicon: build it from the text and store it. A store that cannot
    keep it (a read-only library, a book removed meanwhile) still gets its answer."""
    lexicon = Lexicon.of(books.get_text(book.id, 0, book.char_count))
    try:
        books.save_lexicon(book.id, lexicon)
    except FolioError as e:
        log.warning("The lexicon of book %s was built but not stored: %s", book.id[:8], e)
    return lexicon
