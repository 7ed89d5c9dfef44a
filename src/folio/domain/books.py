"""Books, their pages, chapters and chunks, and the reading position.

Invariant: every offset (``char_start``/``char_end``/``char_offset``) indexes the book's *extracted
text* (the single string the parser produced and the library stores), as Python ``str`` indices, end
exclusive. Pages and chapters partition that text, so any offset maps to exactly one page and at
most one chapter.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from folio.domain.chapter_labels import (
    MAJOR_KEYWORDS,
    ChapterReference,
    LabelPart,
    label_parts,
    matches,
    normalise,
    parse_reference,
)
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.sync import time_ago

if TYPE_CHECKING:  # numpy only where vectors are used: listing books never loads it
    import numpy as np
    import numpy.typing as npt

MAX_CHAPTER_REF_CHARS = 200
MAX_POSITION_TEXT_CHARS = 200
WHOLE_BOOK_WORDS = frozenset(
    {"", "whole", "whole book", "the whole book", "all", "end", "finished"}
)
NOT_STARTED_WORDS = frozenset({"not started", "none", "nothing", "start", "beginning", "0", "0%"})
_PAGE_TEXT = re.compile(r"^(?:pp?\.|page)\s*(?P<page>\S+)$", re.IGNORECASE)
_PERCENT_TEXT = re.compile(r"^(?P<percent>\d+(?:\.\d+)?)\s*%$")


class BookFormat(StrEnum):
    TXT = "txt"
    MARKDOWN = "md"
    HTML = "html"
    EPUB = "epub"
    PDF = "pdf"


class SectionKind(StrEnum):
    """What a section of a book is. Only ``STORY`` is the author's text the reader reads in order;
    the others count as unread until the reader has finished the book (an editor's preface is
    the commonest spoiler, a table of contents names chapters not yet reached)."""

    STORY = "story"
    FRONT_MATTER = "front_matter"  # contents, lists of illustrations, dedications, title pages
    COMMENTARY = "commentary"  # introductions, prefaces, forewords: they discuss the whole story
    BACK_MATTER = "back_matter"  # notes, appendices, glossaries, indexes, transcribers' notes


@dataclass(frozen=True, slots=True)
class Chapter:
    """A chapter (or letter, book, part...) starting at ``char_start`` of the extracted text.
    ``kind`` says whether it is the story or front/back matter."""

    index: int  # 1-based, in reading order
    title: str
    char_start: int
    kind: SectionKind = SectionKind.STORY

    @property
    def is_story(self) -> bool:
        return self.kind is SectionKind.STORY


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
    series: str | None = None
    series_index: float | None = None


class PositionKind(StrEnum):
    NONE = "none"  # the whole book is visible
    PAGE = "page"
    CHAPTER = "chapter"
    PERCENT = "percent"


@dataclass(frozen=True, slots=True)
class ReadingPosition:
    """How far the reader has read. ``char_offset`` is the hard limit: no text at or past it is ever
    shown. ``None`` means no limit (the whole book). ``kind``/``value`` remember what the reader
    set. ``include_matter``: the reader chose to read the front and back matter before the
    position (an editor's introduction, notes) before finishing the book; off unless they ask."""

    char_offset: int | None = None
    kind: PositionKind = PositionKind.NONE
    value: float | None = None
    include_matter: bool = False
    # Where a synced position came from ("KOReader on Kobo") and when the device sent it;
    # ``None`` for a position the reader set in folio.
    source: str | None = None
    set_at: datetime | None = None

    def with_matter(self, include: bool) -> ReadingPosition:
        return replace(self, include_matter=include)

    @property
    def is_unlimited(self) -> bool:
        return self.char_offset is None

    @property
    def is_set(self) -> bool:
        """Has the reader said how far they have read (the whole book included)?"""
        return self.kind is not PositionKind.NONE


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
    series: str | None = None  # the series the book belongs to, as its publisher names it
    series_index: float | None = None  # its place in the series (1, 2, 2.5...)
    # The name a reader tells it apart by, when another book of the library has the same title
    # (see ``reader_names``); set by the library, never stored.
    display_name: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """The title, or "Frankenstein (EPUB)" when another book has the same title."""
        return self.display_name or self.title

    def named(self, name: str) -> Book:
        return replace(self, display_name=None if name == self.title else name)

    def with_position(self, position: ReadingPosition) -> Book:
        return replace(self, position=position)

    # --- what the reader may see -----------------------------------------------------------------
    @property
    def story_start(self) -> int:
        """Where the story begins: the start of the first story chapter when front matter
        sections come before it, else 0."""
        first_story = next((c for c in self.chapters if c.is_story), None)
        if first_story is None:
            return 0
        before = [c for c in self.chapters if c.char_start < first_story.char_start]
        return first_story.char_start if before else 0

    # --- the reading position in the book's own words --------------------------------------------
    @property
    def position_chapter(self) -> Chapter | None:
        """The chapter holding the last character the reader has read (``None`` for the whole
        book, or a position before the first chapter)."""
        limit = self.position.char_offset
        if limit is None or limit <= 0:
            return None
        return self.chapter_at(limit - 1)

    def percent_read(self) -> float | None:
        limit = self.position.char_offset
        if limit is None or not self.char_count:
            return None
        return min(100.0, 100 * limit / self.char_count)

    def describe_position(self, *, now: datetime | None = None) -> str:
        """How far the reader is, as a reader says it: "through Chapter 5 (p. 45 of 205, 23%)",
        "through p. 45 of 205 (Chapter 5, 23%)", "through 23% (Chapter 5, p. 45 of 205)", or "the
        whole book". Chapters are named by their own titles, never by an index. A synced position
        says where it came from and when: ", from KOReader on Kobo, 2 h ago" (with ``now``), else
        with the time it was sent ("on 2026-11-24 07:12 UTC")."""
        described = self._describe_limit()
        pos = self.position
        if pos.source is None or pos.set_at is None:
            return described
        when = (
            time_ago(pos.set_at, now)
            if now is not None
            else f"on {pos.set_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        )
        return f"{described}, from {pos.source}, {when}"

    def _describe_limit(self) -> str:
        pos = self.position
        limit = pos.char_offset
        if limit is None:
            return "the whole book"
        percent = percent_text(self.percent_read() or 0.0)
        if limit <= 0:
            return f"the very beginning (nothing read yet, {percent})"
        if pos.kind is PositionKind.PERCENT and limit >= self.char_count:
            return "the whole book"  # what a reader who read it all chose
        page = f"p. {self.page_label(limit - 1)} of {self.page_count}" if self.pages else ""
        chapter = self.position_chapter
        title = chapter.title if chapter else ""
        matter = ", front and back matter included" if pos.include_matter else ""
        if pos.kind is PositionKind.CHAPTER and chapter is not None:
            return f"through {title} ({_join(page, percent)}){matter}"
        if pos.kind is PositionKind.PAGE and page:
            return f"through {page} ({_join(title, percent)}){matter}"
        return f"through {percent} of the book ({_join(title, page)}){matter}"

    def page_label(self, offset: int) -> str:
        """The printed label of the page holding ``offset``; "?" for a book without pages."""
        return self.page_at(offset).label if self.pages else "?"

    # --- structure lookups ------------------------------------------------------------------------
    def page_at(self, offset: int) -> Page:
        """The page that contains ``offset`` (the last page for offsets at the end)."""
        if not self.pages:
            raise BookError(f"Book {self.name!r} has no pages", code=BookErrorCode.NOT_FOUND)
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
                f"{self.name!r} has no page {label} (pages 1-{self.page_count})",
                code=BookErrorCode.INVALID_POSITION,
            )
        value = float(page.number)
        return ReadingPosition(page.char_end, PositionKind.PAGE, value)

    def find_chapters(self, ref: str, *, whole: bool = False) -> list[Chapter]:
        """The chapters ``ref`` names, in the book's own words: its title ("Chapter 5", "Letter 2"),
        its number in any spelling ("5", "V", "five": the chapters so numbered, a "Chapter" before
        a "Letter" or an "Act"), keywords with numbers ("part 2 chapter 3"; "part 2" alone means
        through its last chapter, or with ``whole`` every chapter of it) or words of its title
        ("whiteness of the whale"). Several chapters come back when the reference is ambiguous,
        none when nothing matches."""
        reference = parse_reference(ref)
        words = reference.words
        if not words:
            return []
        exact = [c for c in self.chapters if normalise(c.title) == words]
        if exact:
            return exact
        if reference.parts:
            return self._chapters_by_number(reference, whole=whole)
        if len(words) >= 3:
            return [c for c in self.chapters if f" {words} " in f" {normalise(c.title)} "]
        return []

    def _chapters_by_number(self, reference: ChapterReference, *, whole: bool) -> list[Chapter]:
        story = tuple(c for c in self.chapters if c.is_story) or self.chapters
        labelled = list(zip(story, chapter_label_parts(story), strict=True))
        found = [c for c, parts in labelled if matches(reference, parts)]
        if len(found) > 1 and all(p.keyword is None for p in reference.parts):
            preferred = [
                c for c, parts in labelled if c in found and parts[-1].keyword in (None, "chapter")
            ]
            found = preferred or found
        if len(found) > 1 and not whole and reference.major:
            found = [found[-1]]
        if found or any(parts for _, parts in labelled):
            return found
        # No title carries a number: "5" is the fifth chapter in reading order.
        (only,) = reference.parts if len(reference.parts) == 1 else (None,)
        if (
            only is not None
            and only.keyword in (None, "chapter")
            and 1 <= only.number <= len(story)
        ):
            return [story[only.number - 1]]
        return []

    def position_at_chapter_index(self, index: int) -> ReadingPosition:
        """Read up to and including the ``index``-th entry (1-based) of ``chapters``: for clients
        that offer the book's list of chapters to pick from, never for what a reader types."""
        if not 1 <= index <= len(self.chapters):
            raise BookError(
                f"{self.name!r} has no chapter entry {index} (entries 1-{len(self.chapters)})",
                code=BookErrorCode.INVALID_POSITION,
            )
        chapter = self.chapters[index - 1]
        return ReadingPosition(self.chapter_end(chapter), PositionKind.CHAPTER, float(index))

    def position_at_chapter(self, ref: str | int) -> ReadingPosition:
        """Read up to and including the chapter ``ref`` names (see ``chapter_named``).

        Raises:
            BookError: as ``chapter_named``.
        """
        chapter = self.chapter_named(ref)
        return ReadingPosition(
            self.chapter_end(chapter), PositionKind.CHAPTER, float(chapter.index)
        )

    def position_after_next_chapter(self) -> ReadingPosition:
        """Read up to and including the next chapter: the first (story) chapter that ends past the
        position, i.e. the one the reader is in, as "I finished the next chapter" means.

        Raises:
            BookError: ``INVALID_POSITION`` when the book has no chapters, or when the whole book
                (or its last chapter) is already read.
        """
        offset = self.position.char_offset
        if not self.chapters:
            raise BookError(
                f"{self.name!r} has no chapters; give a page or a percentage instead",
                code=BookErrorCode.INVALID_POSITION,
            )
        if offset is None:
            raise BookError(
                f"You can see all of {self.name!r} already; set how far you have read first "
                "(a chapter, a page or a percentage)",
                code=BookErrorCode.INVALID_POSITION,
            )
        story = tuple(c for c in self.chapters if c.is_story) or self.chapters
        chapter = next((c for c in story if self.chapter_end(c) > offset), None)
        if chapter is None:
            raise BookError(
                f"You have read all of {self.name!r} already; there is no next chapter",
                code=BookErrorCode.INVALID_POSITION,
            )
        return ReadingPosition(
            self.chapter_end(chapter), PositionKind.CHAPTER, float(chapter.index)
        )

    def chapter_named(self, ref: str | int) -> Chapter:
        """The one chapter ``ref`` names in the book's own words (see ``find_chapters``).

        Raises:
            BookError: ``INVALID_POSITION`` when no chapter matches, ``AMBIGUOUS`` when several
                do; either names only the chapters the reading window lets the reader see
                (``ReadingWindow.named_chapters``).
        """
        wanted = str(ref).strip()
        if len(wanted) > MAX_CHAPTER_REF_CHARS:
            raise BookError(
                f"A chapter is named in at most {MAX_CHAPTER_REF_CHARS} characters",
                code=BookErrorCode.INVALID_POSITION,
            )
        found = self.find_chapters(wanted)
        if len(found) == 1:
            return found[0]
        from folio.domain.window import ReadingWindow  # the window is built on books

        named = ReadingWindow(self).named_chapters()
        if found:
            shown = [c for c in found if c in named]
            names = "; ".join(f"{c.title} (p. {self.page_label(c.char_start)})" for c in shown)
            if shown and len(shown) < len(found):  # no count, no page: nothing of them is told
                names += ", and chapters not named here"
            example = self.reference_example(shown)
            raise BookError(
                f"{wanted!r} matches several chapters of {self.name!r}{': ' if names else ''}"
                f"{names}. Name the one you mean by more of its title"
                + (f", or with its part ({example!r})." if example else "."),
                code=BookErrorCode.AMBIGUOUS,
                candidates=[c.title for c in shown],
            )
        raise BookError(
            f"{self.name!r} has no chapter {wanted!r}: {self._chapters_hint(named)}",
            code=BookErrorCode.INVALID_POSITION,
        )

    def reference_example(self, chapters: list[Chapter]) -> str | None:
        """How to name the first of ``chapters`` with its part, as the book numbers them ("act 1
        scene 2" in a play; none when its titles number no parts, as a Bible's books)."""
        story = tuple(c for c in self.chapters if c.is_story) or self.chapters
        for chapter, parts in zip(story, chapter_label_parts(story), strict=True):
            if chapter in chapters and len(parts) > 1 and all(p.keyword for p in parts):
                return " ".join(f"{p.keyword} {p.number}" for p in parts)
        return None

    def _chapters_hint(self, named: tuple[Chapter, ...]) -> str:
        """What a reader may name, naming only the chapters the window lets them see."""
        if not self.chapters:
            return "it has no chapters; give a page or a percentage instead"
        if not named:
            return (
                "name a chapter as the book does ('Chapter 5', '5', 'Letter 2' or words of its "
                "title), or give a page or a percentage"
            )
        later = " (later ones are not named here)" if len(named) < len(self.chapters) else ""
        return f"its chapters run {_chapter_span(named)}{later}"

    def position_from_text(self, text: str) -> ReadingPosition:
        """The position one line a reader typed names: "Chapter 5", "5", "Letter 2", "p. 45",
        "page iv", "23%", "not started" (nothing read yet), or "" / "whole" / "end" (the whole
        book: no limit).

        Raises:
            BookError: ``INVALID_POSITION`` (over ``MAX_POSITION_TEXT_CHARS``, no such place),
                ``AMBIGUOUS`` (a chapter reference naming several chapters).
        """
        wanted = " ".join(text.split())
        if len(wanted) > MAX_POSITION_TEXT_CHARS:
            raise BookError(
                f"A position is at most {MAX_POSITION_TEXT_CHARS} characters",
                code=BookErrorCode.INVALID_POSITION,
            )
        folded = wanted.casefold()
        if folded in WHOLE_BOOK_WORDS:  # read to the end: set, unlike no position at all
            return self.position_at_percent(100)
        if folded in NOT_STARTED_WORDS:
            return self.position_at_percent(0)
        if m := _PAGE_TEXT.match(wanted):
            return self.position_at_page(m.group("page"))
        if m := _PERCENT_TEXT.match(wanted):
            return self.position_at_percent(float(m.group("percent")))
        return self.position_at_chapter(wanted)

    def position_at_percent(self, percent: float) -> ReadingPosition:
        if not 0 <= percent <= 100:
            raise BookError(
                "A percentage must lie between 0 and 100", code=BookErrorCode.INVALID_POSITION
            )
        return ReadingPosition(
            round(self.char_count * percent / 100), PositionKind.PERCENT, percent
        )


@dataclass(frozen=True, slots=True)
class StoredSentences:
    """The vectors kept at import of a chunk's sentences (``split_sentences`` of its text, one
    row each), with the offset where the chunk ends in the book: a passage ending before it is
    the chunk cut at the reader's position, whose last sentence is not the one kept."""

    chunk_end: int
    vectors: npt.NDArray[np.float32]  # one row each, as ``Vectors``


def chunk_id(book_id: str, ordinal: int) -> str:
    """The id of a book's chunk: ``f"{book_id}:{ordinal}"``."""
    return f"{book_id}:{ordinal}"


def book_of_chunk(chunk_id: str) -> str:
    """The id of the book a chunk id (``chunk_id``) belongs to."""
    return chunk_id.rpartition(":")[0]


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
    volume: str | None = None  # the title of the earlier volume of the series it comes from

    @property
    def pages(self) -> str:
        a, b = self.page_label_start, self.page_label_end
        return a if a == b else f"{a}-{b}"

    @property
    def location(self) -> str:
        return cite_location(
            self.chunk.chapter, self.page_label_start, self.page_label_end, volume=self.volume
        )


def reader_names(books: Iterable[Book]) -> dict[str, str]:
    """A name per book id that tells same-titled books apart: the title alone when no other book
    has it (case aside), else the title with the format ("Frankenstein (EPUB)"), with the file
    too when the formats are the same ("Emma (EPUB, emma-1816.epub)"), and the short id when even
    the file names are."""
    groups: dict[str, list[Book]] = {}
    for book in books:
        groups.setdefault(book.title.casefold(), []).append(book)
    names: dict[str, str] = {}
    for group in groups.values():
        for book in group:
            names[book.id] = _told_apart(book, group)
    return names


def _told_apart(book: Book, group: list[Book]) -> str:
    if len(group) == 1:
        return book.title
    fmt = book.format.value.upper()
    same_format = [b for b in group if b.format is book.format]
    if len(same_format) == 1:
        return f"{book.title} ({fmt})"
    same_file = [b for b in same_format if b.source_name == book.source_name]
    if len(same_file) == 1:
        return f"{book.title} ({fmt}, {book.source_name})"
    return f"{book.title} ({fmt}, {book.source_name}, {book.id[:8]})"


def places_line(located: Iterable[Any]) -> str:
    """``Loomings, pp. 12-13; p. 40``: the ``location`` of each item (a source, a passage, a hit)
    once, in order."""
    return "; ".join(dict.fromkeys(item.location for item in located))


def numbered_places(located: Iterable[Any]) -> str:
    """``[1] Loomings, p. 12; [2] p. 40``: the ``location`` of each item (each source of an answer:
    one per quote) with the number a reader opens it by (``folio read BOOK --cited 2``)."""
    return "; ".join(f"[{n}] {item.location}" for n, item in enumerate(located, 1))


def chapter_label_parts(chapters: tuple[Chapter, ...]) -> list[tuple[LabelPart, ...]]:
    """Each chapter's numbered parts, with the volume/book/part it lies in carried over from the
    chapter that opened it ("PART II, CHAPTER I" then "CHAPTER II" -> part 2, chapter 2)."""
    out = []
    majors: tuple[LabelPart, ...] = ()
    for chapter in chapters:
        parts = label_parts(chapter.title)
        own_majors = tuple(p for p in parts if p.keyword in MAJOR_KEYWORDS)
        if own_majors:
            majors = own_majors
        elif parts and majors:
            parts = majors + parts
        out.append(parts)
    return out


def percent_text(percent: float) -> str:
    """How much of a book is read, as every surface shows it ("23%"; "0.4%" under 1%): the one
    rounding, so that a list and a book's page never differ by one."""
    return f"{percent:.1f}%" if 0 < percent < 1 else f"{round(percent)}%"


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _chapter_span(chapters: tuple[Chapter, ...]) -> str:
    if len(chapters) <= 6:
        return ", ".join(c.title for c in chapters)
    return f"{chapters[0].title}, {chapters[1].title}, ... {chapters[-1].title} ({len(chapters)})"


def cite_location(
    chapter: str | None, page_start: str, page_end: str, *, volume: str | None = None
) -> str:
    """How folio names a place in a book for a reader: "Chapter 7, p. 55", "pp. 176-177", and
    in an earlier volume of the series "The Two Towers, Chapter 7, p. 55"."""
    pages = f"p. {page_start}" if page_start == page_end else f"pp. {page_start}-{page_end}"
    place = f"{chapter}, {pages}" if chapter else pages
    return f"{volume}, {place}" if volume else place


def no_position_notice(name: str, how: str) -> str:
    """The one line an answer from a book without a reading position ends with, on every surface;
    ``how``: the way to set one there."""
    return (
        f"No reading position is set for {name}, so answers may come from all of it: say how far"
        f" you have read {how}."
    )
