"""The library use cases: list, find a book by what the user typed, show, remove, set the reading
position.

Invariant: a reference resolves to exactly one book or raises ``BookError`` (``NOT_FOUND`` with
the closest titles as suggestions, or ``AMBIGUOUS`` naming every candidate with its id); it never
guesses.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from folio.app.ids import ambiguous_prefix, ids_starting
from folio.domain.books import Book, ReadingPosition, reader_names
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.series import series_fields
from folio.domain.window import ReadingWindow, Unread

if TYPE_CHECKING:  # `folio books` needs neither: the ports are protocols, a passage is read later
    from folio.domain.passages import Passage
    from folio.domain.ports import BookRepository


def reading_window(books: BookRepository, book: Book) -> ReadingWindow:
    """``book``'s reading window; the earlier volumes of its series come from ``books`` (the
    reader's own library: another user's volumes are never in it)."""
    return ReadingWindow.of(book, books.list() if book.series else ())


SHORT_ID = 8
MAX_TITLE_CHARS = 500
MAX_READ_CHARS = 20_000  # one read of the book's text (a citation's passage with its context)


class Library:
    """Books as the user sees them. ``on_remove`` deletes a book's conversations in stores that have
    no foreign-key cascade from books (the SQLite store cascades by itself)."""

    def __init__(
        self, books: BookRepository, *, on_remove: Callable[[str], None] | None = None
    ) -> None:
        self._books = books
        self._on_remove = on_remove

    def list_books(self) -> list[Book]:
        """Every book, by title, each with the name that tells it apart from a book of the same
        title ("Frankenstein (EPUB)", see ``reader_names``)."""
        books = self._books.list()
        names = reader_names(books)
        return [b.named(names[b.id]) for b in books]

    def get(self, book_id: str) -> Book:
        """The book ``book_id`` with its reader's name. Raises ``BookError(NOT_FOUND)``."""
        return self._named(self._books.get(book_id))

    def _named(self, book: Book) -> Book:
        names = reader_names(
            b for b in self._books.list() if b.title.casefold() == book.title.casefold()
        )
        return book.named(names.get(book.id, book.title))

    def resolve(self, ref: str) -> Book:
        """The one book that ``ref`` names: its id, its name ("Frankenstein (EPUB)") or title
        (case-insensitive), a unique id prefix or a unique part of its name, then a name holding
        every word of ``ref`` ("Frankenstein (EPUB)" for "Frankenstein; or, the Modern
        Prometheus (EPUB)"), tried in that order.

        Raises:
            BookError: ``NOT_FOUND`` (with close titles suggested) or ``AMBIGUOUS`` (listing ids).
        """
        wanted = ref.strip()
        if not wanted:
            raise BookError("Name a book by its title or id", code=BookErrorCode.NOT_FOUND)
        books = self.list_books()
        for match in (_by_id, _by_name, _by_title, _by_prefix_or_part, _by_words):
            found = match(books, wanted)
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise _ambiguous(wanted, found)
        raise _not_found(wanted, books)

    def full_id(self, ref: str) -> str:
        """The id of the one book whose id is ``ref`` or starts with it (the short ids folio
        prints); names and titles are not matched.

        Raises:
            BookError: ``NOT_FOUND``, or ``AMBIGUOUS`` saying how many characters tell the
            matching ids apart.
        """
        wanted = ref.strip()
        try:
            return self._books.get(wanted).id
        except BookError as e:
            if not e.is_not_found:
                raise
        found = ids_starting(wanted, (b.id for b in self._books.list()))
        if len(found) == 1:
            return found[0]
        if found:
            raise BookError(
                ambiguous_prefix(wanted, "book", found),
                code=BookErrorCode.AMBIGUOUS,
                candidates=found,
            )
        raise BookError(f"No book with the id {wanted!r}", code=BookErrorCode.NOT_FOUND)

    def window(self, book: Book) -> ReadingWindow:
        """What the reader has read of ``book``: up to its position, with the earlier volumes of
        its series among the reader's own books."""
        return reading_window(self._books, book)

    def remove(self, book_id: str) -> Book:
        """Delete a book with its chunks, vectors and conversations; returns what was deleted."""
        book = self._books.get(book_id)
        if self._on_remove is not None:
            self._on_remove(book.id)
        self._books.delete(book.id)
        return book

    def edit(
        self,
        book_id: str,
        *,
        title: str | None = None,
        author: str | None = None,
        series: str | None = None,
        series_index: float | None = None,
    ) -> Book:
        """Change the title, the author (``""`` clears it) and/or the series and index (``""``
        clears both; an index alone keeps the series). ``None``: unchanged. Raises
        ``BookError(INVALID_INPUT)`` for an empty or over-long title, or a series or index
        ``series_fields`` refuses."""
        book = self._books.get(book_id)
        new_title = book.title if title is None else " ".join(title.split())
        if not new_title or len(new_title) > MAX_TITLE_CHARS:
            raise BookError(
                f"A title is 1 to {MAX_TITLE_CHARS} characters", code=BookErrorCode.INVALID_INPUT
            )
        new_author = book.author if author is None else (" ".join(author.split()) or None)
        if new_author is not None and len(new_author) > MAX_TITLE_CHARS:
            raise BookError(
                f"An author is at most {MAX_TITLE_CHARS} characters",
                code=BookErrorCode.INVALID_INPUT,
            )
        if series is not None or series_index is not None:
            # checked before anything is written: a bad index never leaves a new title behind
            name = book.series if series is None else series
            index = book.series_index if series_index is None and series else series_index
            name, index = series_fields(name, index)
            book = self._books.set_series(book.id, series=name, series_index=index)
        if title is None and author is None:
            return self._named(book)
        return self._named(self._books.update_details(book.id, title=new_title, author=new_author))

    def set_position(
        self,
        book_id: str,
        *,
        page: str | None = None,
        chapter: str | int | None = None,
        percent: float | None = None,
        reset: bool = False,
        chapter_index: int | None = None,
        next_chapter: bool = False,
        include_matter: bool | None = None,
    ) -> Book:
        """Set how far the reader has read: exactly one of ``page`` (label or number), ``chapter``
        (as the book names it: "5", "Chapter 5", "V", "Letter 2", words of its title),
        ``chapter_index`` (1-based entry of ``book.chapters``, for a client's chapter list),
        ``percent`` (0-100), ``reset`` (the whole book visible again) or ``next_chapter`` (the
        reader finished the chapter they were in); and/or ``include_matter``: whether the front
        and back matter before the position (editors' introductions, prefaces, notes, which may
        discuss the whole story) counts as read before the reader finishes the book (``None``
        keeps the reader's earlier choice; off at first).

        Raises:
            BookError: ``INVALID_POSITION`` for none or several choices or an out-of-range value,
                ``AMBIGUOUS`` for a chapter reference that names several chapters.
        """
        given = (page, chapter, percent, chapter_index)
        flags = [flag for flag in (reset, next_chapter) if flag]
        chosen = [x for x in given if x is not None] + flags
        if len(chosen) > 1 or (not chosen and include_matter is None):
            raise BookError(
                "Give exactly one of a page, a chapter, a percentage, the next chapter, or reset",
                code=BookErrorCode.INVALID_POSITION,
            )
        book = self.get(book_id)
        if next_chapter:
            position = book.position_after_next_chapter()
        elif chapter_index is not None:
            position = book.position_at_chapter_index(chapter_index)
        elif chosen:
            position = _position(book, page, chapter, percent)
        else:
            position = book.position
        matter = book.position.include_matter if include_matter is None else include_matter
        return self._named(self._books.set_position(book.id, position.with_matter(matter)))

    def set_position_from_text(self, book_id: str, text: str) -> Book:
        """Set the position from one line a reader typed (see ``Book.position_from_text``):
        "Chapter 5", "Letter 2", "p. 45", "23%", "not started", or "" / "whole" for the whole book.

        Raises:
            BookError: ``INVALID_POSITION``, ``AMBIGUOUS``.
        """
        book = self.get(book_id)
        position = book.position_from_text(text).with_matter(book.position.include_matter)
        return self._named(self._books.set_position(book.id, position))

    def read(self, book_id: str, start: int, end: int, *, volume_id: str | None = None) -> Passage:
        """The text from ``start`` to ``end`` (character offsets) of ``book_id``, or of
        ``volume_id``, an earlier volume of its series (a cited passage), cut by the book's
        reading window: nothing past the position, in unread matter or in a later volume is
        ever returned.

        Raises:
            BookError: ``INVALID_INPUT`` for an empty or reversed range, one over
                ``MAX_READ_CHARS`` or past the end of the book; ``INVALID_POSITION`` when the
                range starts at or past the reader's position, lies in unread matter, or the
                volume is not an earlier one of the book's series.
        """
        window = self.window(self._books.get(book_id))
        volume = window.volume(volume_id or book_id)
        if volume is None:
            raise BookError(
                f"That book is not an earlier volume of {window.book.title!r}'s series",
                code=BookErrorCode.INVALID_POSITION,
            )
        if start < 0 or end <= start or end - start > MAX_READ_CHARS:
            raise BookError(
                f"A read is 1 to {MAX_READ_CHARS} characters from start to end (got {start}-{end})",
                code=BookErrorCode.INVALID_INPUT,
            )
        if start >= volume.char_count:
            raise BookError(
                f"The book has {volume.char_count} characters; {start} is past its end",
                code=BookErrorCode.INVALID_INPUT,
            )
        span = window.clip(volume.id, start, min(end, volume.char_count))
        if span is None:
            raise BookError(
                _unread_reason(window, volume.id, start), code=BookErrorCode.INVALID_POSITION
            )
        text = self._books.get_text(volume.id, *span)
        return _passage(window, volume, *span, text)


def _unread_reason(window: ReadingWindow, book_id: str, start: int) -> str:
    if window.unread_reason(book_id, start) is Unread.PAST_POSITION:
        where = window.book.describe_position()
        return f"This part of the book is past your reading position ({where})"
    return (
        "This part of the book is front matter or back matter (an introduction, a preface, "
        "notes), which counts as unread until you have finished the book"
    )


def _passage(window: ReadingWindow, volume: Book, start: int, end: int, text: str) -> Passage:
    from folio.domain.passages import Passage

    chapter = volume.chapter_at(start)
    first = volume.page_label(start)
    last = volume.page_label(max(start, end - 1))
    other = volume.id != window.book.id
    return Passage(
        None, chapter.title if chapter else None, first, last, start, end, text,
        book_id=volume.id if other else None, volume=volume.title if other else None,
    )  # fmt: skip


def _position(
    book: Book, page: str | None, chapter: str | int | None, percent: float | None
) -> ReadingPosition:
    if page is not None:
        return book.position_at_page(page.strip())
    if chapter is not None:
        return book.position_at_chapter(chapter)
    if percent is not None:
        return book.position_at_percent(percent)
    return ReadingPosition()


def _by_id(books: list[Book], ref: str) -> list[Book]:
    return [b for b in books if b.id == ref]


def _by_name(books: list[Book], ref: str) -> list[Book]:
    folded = ref.casefold()
    return [b for b in books if b.name.casefold() == folded]


def _by_title(books: list[Book], ref: str) -> list[Book]:
    folded = ref.casefold()
    return [b for b in books if b.title.casefold() == folded]


_WORD = re.compile(r"\w+")


def _by_prefix_or_part(books: list[Book], ref: str) -> list[Book]:
    folded = ref.casefold()
    return [b for b in books if b.id.startswith(ref) or folded in b.name.casefold()]


def _by_words(books: list[Book], ref: str) -> list[Book]:
    wanted = set(_WORD.findall(ref.casefold()))
    return [b for b in books if wanted and wanted <= set(_WORD.findall(b.name.casefold()))]


def describe(book: Book) -> str:
    return f"{book.name} (id {book.id[:SHORT_ID]})"


def _ambiguous(ref: str, books: list[Book]) -> BookError:
    names = "; ".join(describe(b) for b in books)
    told_apart = len({b.name.casefold() for b in books}) == len(books)
    how = "its name as shown" if told_apart else "more of the title"
    return BookError(
        f"{ref!r} matches {len(books)} books: {names}. Use {how} or the id.",
        code=BookErrorCode.AMBIGUOUS,
        candidates=[b.id for b in books],
    )


def _not_found(ref: str, books: list[Book]) -> BookError:
    close = _close_titles(ref, books)
    hint = f" Did you mean: {'; '.join(describe(b) for b in close)}?" if close else ""
    return BookError(
        f"No book matches {ref!r}.{hint}",
        code=BookErrorCode.NOT_FOUND,
        candidates=[b.id for b in close],
    )


def _close_titles(ref: str, books: list[Book], *, n: int = 3, cutoff: float = 0.6) -> list[Book]:
    """Books whose title, or a word of it, is spelled like ``ref`` (typos, partial words)."""
    folded = ref.casefold()

    def likeness(book: Book) -> float:
        title = book.title.casefold()
        candidates = [title, *title.split()]
        return max(difflib.SequenceMatcher(None, folded, c).ratio() for c in candidates)

    scored = sorted(((likeness(b), b.title, b) for b in books), key=lambda x: (-x[0], x[1]))
    return [b for score, _, b in scored[:n] if score >= cutoff]
