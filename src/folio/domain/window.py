"""The reading window: everything the reader has read, in one value. Every store query, tool,
history replay, recap, people list, export and route asks it; nothing else decides what is read.

A window is the book and its reading position (text from ``start`` up to ``end``), minus the
front and back matter the reader has not read (an editor's preface, notes: they count as unread
until the reader finishes the book or includes them), plus the earlier volumes of the book's
series, read in full. A later volume of the series is never in it, nor a book of another series.

Invariant: ``spans(book_id)`` is the one answer to "may this text be shown?"; ``cut``, ``clip``,
``allows``, ``chapters``, why a part is unread (``unread_reason``), which chapter titles may be
shown (``shows_title``) and which chapters a message may name (``named_chapters``) are derived
from it and never from the position directly. The front-matter rule lives here: front and back
matter count as unread until the reader has finished the book or includes them.

A window of the whole book (``ReadingWindow.whole_book``) is an explicit value for judging
whether a question is about the book at all (the guardrail's score); nothing it covers is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from folio.domain.books import Book, Chapter, Chunk
from folio.domain.chapter_labels import is_bare_label

Span = tuple[int, int]


class Unread(StrEnum):
    """Why a part of a book is not shown."""

    PAST_POSITION = "past_position"  # at or past the reading position
    MATTER = "matter"  # front or back matter, unread until the book is finished or included
    OUTSIDE = "outside"  # not a volume of the window (a later volume, another book)


@dataclass(frozen=True, slots=True)
class ReadingWindow:
    """``book`` read up to its position, and ``earlier``: the volumes of its series before it
    (same series, lower index, the same owner's), in series order, read in full."""

    book: Book
    earlier: tuple[Book, ...] = ()
    whole: bool = False  # the whole book, to judge relevance only (``whole_book``)

    @staticmethod
    def whole_book(book: Book) -> ReadingWindow:
        """All of ``book``, whatever its position: for scoring whether a question is about the
        book (a name met only later is), never for showing text."""
        return ReadingWindow(book, whole=True)

    @staticmethod
    def of(book: Book, shelf: Iterable[Book] = ()) -> ReadingWindow:
        """The window of ``book``; ``shelf`` is the reader's own library (the earlier volumes of
        the book's series are taken from it: only books with a series index below the book's)."""
        if not book.series or book.series_index is None:
            return ReadingWindow(book)
        name = book.series.casefold()
        earlier = sorted(
            (
                b
                for b in shelf
                if b.id != book.id
                and b.series is not None
                and b.series.casefold() == name
                and b.series_index is not None
                and b.series_index < book.series_index
            ),
            key=lambda b: (b.series_index, b.title),
        )
        return ReadingWindow(book, tuple(earlier))

    # --- the book itself ---------------------------------------------------------------------
    @property
    def limit(self) -> int | None:
        """The reading position as a character offset (None: the whole book)."""
        return None if self.whole else self.book.position.char_offset

    @property
    def finished(self) -> bool:
        """Has the reader read the whole story (no limit, or a limit at or past the end of the
        last story chapter)?"""
        limit, book = self.limit, self.book
        if limit is None:
            return True
        story = [c for c in book.chapters if c.is_story]
        return bool(story) and limit >= book.chapter_end(story[-1])

    @property
    def matter_read(self) -> bool:
        """Does the front and back matter before the position count as read (the book is
        finished, or the reader included it)?"""
        return self.finished or self.book.position.include_matter

    @property
    def start(self) -> int:
        """The first character of the book the reader may see (unread front matter before)."""
        return 0 if self.matter_read else self.book.story_start

    def hidden_sections(self) -> list[Chapter]:
        """The sections that count as unread although they start before the position: front and
        back matter, until the reader has finished the book or included it."""
        if self.matter_read:
            return []
        limit = self.limit
        return [
            c
            for c in self.book.chapters
            if not c.is_story and (limit is None or c.char_start < limit)
        ]

    @property
    def end(self) -> int:
        """Where the book's visible text ends (exclusive)."""
        limit = self.limit
        return self.book.char_count if limit is None else max(0, min(limit, self.book.char_count))

    def unread_ranges(self) -> tuple[Span, ...]:
        """The front and back matter before the position that counts as unread."""
        book = self.book
        return tuple(
            (c.char_start, min(book.chapter_end(c), self.end)) for c in self.hidden_sections()
        )

    # --- every volume ------------------------------------------------------------------------
    @property
    def volumes(self) -> tuple[Book, ...]:
        """The earlier volumes in series order, then the book."""
        return (*self.earlier, self.book)

    def volume(self, book_id: str) -> Book | None:
        return next((b for b in self.volumes if b.id == book_id), None)

    def spans(self, book_id: str) -> tuple[Span, ...]:
        """The parts of ``book_id``'s text the reader has read, in order (none for a book
        outside the window: a later volume, another series, someone else's)."""
        if book_id != self.book.id:
            earlier = self.volume(book_id)
            return () if earlier is None else ((0, earlier.char_count),)
        out: list[Span] = []
        at = self.start
        for a, b in sorted(self.unread_ranges()):
            if a > at:
                out.append((at, min(a, self.end)))
            at = max(at, b)
        if at < self.end:
            out.append((at, self.end))
        return tuple((a, b) for a, b in out if a < b)

    def bounds(self, book_id: str) -> Span | None:
        """The first and last readable offsets of ``book_id`` (what a store query filters by;
        ``cut`` then drops what falls between spans). None: nothing of it is readable."""
        spans = self.spans(book_id)
        return (spans[0][0], spans[-1][1]) if spans else None

    def clip(self, book_id: str, start: int, end: int) -> Span | None:
        """The first readable part of ``[start, end)`` of ``book_id`` (None: none of it)."""
        for a, b in self.spans(book_id):
            lo, hi = max(a, start), min(b, end)
            if lo < hi:
                return lo, hi
        return None

    def allows(self, book_id: str, start: int, end: int) -> bool:
        """Is all of ``[start, end)`` of ``book_id`` read?"""
        return self.allows_all(((book_id, start, end),))

    def allows_all(self, places: Iterable[tuple[str, int, int]]) -> bool:
        """Is all of each ``(book_id, start, end)`` read? (``allows`` for many places, each
        volume's spans worked out once.)"""
        read: dict[str, tuple[Span, ...]] = {}
        for book_id, start, end in places:
            if book_id not in read:
                read[book_id] = self.spans(book_id)
            if not any(a <= start and end <= b for a, b in read[book_id]):
                return False
        return True

    def cut(self, chunk: Chunk) -> Chunk | None:
        """``chunk`` limited to what the reader has read: None unless it starts inside a
        readable span; a chunk running past the span's end loses its tail."""
        for a, b in self.spans(chunk.book_id):
            if a <= chunk.char_start < b:
                cut = chunk.cut_at(b)
                return cut if cut is not None and cut.text else None
        return None

    def chapters(self, book_id: str | None = None) -> tuple[Chapter, ...]:
        """The chapters of a volume (default: the book) that start inside the read text."""
        volume = self.book if book_id is None else self.volume(book_id)
        if volume is None:
            return ()
        spans = self.spans(volume.id)
        return tuple(c for c in volume.chapters if any(a <= c.char_start < b for a, b in spans))

    def unread_reason(self, book_id: str, start: int) -> Unread | None:
        """Why the text at ``start`` of ``book_id`` is not shown (None: it is)."""
        if self.volume(book_id) is None:
            return Unread.OUTSIDE
        if any(a <= start < b for a, b in self.spans(book_id)):
            return None
        limit = self.limit
        if book_id == self.book.id and limit is not None and start >= limit:
            return Unread.PAST_POSITION
        return Unread.MATTER

    def shows_title(self, chapter: Chapter) -> bool:
        """May the chapter's title be shown? Yes for a chapter starting before the position (the
        reader has reached it, or passed its place in the table of contents) and for a bare label
        ("Chapter XIII"); a later chapter's descriptive title can be a spoiler."""
        limit = self.limit
        return limit is None or chapter.char_start < limit or is_bare_label(chapter.title)

    def named_chapters(self) -> tuple[Chapter, ...]:
        """The chapters a message may name by their titles: those the reader has read into (none
        while the reader has not said how far they have read: they are telling folio, as when a
        book is added with a position) and those titled with a bare label ("Chapter XIII")."""
        reached = self.chapters() if self.whole or self.book.position.is_set else ()
        return tuple(c for c in self.book.chapters if c in reached or is_bare_label(c.title))

    def story_read(self, book_id: str | None = None) -> tuple[tuple[Chapter, int, int], ...]:
        """Each story chapter of a volume (default: the book) reached, with its read
        ``[start, end)``."""
        volume = self.book if book_id is None else self.volume(book_id)
        if volume is None:
            return ()
        out = []
        for c in self.chapters(volume.id):
            if not c.is_story:
                continue
            span = self.clip(volume.id, c.char_start, volume.chapter_end(c))
            if span is not None:
                out.append((c, *span))
        return tuple(out)

    def text_spans(self, book_id: str | None = None) -> tuple[Span, ...]:
        """``spans`` of a volume (default: the book)."""
        return self.spans(self.book.id if book_id is None else book_id)

    def with_book(self, book: Book) -> ReadingWindow:
        """The same window with the book's newer state (a moved position)."""
        return replace(self, book=book)

    def describe(self) -> str:
        """Where the reader is, as a reader says it, with the earlier volumes searched."""
        where = self.book.describe_position()
        if not self.earlier:
            return where
        titles = ", ".join(b.title for b in self.earlier)
        return f"{where}; earlier volumes of {self.book.series} read in full: {titles}"

    def volume_name(self, book_id: str) -> str | None:
        """How a citation names the volume a passage comes from: None for the book itself."""
        if book_id == self.book.id:
            return None
        volume = self.volume(book_id)
        return volume.title if volume is not None else None
