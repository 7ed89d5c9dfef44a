"""The reader's highlights, notes and bookmarks, imported from their e-reader (KOReader's
``.sdr`` metadata, Kindle's ``My Clippings.txt``) and anchored to the book's own text.

An ``ImportedHighlight`` is what a device file says (the book's title and author as the device
names them, the highlighted text, the reader's note, where it was); a ``Highlight`` is one kept
for a book and its owner, with the character span of the highlighted text in folio's extracted
text when it was found there.

Invariant: an anchor is where the device says the highlight is (a KOReader xpointer), or a span
whose text is the highlighted text (exactly, or letter for letter once punctuation, quotes,
spacing and case are set aside); a highlight placed by neither keeps no anchor and is never shown
through the reading window (nothing proves it lies before the position).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

from folio.domain.errors import FolioError

if TYPE_CHECKING:
    from folio.domain.window import ReadingWindow

# a metadata.lua or My Clippings.txt larger than this is refused: the default of the setting
# max_highlights_mb (20 MB of 1024 * 1024 bytes, as every setting counts them), which the
# composition root gives the readers
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_TEXT_CHARS = 20_000  # one entry's text, note, title, chapter..., cut beyond (``clip``)
MAX_ENTRIES = 100_000  # entries of one file; a file with more is refused
SOURCE_KOREADER = "KOReader"
SOURCE_KINDLE = "Kindle"


class HighlightKind(StrEnum):
    HIGHLIGHT = "highlight"
    NOTE = "note"  # a note on its own (Kindle keeps a note apart from its highlight)
    BOOKMARK = "bookmark"


class HighlightErrorCode(StrEnum):
    INVALID_INPUT = "INVALID_INPUT"
    NOT_FOUND = "NOT_FOUND"


class HighlightError(FolioError):
    """A highlights file folio cannot read, or a book it cannot match."""

    codes: ClassVar[type[StrEnum]] = HighlightErrorCode
    code: HighlightErrorCode = HighlightErrorCode.INVALID_INPUT


@dataclass(frozen=True, slots=True)
class ImportedHighlight:
    """One entry of a device's file. ``location``: where the device says it is, in its words
    ("page 12", "Location 1405-1407", an EPUB xpointer); ``end_location``: the xpointer of its
    end (KOReader's ``pos1``); ``page``: a page number when it has one; ``created``: its
    timestamp as written."""

    title: str
    author: str | None
    kind: HighlightKind
    text: str
    note: str | None = None
    chapter: str | None = None
    location: str | None = None
    page: int | None = None
    created: str | None = None
    source: str = ""
    end_location: str | None = None

    @property
    def key(self) -> str:
        """Identity across imports: the same entry imported twice is kept once."""
        raw = "\x1f".join((self.kind, self.text, self.note or "", self.location or ""))
        return hashlib.sha256(raw.encode()).hexdigest()[:32]


def clip(value: str | None) -> str | None:
    """A device's text stripped and cut at ``MAX_TEXT_CHARS`` (None when nothing is left)."""
    cut = value.strip()[:MAX_TEXT_CHARS] if value else ""
    return cut or None


@dataclass(frozen=True, slots=True)
class Highlight:
    """A highlight kept for ``book_id`` and its owner ``user_id``; ``char_start``/``char_end``:
    the anchor in the book's text (None: the text was not found)."""

    id: str
    book_id: str
    user_id: str
    kind: HighlightKind
    text: str
    note: str | None
    chapter: str | None
    location: str | None
    char_start: int | None
    char_end: int | None
    created: str | None
    source: str
    key: str

    @property
    def anchored(self) -> bool:
        return self.char_start is not None and self.char_end is not None


def book_order(h: Highlight) -> tuple[bool, int, str]:
    """The book's order (every store's): anchored highlights by their offset, then the others
    as imported."""
    return (h.char_start is None, h.char_start or 0, h.created or "")


def within(window: ReadingWindow, highlights: Iterable[Highlight]) -> list[Highlight]:
    """The highlights whose anchored span lies wholly inside ``window``: one past the position,
    in unread matter, or not found in the book's text never does."""
    return [
        h
        for h in highlights
        if h.char_start is not None
        and h.char_end is not None
        and window.allows(h.book_id, h.char_start, h.char_end)
    ]


MAX_OCCURRENCES = 20_000  # occurrences of one quote weighed (a one-word tap: "She")
Span = tuple[int, int]


def _bounded(text: str, start: int, end: int) -> bool:
    """Does ``[start, end)`` begin and end at word edges (not inside "Shelley" for "She")?"""
    inner_start = start < len(text) and text[start].isalnum()
    inner_end = end > 0 and text[end - 1].isalnum()
    if inner_start and start > 0 and text[start - 1].isalnum():
        return False
    return not (inner_end and end < len(text) and text[end].isalnum())


def _letters(text: str) -> tuple[str, array[int]]:
    """``text``'s letters and digits only, case folded (no spaces, punctuation, quotes, dashes,
    underscores, soft or line-end hyphens), and for each the offset it came from."""
    out: list[str] = []
    where: array[int] = array("q")
    for run in _ALNUM.finditer(text):
        word = run.group().casefold()
        out.append(word)
        if len(word) == run.end() - run.start():
            where.extend(range(run.start(), run.end()))
        else:  # a letter folding to several ("ß" -> "ss") maps each to its origin
            for i in range(run.start(), run.end()):
                where.extend([i] * len(text[i].casefold()))
    return "".join(out), where


_ALNUM = re.compile(r"[^\W_]+")


class Anchorer:
    """Finds highlighted text in one book's text: exactly first, then by its letters and digits
    alone (punctuation, quote styles, ``_italics_``, hyphenation, spacing and case ignored), at
    word edges. Of several occurrences, one outside ``matter`` (front and back matter) wins
    unless the quote lies only there; among those, the one nearest ``near``, else the first."""

    def __init__(self, text: str, *, matter: Sequence[Span] = ()) -> None:
        self._text = text
        self._matter = tuple(matter)
        self._letters: tuple[str, array[int]] | None = None

    def anchor(
        self, quote: str, *, near: int | None = None, in_matter: bool = False
    ) -> Span | None:
        """``in_matter``: the caller knows the place lies in the matter (a device's pointer):
        occurrences there are not passed over."""
        quote = quote.strip()
        if not quote:
            return None
        found = self._exact(quote) or self._alike(quote)
        if not found:
            return None
        outside = [s for s in found if not self._in_matter(s)]
        pool = found if in_matter or not outside else outside
        if near is None:
            return pool[0]
        return min(pool, key=lambda s: abs(s[0] - near))

    def _exact(self, quote: str) -> list[Span]:
        spans: list[Span] = []
        at = self._text.find(quote)
        while at >= 0 and len(spans) < MAX_OCCURRENCES:
            if _bounded(self._text, at, at + len(quote)):
                spans.append((at, at + len(quote)))
            at = self._text.find(quote, at + 1)
        return spans

    def _alike(self, quote: str) -> list[Span]:
        needle, _ = _letters(quote)
        if not needle:
            return []
        if self._letters is None:
            self._letters = _letters(self._text)
        letters, where = self._letters
        spans: list[Span] = []
        at = letters.find(needle)
        while at >= 0 and len(spans) < MAX_OCCURRENCES:
            start, end = where[at], where[at + len(needle) - 1] + 1
            if _bounded(self._text, start, end):
                spans.append((start, end))
            at = letters.find(needle, at + 1)
        return spans

    def _in_matter(self, span: Span) -> bool:
        return any(a <= span[0] < b for a, b in self._matter)
