"""Importing the reader's highlights and notes from their e-reader, and listing them.

A file's entries are matched to the owner's books by title (and author, when several books
share a title), or all given to one book; each is anchored in the book's extracted text
(``Anchorer``) and kept once per book, owner and entry.

Invariant: entries are kept only for books of the owner's own library (``books``), under the
owner's id; importing a file again keeps nothing twice.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from folio.domain.books import Book
from folio.domain.highlights import (
    MAX_ENTRIES,
    Anchorer,
    Highlight,
    HighlightError,
    ImportedHighlight,
    within,
)
from folio.domain.ports import BookRepository, HighlightRepository
from folio.domain.window import ReadingWindow

HighlightReader = Callable[[Path], list[ImportedHighlight]]


@dataclass(frozen=True, slots=True)
class BookImport:
    """What one book received: entries read, new ones kept, and how many of those are anchored."""

    book: Book
    read: int
    added: int
    anchored: int


@dataclass(frozen=True, slots=True)
class HighlightImport:
    books: tuple[BookImport, ...] = ()
    unmatched: tuple[str, ...] = field(default=())  # "Title (Author)" of entries with no book


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
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._store = store
        self._books = books
        self._read = read
        self._user = user_id
        self._new_id = new_id

    def import_file(self, path: Path, *, book: Book | None = None) -> HighlightImport:
        """Import ``path`` (a KOReader ``.sdr`` folder or ``metadata.*.lua``, or a Kindle ``My
        Clippings.txt``): every entry into ``book``, or each into the book it names."""
        entries = self._read(path)
        if len(entries) > MAX_ENTRIES:
            raise HighlightError(
                f"{path.name} holds {len(entries):,} entries; folio imports at most"
                f" {MAX_ENTRIES:,} from one file"
            )
        groups: dict[str, tuple[Book, list[ImportedHighlight]]] = {}
        unmatched: dict[str, None] = {}
        shelf = self._books.list() if book is None else [book]
        for entry in entries:
            target = book or match_book(entry.title, entry.author, shelf)
            if target is None:
                named = f"{entry.title} ({entry.author})" if entry.author else entry.title
                unmatched[named] = None
                continue
            groups.setdefault(target.id, (target, []))[1].append(entry)
        # every book's entries are anchored before the first is stored: a book whose text
        # cannot be read stores nothing of the file
        kept = [(b, self._anchored_all(b, items)) for b, items in groups.values()]
        done = tuple(
            BookImport(b, len(rows), self._store.add(rows), sum(h.anchored for h in rows))
            for b, rows in kept
        )
        return HighlightImport(done, tuple(unmatched))

    def _anchored_all(self, book: Book, entries: list[ImportedHighlight]) -> list[Highlight]:
        anchorer = Anchorer(self._books.get_text(book.id))
        return [self._anchored(book, anchorer, e) for e in entries]

    def _anchored(self, book: Book, anchorer: Anchorer, entry: ImportedHighlight) -> Highlight:
        near = None
        if entry.page is not None and book.pages:
            page = book.page_by_label(str(entry.page))
            near = page.char_start if page is not None else None
        span = anchorer.anchor(entry.text, near=near) if entry.text else None
        return Highlight(
            id=self._new_id(),
            book_id=book.id,
            user_id=self._user,
            kind=entry.kind,
            text=entry.text,
            note=entry.note,
            chapter=entry.chapter or (_chapter(book, span[0]) if span else None),
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

    def read_so_far(self, window: ReadingWindow) -> tuple[list[Highlight], int]:
        """The owner's highlights of the window's book that lie inside the window, and how many
        others are withheld (past the position, in unread matter, or not found in the text)."""
        every = self.of_book(window.book)
        shown = within(window, every)
        return shown, len(every) - len(shown)


def _chapter(book: Book, offset: int) -> str | None:
    chapter = book.chapter_at(offset)
    return chapter.title if chapter else None
