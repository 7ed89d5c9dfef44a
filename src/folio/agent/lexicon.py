"""Each book's lexicon for the agent (the people tool, the offline policy), as far as the
reading window shows the book: the one stored with the book at import (read once per process and
kept) where the window shows all of it, else one built from the text the window shows.

The lexicon itself (what a name is, how it is built) is the domain's (``folio.domain.lexicon``).

Invariants: a name, an alias or a kind is learned only from text the window shows (``read``): a
surname the book gives later is never an alias of a first name met early. A book gets the same
whole-book lexicon whether it was built at import and stored, or (a book imported before
lexicons were stored, or by an older way of building them) built here from its whole text on
first use; that one is then stored, so the next process reads it.
"""

from __future__ import annotations

import logging

from folio.domain.books import Book
from folio.domain.errors import FolioError
from folio.domain.lexicon import Lexicon
from folio.domain.ports import BookRepository
from folio.domain.window import ReadingWindow

log = logging.getLogger(__name__)


class Lexicons:
    """Each book's lexicon, read from the store (or built from the whole text and stored when
    the store has none) and kept (a few books at most), and the lexicons of what reading windows
    show of them (``read``)."""

    def __init__(self, *, keep: int = 8) -> None:
        self._keep = keep
        self._kept: dict[tuple[str, str, int], Lexicon] = {}
        self._read: dict[tuple[str, str, tuple[tuple[int, int], ...]], Lexicon] = {}

    def read(self, window: ReadingWindow, volume: Book, books: BookRepository) -> Lexicon:
        """The lexicon of what ``window`` shows of ``volume`` (the book or an earlier volume):
        the stored one when it shows all of it, else one built from the text it shows (at the
        book's offsets), kept per (volume, spans)."""
        spans = window.spans(volume.id)
        if spans == ((0, volume.char_count),):
            return self.get(volume, books)
        key = (volume.id, volume.content_hash, spans)
        if key not in self._read:
            if len(self._read) >= self._keep:
                self._read.pop(next(iter(self._read)))
            pieces = [(a, books.get_text(volume.id, a, b)) for a, b in spans]
            self._read[key] = Lexicon.of_pieces(pieces)
        return self._read[key]

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
