"""The reader's highlights, notes and bookmarks, imported from their e-reader (KOReader's
``.sdr`` metadata, Kindle's ``My Clippings.txt``) and anchored to the book's own text.

An ``ImportedHighlight`` is what a device file says (the book's title and author as the device
names them, the highlighted text, the reader's note, where it was); a ``Highlight`` is one kept
for a book and its owner, with the character span of the highlighted text in folio's extracted
text when it was found there.

Invariant: an anchor is a span whose text is the highlighted text (exactly, or once whitespace,
quotes, dashes and case are made alike); a highlight whose text is not found keeps no anchor and
is never shown through the reading window (nothing proves it lies before the position).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

from folio.domain.errors import FolioError

if TYPE_CHECKING:
    from folio.domain.window import ReadingWindow

MAX_FILE_BYTES = 20_000_000  # a metadata.lua or My Clippings.txt larger than this is refused
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
    ("page 12", "Location 1405-1407", an EPUB xpointer); ``page``: a page number when it has one;
    ``created``: its timestamp as written."""

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


_FOLD = str.maketrans(
    {"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"',
     "–": "-", "—": "-", "‐": "-", "‑": "-", "\u00ad": None}
)  # fmt: skip
_SPACE = re.compile(r"\s+")


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` with quotes and dashes made plain, case folded and runs of whitespace made one
    space, and for each of its characters the offset it came from."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        for c in ch.translate(_FOLD).casefold():
            out.append(c)
            where.append(i)
    return "".join(out), where


def _nearest(haystack: str, needle: str, near: int | None) -> int | None:
    """The start of the occurrence of ``needle`` nearest ``near`` (the first without one)."""
    if near is None:  # the first: no need to find every occurrence of a short quote
        at = haystack.find(needle)
        return None if at < 0 else at
    found = [m.start() for m in re.finditer(re.escape(needle), haystack)]
    if not found:
        return None
    return min(found, key=lambda at: abs(at - near))


class Anchorer:
    """Finds highlighted text in one book's text: exactly first, then with whitespace, quotes,
    dashes and case made alike, the occurrence nearest the device's location winning."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._folded: tuple[str, list[int]] | None = None

    def anchor(self, quote: str, *, near: int | None = None) -> tuple[int, int] | None:
        quote = quote.strip()
        if not quote:
            return None
        at = _nearest(self._text, quote, near)
        if at is not None:
            return at, at + len(quote)
        if self._folded is None:
            self._folded = _folded(self._text)
        folded, where = self._folded
        needle, _ = _folded(quote)
        needle = needle.strip()
        if not needle:
            return None
        near_folded = None if near is None else bisect.bisect_left(where, near)
        at = _nearest(folded, needle, near_folded)
        if at is None:
            return None
        return where[at], where[at + len(needle) - 1] + 1
