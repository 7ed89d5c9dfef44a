"""Books, their pages, chapters and chunks, and the reading position.

Invariant: every offset (``char_start``/``char_end``/``char_offset``) indexes the book's *extracted
text* (the single string the parser produced and the library stores), as Python ``str`` indices, end
exclusive. Pages and chapters partition that text, so any offset maps to exactly one page and at
most one chapter.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from folio.domain.errors import BookError, BookErrorCode


class BookFormat(StrEnum):
    TXT = "txt"
    MARKDOWN = "md"
    HTML = "html"
    EPUB = "epub"
    PDF = "pdf"


@dataclass(frozen=True, slots=True)
class Chapter:
    """A chapter (or letter, book, part...) starting at ``char_start`` of the extracted text."""

    index: int  # 1-based, in reading order
    title: str
    char_start: int


@dataclass(frozen=True, slots=True)
class Page:
    """A page of the book: a PDF page (``label`` is its printed label when the PDF has labels) or a
    synthetic page of about 300 words for the other formats."""

    number: int  # 1-based ordinal
    label: str  # what the reader sees ("41", "iv"); str(number) when there is no printed label
    char_start: int
    char_end: int


@dataclass(frozen=True, slots=True)
class ParsedBook:
    """What a parser returns: the extracted text with its page and chapter structure."""

    text: str
    pages: tuple[Page, ...]
    chapters: tuple[Chapter, ...]
    title: str | None = None
    author: str | None = None


class PositionKind(StrEnum):
    NONE = "none"  # the whole book is visible
    PAGE = "page"
    CHAPTER = "chapter"
    PERCENT = "percent"


@dataclass(frozen=True, slots=True)
class ReadingPosition:
    """How far the reader has read. ``char_offset`` is the hard limit: no text at or past it is ever
    shown. ``None`` means no limit (the whole book). ``kind``/``value`` remember what the reader
    set."""

    char_offset: int | None = None
    kind: PositionKind = PositionKind.NONE
    value: float | None = None

    @property
    def is_unlimited(self) -> bool:
        return self.char_offset is None

    def describe(self) -> str:
        if self.kind is PositionKind.NONE or self.char_offset is None:
            return "the whole book"
        if self.kind is PositionKind.PERCENT:
            return f"{self.value:g}% of the book"
        return f"{self.kind.value} {self.value:g}"


@dataclass(frozen=True, slots=True)
class Book:
    id: str
    title: str
    author: str | None
    format: BookFormat
    source_name: str
    content_hash: str
    page_count: int
    char_count: int
    chapters: tuple[Chapter, ...] = ()
    pages: tuple[Page, ...] = ()
    position: ReadingPosition = field(default_factory=ReadingPosition)
    created_at: datetime | None = None

    def with_position(self, position: ReadingPosition) -> Book:
        return replace(self, position=position)

    # --- structure lookups ------------------------------------------------------------------------
    def page_at(self, offset: int) -> Page:
        """The page that contains ``offset`` (the last page for offsets at the end)."""
        if not self.pages:
            raise BookError(f"Book {self.title!r} has no pages", code=BookErrorCode.NOT_FOUND)
        starts = [p.char_start for p in self.pages]
        i = max(0, bisect.bisect_right(starts, offset) - 1)
        return self.pages[i]

    def chapter_at(self, offset: int) -> Chapter | None:
        starts = [c.char_start for c in self.chapters]
        i = bisect.bisect_right(starts, offset) - 1
        return self.chapters[i] if i >= 0 else None

    def page_by_label(self, label: str) -> Page | None:
        for page in self.pages:
            if page.label == label:
                return page
        if label.isdigit():
            n = int(label)
            if 1 <= n <= len(self.pages):
                return self.pages[n - 1]
        return None

    def chapter_end(self, chapter: Chapter) -> int:
        nxt = [c.char_start for c in self.chapters if c.index == chapter.index + 1]
        return nxt[0] if nxt else self.char_count

    def position_at_page(self, label: str) -> ReadingPosition:
        """Read up to and including the page labelled ``label`` (or with that number)."""
        page = self.page_by_label(label)
        if page is None:
            raise BookError(
                f"{self.title!r} has no page {label} (pages 1-{self.page_count})",
                code=BookErrorCode.INVALID_POSITION,
            )
        value = float(page.number)
        return ReadingPosition(page.char_end, PositionKind.PAGE, value)

    def position_at_chapter(self, index: int) -> ReadingPosition:
        """Read up to and including chapter ``index`` (1-based)."""
        if not 1 <= index <= len(self.chapters):
            raise BookError(
                f"{self.title!r} has no chapter {index} (chapters 1-{len(self.chapters)})",
                code=BookErrorCode.INVALID_POSITION,
            )
        return ReadingPosition(
            self.chapter_end(self.chapters[index - 1]), PositionKind.CHAPTER, float(index)
        )

    def position_at_percent(self, percent: float) -> ReadingPosition:
        if not 0 <= percent <= 100:
            raise BookError(
                "A percentage must lie between 0 and 100", code=BookErrorCode.INVALID_POSITION
            )
        return ReadingPosition(
            round(self.char_count * percent / 100), PositionKind.PERCENT, percent
        )


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of about 200 words, the unit of search and citation."""

    id: str
    book_id: str
    ordinal: int
    text: str
    char_start: int
    char_end: int
    page_start: int  # page ordinals (1-based); labels come from the book's pages
    page_end: int
    chapter: str | None = None
    chapter_index: int | None = None

    def cut_at(self, max_char_offset: int | None) -> Chunk | None:
        """This chunk limited to the text before ``max_char_offset`` (``None``: no limit); ``None``
        when none of it lies before. A straddling chunk keeps its start and loses its tail."""
        if max_char_offset is None or self.char_end <= max_char_offset:
            return self
        if self.char_start >= max_char_offset:
            return None
        keep = max_char_offset - self.char_start
        return replace(self, text=self.text[:keep], char_end=max_char_offset)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A search result: the chunk (already cut at the reading position), its score, and a
    snippet."""

    chunk: Chunk
    score: float
    snippet: str
    page_label_start: str
    page_label_end: str
    lexical_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None  # cosine similarity of query and chunk, when computed

    @property
    def pages(self) -> str:
        a, b = self.page_label_start, self.page_label_end
        return a if a == b else f"{a}-{b}"

    @property
    def location(self) -> str:
        return cite_location(self.chunk.chapter, self.page_label_start, self.page_label_end)


def places_line(located: Iterable[Any]) -> str:
    """``Loomings, pp. 12-13; p. 40``: the ``location`` of each item (a source, a passage, a hit)
    once, in order."""
    return "; ".join(dict.fromkeys(item.location for item in located))


def cite_location(chapter: str | None, page_start: str, page_end: str) -> str:
    """How folio names a place in a book for a reader: "Chapter 7, p. 55", "pp. 176-177"."""
    pages = f"p. {page_start}" if page_start == page_end else f"pp. {page_start}-{page_end}"
    return f"{chapter}, {pages}" if chapter else pages
