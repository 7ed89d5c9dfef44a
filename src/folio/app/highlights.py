"""Importing the reader's highlights and notes from their e-reader, and listing them.

A file's entries are matched to the owner's books by title (and author, when several books
share a title), or all given to one book; each is anchored in the book's text: where KOReader's
``pos0``/``pos1`` xpointers place it in the EPUB folio holds (the spine as progress sync maps it,
``app.sync.xpointer_offset``), the highlighted text nearest there; else the text alone
(``Anchorer``: outside the front and back matter unless found only there), nearest the device's
page. Entries naming a book the owner has not added yet are kept, waiting, and anchored when that
book is added (``book_added``), as a sync push for an unknown document is.

Invariant: entries are kept only for books of the owner's own library (``books``), or waiting
under the owner's id; importing a file again keeps nothing twice.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from folio.app.sync_placement import xpointer_offset
from folio.domain.books import Book
from folio.domain.highlights import (
    MAX_ENTRIES,
    Anchorer,
    Highlight,
    HighlightError,
    HighlightErrorCode,
    ImportedHighlight,
    within,
)
from folio.domain.ports import BookRepository, HighlightRepository
from folio.domain.sync import Fragment
from folio.domain.window import ReadingWindow

HighlightReader = Callable[[Path], list[ImportedHighlight]]
Fragments = Callable[[str], list[Fragment]]  # a book's EPUB spine as progress sync keeps it


@dataclass(frozen=True, slots=True)
class BookImport:
    """What one book received: entries read, new ones kept, and how many of those are anchored."""

    book: Book
    read: int
    added: int
    anchored: int


@dataclass(frozen=True, slots=True)
class Waiting:
    """Entries kept for a book the owner has not added yet: ``named`` "Title (Author)"."""

    named: str
    read: int
    added: int


@dataclass(frozen=True, slots=True)
class HighlightImport:
    books: tuple[BookImport, ...] = ()
    waiting: tuple[Waiting, ...] = field(default=())

    @property
    def unmatched(self) -> tuple[str, ...]:
        """ "Title (Author)" of the entries whose book is not in the library (kept, waiting)."""
        return tuple(w.named for w in self.waiting)

    def summary(self) -> tuple[str, ...]:
        """What the import did, in the words every entry point shows: a sentence per book and
        one for the entries kept waiting (none for an empty file)."""
        said = [
            f"{b.book.title}: {b.added} new of {b.read} ({b.anchored} found in the book's text)."
            for b in self.books
        ]
        if self.waiting:
            said.append(f"Kept until the book is added: {'; '.join(self.unmatched)}.")
        return tuple(said) or ("No highlights in that file.",)


@dataclass(frozen=True, slots=True)
class ShownHighlights:
    """A book's highlights inside the reading window, and how many others are not shown:
    ``hidden`` past the position or in unread matter, ``unplaced`` not found in the book."""

    highlights: list[Highlight]
    hidden: int
    unplaced: int


def _fold(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def match_book(title: str, author: str | None, books: Sequence[Book]) -> Book | None:
    """The book a device names: the same title (or one title the start of the other, as a
    subtitle or an edition note adds words); an author named picks among several."""
    wanted = _fold(title)
    if not wanted:
        return None
    same = [b for b in books if _fold(b.title) == wanted]
    close = same or [
        b for b in books if _fold(b.title) and (
            wanted.startswith(_fold(b.title) + " ") or _fold(b.title).startswith(wanted + " ")
        )
    ]  # fmt: skip
    if len(close) > 1 and author:
        by = _fold(author).split()
        authored = [b for b in close if b.author and set(by) & set(_fold(b.author).split())]
        close = authored or close
    return close[0] if close else None


class Highlights:
    """The highlights use case for one owner (``user_id``) over their ``books``."""

    def __init__(
        self,
        store: HighlightRepository,
        books: BookRepository,
        read: HighlightReader,
        *,
        user_id: str,
        fragments: Fragments | None = None,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._store = store
        self._books = books
        self._read = read
        self._user = user_id
        self._fragments = fragments
        self._new_id = new_id

    def import_file(self, path: Path, *, book: Book | None = None) -> HighlightImport:
        """Import ``path`` (a KOReader ``.sdr`` folder or ``metadata.*.lua``, or a Kindle ``My
        Clippings.txt``): every entry into ``book``, or each into the book it names; entries
        naming a book not in the library are kept until it is added."""
        entries = self._read(path)
        if len(entries) > MAX_ENTRIES:
            raise HighlightError(
                f"{path.name} holds {len(entries):,} entries; folio imports at most"
                f" {MAX_ENTRIES:,} from one file"
            )
        groups: dict[str, tuple[Book, list[ImportedHighlight]]] = {}
        unmatched: dict[str, list[ImportedHighlight]] = {}
        shelf = self._books.list() if book is None else [book]
        for entry in entries:
            target = book or match_book(entry.title, entry.author, shelf)
            if target is None:
                if not entry.title.strip():
                    raise HighlightError(
                        f"{path.name} does not name its book: give the book it belongs to"
                    )
                named = f"{entry.title} ({entry.author})" if entry.author else entry.title
                unmatched.setdefault(named, []).append(entry)
                continue
            groups.setdefault(target.id, (target, []))[1].append(entry)
        # every book's entries are anchored before the first is stored: a book whose text
        # cannot be read stores nothing of the file
        kept = [(b, self._anchored_all(b, items)) for b, items in groups.values()]
        done = tuple(
            BookImport(b, len(rows), self._store.add(rows), sum(h.anchored for h in rows))
            for b, rows in kept
        )
        waiting = tuple(
            Waiting(named, len(items), self._store.keep_pending(self._user, items))
            for named, items in unmatched.items()
        )
        return HighlightImport(done, waiting)

    def book_added(self, book: Book) -> BookImport | None:
        """Anchor into ``book`` the owner's waiting entries that name it (None: none do)."""
        waiting = [
            e for e in self._store.pending(self._user) if match_book(e.title, e.author, [book])
        ]
        if not waiting:
            return None
        rows = self._anchored_all(book, waiting)
        added = self._store.add(rows)
        self._store.drop_pending(self._user, waiting)
        return BookImport(book, len(rows), added, sum(h.anchored for h in rows))

    def waiting(self) -> list[ImportedHighlight]:
        """The owner's entries kept until their book is added."""
        return self._store.pending(self._user)

    def _anchored_all(self, book: Book, entries: list[ImportedHighlight]) -> list[Highlight]:
        matter = [(c.char_start, book.chapter_end(c)) for c in book.chapters if not c.is_story]
        anchorer = Anchorer(self._books.get_text(book.id), matter=matter)
        fragments = self._fragments(book.id) if self._fragments is not None else []
        return [self._anchored(book, anchorer, fragments, e) for e in entries]

    def _placed(self, book: Book, fragments: list[Fragment], pointer: str | None) -> int | None:
        if not fragments or not pointer or not pointer.startswith("/body"):
            return None
        return xpointer_offset(book, pointer, fragments, self._books)

    def _span(
        self, book: Book, anchorer: Anchorer, fragments: list[Fragment], entry: ImportedHighlight
    ) -> tuple[int, int] | None:
        """The device's pointer first (the text nearest it, else the pointers' own span), then
        the text nearest the device's page."""
        start = self._placed(book, fragments, entry.location)
        if start is not None:
            end = self._placed(book, fragments, entry.end_location)
            found = anchorer.anchor(entry.text, near=start, in_matter=True) if entry.text else None
            if found is not None or not entry.text:
                return found
            if end is None or end <= start:
                end = start + len(entry.text)
            return start, min(end, book.char_count)
        near = None
        if entry.page is not None and book.pages:
            page = book.page_by_label(str(entry.page))
            near = page.char_start if page is not None else None
        return anchorer.anchor(entry.text, near=near) if entry.text else None

    def _anchored(
        self, book: Book, anchorer: Anchorer, fragments: list[Fragment], entry: ImportedHighlight
    ) -> Highlight:
        span = self._span(book, anchorer, fragments, entry)
        return Highlight(
            id=self._new_id(),
            book_id=book.id,
            user_id=self._user,
            kind=entry.kind,
            text=entry.text,
            note=entry.note,
            chapter=(_chapter(book, span[0]) if span else None) or entry.chapter,
            location=entry.location,
            char_start=span[0] if span else None,
            char_end=span[1] if span else None,
            created=entry.created,
            source=entry.source,
            key=entry.key,
        )

    def of_book(self, book: Book) -> list[Highlight]:
        """All the owner's highlights of ``book`` (past the position too)."""
        return self._store.of_book(book.id, self._user)

    def shown(self, window: ReadingWindow) -> ShownHighlights:
        """The owner's highlights of the window's book inside the window, and the others
        counted (never shown: their text could tell what comes later)."""
        every = self.of_book(window.book)
        inside = within(window, every)
        unplaced = sum(not h.anchored for h in every)
        return ShownHighlights(inside, len(every) - len(inside) - unplaced, unplaced)

    def delete(self, book: Book, highlight_id: str) -> None:
        """Forget one of the owner's highlights of ``book``; ``HighlightError(NOT_FOUND)``."""
        if not self._store.delete(book.id, self._user, highlight_id):
            raise HighlightError(
                f"No highlight {highlight_id!r} in {book.title}",
                code=HighlightErrorCode.NOT_FOUND,
            )


def _chapter(book: Book, offset: int) -> str | None:
    chapter = book.chapter_at(offset)
    return chapter.title if chapter else None
