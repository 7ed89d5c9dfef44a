"""Each book's lexicon for the agent (the people tool, the offline policy), as far as the
reading window shows the book: the one stored with the book at import (read once per process and
kept) where the window shows all of it, else one built from the text the window shows.

The lexicon itself (what a name is, how it is built) is the domain's (``folio.domain.lexicon``).

A people list also leaves out the places the lexicon took for people (``people``; a name looked
up is told a place by the same test, ``is_place``): a name the packaged model (``knows_places``)
puts nearer what places are called ("a town", "a country") than what people are (by
``PLACE_MARGIN``), that does not speak in a play (``MIN_SPEECHES``) and whose mentions stand where
people stand less than the text's median person's do or than ``PERSON_STANDING``. The book's own
usage alone reads "England" of "to England" and "in England" as a person in Frankenstein's letters
(where "to him" and "in him" are as common); the embedder's knowledge of the word alone reads Moby
Dick's blacksmith Perth as a town. Over the 18 books of the shared data set, at 10%, 30% and all
of each, what this leaves out of the 40 most mentioned people is places (England, London, Rome, New
Bedford, Frankenstein's Perth, ...) but for a family ("the Woodhouses"), a people ("British"),
Hamlet's "Hamlets", Caesar's "Countrymen", a stray "St" and Norway, Hamlet's country and its
king; Moby Dick's Perth stays (``benchmarks/people_lists.py --places`` prints both lists).

Invariants: a name, an alias or a kind is learned only from text the window shows (``read``): a
surname the book gives later is never an alias of a first name met early. A book gets the same
whole-book lexicon whether it was built at import and stored, or (a book imported before
lexicons were stored, or by an older way of building them) built here from its whole text on
first use; that one is then stored, so the next process reads it.
"""

from __future__ import annotations

import logging
import statistics
import sys
from collections.abc import Sequence

import numpy as np

from folio.domain.books import Book
from folio.domain.errors import FolioError
from folio.domain.lexicon import Lexicon, Name
from folio.domain.ports import BookRepository, Embedder
from folio.domain.window import ReadingWindow

log = logging.getLogger(__name__)

# what the embedder is asked a name is nearer to: its nearest of each side, the margin between
PLACES = ("the name of a place", "a town", "a country", "a house or estate", "a city")
PERSONS = ("the name of a person", "a man", "a woman", "a character's name", "someone's name")
PLACE_MARGIN = 0.25  # England 0.41, Perth 0.32, New Bedford 0.29; Charlotte 0.20, Geneva 0.20
PERSON_STANDING = 1.0  # log odds per mention: its neighbours say "person" e times as often
CANDIDATES = 40  # most mentioned people weighed (their median standing) for a list
MAX_KNOWN = 4096  # names whose margin is kept
MIN_SPEECHES = 2  # speeches of a play that make a name a person whatever the embedder says
# the model the margin was measured with (float32 or int8): another embedder's scale is unknown,
# and the hashing embedder's nearest words are chance (it left out Flambeau and Louisa)
PLACES_MODEL = "all-MiniLM-L6-v2"


def knows_places(embedder: Embedder) -> bool:
    """Can ``embedder`` tell places from people as ``Lexicons`` asks it (the packaged model)?"""
    return embedder.name.removesuffix("-int8") == PLACES_MODEL


class Lexicons:
    """Each book's lexicon, read from the store (or built from the whole text and stored when
    the store has none) and kept (a few books at most), and the lexicons of what reading windows
    show of them (``read``)."""

    def __init__(self, embedder: Embedder | None = None, *, keep: int = 8) -> None:
        self._embedder = embedder
        self._keep = keep
        self._kept: dict[tuple[str, str, int], Lexicon] = {}
        self._read: dict[tuple[str, str, tuple[tuple[int, int], ...]], Lexicon] = {}
        self._sides: tuple[np.ndarray, np.ndarray] | None = None
        self._margins: dict[str, float] = {}

    def people(
        self, lexicon: Lexicon, start: int, end: int, limit: int
    ) -> list[tuple[Name, int, int]]:
        """``lexicon.people``, without the places it took for people (see the module docstring);
        as it is without an embedder."""
        found = lexicon.people(start, end, max(limit, CANDIDATES))
        places = self._places(found)
        return [(n, c, f) for n, c, f in found if n.name not in places][:limit]

    def is_place(self, lexicon: Lexicon, name: Name) -> bool:
        """Is ``name`` (of ``lexicon``) a place or a thing: as the lexicon tells, or one of the
        places it took for people that ``people`` leaves out (weighed against the same
        people)?"""
        if not name.person:
            return True
        found = lexicon.people(0, sys.maxsize, CANDIDATES)
        if all(n is not name for n, _, _ in found):
            found.append((name, 0, 0))
        return name.name in self._places(found)

    def _places(self, found: Sequence[tuple[Name, int, int]]) -> set[str]:
        """The names of ``found`` (people met, most mentioned first) that are places."""
        if self._embedder is None or not found:
            return set()
        usual = max(statistics.median(n.standing for n, _, _ in found), PERSON_STANDING)
        margins = self._place_margins([n.name for n, _, _ in found])
        return {
            n.name
            for (n, _, _), margin in zip(found, margins, strict=True)
            if margin >= PLACE_MARGIN and n.speeches < MIN_SPEECHES and n.standing < usual
        }

    def _place_margins(self, names: Sequence[str]) -> list[float]:
        """How much nearer the embedder puts each name to places than to people (kept per name,
        ``MAX_KNOWN`` at most)."""
        assert self._embedder is not None
        if self._sides is None:
            vectors = np.asarray(self._embedder.embed([*PLACES, *PERSONS]))
            self._sides = vectors[: len(PLACES)], vectors[len(PLACES) :]
        places, persons = self._sides
        known = self._margins
        margins = {n: known[n] for n in names if n in known}
        new = [n for n in dict.fromkeys(names) if n not in margins]
        if new:
            vectors = np.asarray(self._embedder.embed(new))
            nearest = (vectors @ places.T).max(axis=1) - (vectors @ persons.T).max(axis=1)
            margins.update(zip(new, nearest.tolist(), strict=True))
            if len(known) + len(new) > MAX_KNOWN:
                known.clear()
            known.update((n, margins[n]) for n in new)
        return [margins[n] for n in names]

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
