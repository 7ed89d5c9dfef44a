"""Questions from an e-reader: KOReader names a book by its file's digest and a place by an
xpointer (or a PDF's page); folio answers about the reader's own book, bounded by that place.

- ``book_for(document)``: the user's book whose file KOReader names ``document`` (either of its
  modes), found as progress sync finds it (``SyncRepository.books_for_document``), among the
  user's own books only (``books`` is the user's repository: another user's copy is NOT_FOUND);
- ``position(book, progress, percentage)``: where a sync push of the same fields would put the
  reader (``app.sync.synced_position``: the PDF page or the xpointer, else the percentage moved
  back so that it is never ahead of the device). It is not stored: it bounds this one request
  (progress sync is what keeps a device's positions, with its own rules);
- ``PositionedBooks``: the user's repository showing that one book at that place, so that a chat
  turn and the reader tools built on it are bounded by it (their ``ReadingWindow`` is the book's);
- ``places(book, sources)``: where each cited passage starts on the device: its xpointer in an
  EPUB (``domain.xpointers``), its page in a PDF.

Invariant: every place computed lies in the book's own text at an offset the caller gives (a
citation's start, already inside the reading window); nothing here reads past it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from folio.app.sync_placement import placed_fragment, placed_page, synced_position
from folio.domain.books import Book, BookFormat, ReadingPosition
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.ports import BookRepository, SyncRepository
from folio.domain.sync import Fragment, PushedProgress
from folio.domain.xpointers import fragment_at, xpointer_at

NOT_IN_LIBRARY = (
    "This book is not in your folio library: add this book to folio (folio add FILE, or upload "
    "it on folio's page), then ask again"
)


@dataclass(frozen=True, slots=True)
class DevicePlace:
    """Where a passage starts on the device: ``xpointer`` in an EPUB, ``pdf_page`` (1-based) in
    a PDF; both None for a book KOReader places otherwise, or a passage of another volume."""

    xpointer: str | None = None
    pdf_page: int | None = None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class DeviceReading:
    """One user's books as KOReader names them (see the module docstring)."""

    def __init__(
        self,
        store: SyncRepository,
        books: BookRepository,
        *,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._store = store
        self._books = books
        self._clock = clock

    def book_for(self, document: str) -> Book:
        """The user's book KOReader names ``document``; ``BookError(NOT_FOUND)`` otherwise."""
        for book_id in self._store.books_for_document(document):
            try:
                return self._books.get(book_id)
            except BookError as e:
                if not e.is_not_found:
                    raise
        raise BookError(NOT_IN_LIBRARY, code=BookErrorCode.NOT_FOUND)

    def position(self, book: Book, progress: str, percentage: float | None) -> ReadingPosition:
        """Where the device is in ``book``. ``BookError(INVALID_POSITION)`` when ``progress``
        names no place folio can find and there is no ``percentage`` to fall back on."""
        fragments = self._store.fragments_of(book.id) if book.format is BookFormat.EPUB else []
        if percentage is None and not _placeable(book, progress, fragments):
            raise BookError(
                f"folio cannot place {progress[:80]!r} in {book.title!r} and no percentage was "
                "given: send KOReader's percentage (0-1) with it",
                code=BookErrorCode.INVALID_POSITION,
            )
        pushed = PushedProgress("", progress, percentage or 0.0, "", "", self._clock())
        position = synced_position(book, pushed, fragments, self._books)
        if position is None:  # every push places somewhere; kept total for the type
            raise BookError("No position", code=BookErrorCode.INVALID_POSITION)
        return replace(position, source=None, set_at=None)  # where the reader is now

    def positioned(self, book: Book, position: ReadingPosition) -> PositionedBooks:
        return PositionedBooks(self._books, book.with_position(position))

    def places(self, book: Book, starts: Iterable[tuple[str | None, int]]) -> list[DevicePlace]:
        """The device's place of each ``(book_id, offset)`` (``book_id`` None: ``book``)."""
        fragments = self._store.fragments_of(book.id) if book.format is BookFormat.EPUB else []
        texts: dict[int, str] = {}
        out = []
        for book_id, offset in starts:
            if book_id not in (None, book.id):
                out.append(DevicePlace())  # an earlier volume: not the file on the device
            elif book.format is BookFormat.PDF and book.pages:
                out.append(DevicePlace(pdf_page=book.page_at(offset).number))
            else:
                out.append(DevicePlace(self._xpointer(book, fragments, texts, offset)))
        return out

    def _xpointer(
        self, book: Book, fragments: Sequence[Fragment], texts: dict[int, str], offset: int
    ) -> str | None:
        fragment = fragment_at(fragments, offset)
        if fragment is None:
            return None
        if fragment.index not in texts:
            texts[fragment.index] = self._books.get_text(
                book.id, fragment.char_start, fragment.char_end
            )
        return xpointer_at(fragment, texts[fragment.index], offset)


def _placeable(book: Book, progress: str, fragments: Sequence[Fragment]) -> bool:
    """Would a sync push of ``progress`` be placed without its percentage (``synced_position``:
    a PDF page of the book, or an xpointer into one of its spine documents)?"""
    return (
        placed_page(book, progress) is not None
        or placed_fragment(book, progress, fragments) is not None
    )


class PositionedBooks:
    """A ``BookRepository`` that shows one book (``book``) at the device's position and passes
    everything else to ``inner``: the chat turn and the tools built on it read the position from
    here, so the device's place bounds them without being stored."""

    def __init__(self, inner: BookRepository, book: Book) -> None:
        self._inner = inner
        self.book = book

    def _shown(self, book: Book) -> Book:
        return self.book if book.id == self.book.id else book

    def get(self, book_id: str) -> Book:
        return self._shown(self._inner.get(book_id))

    def list(self) -> builtins.list[Book]:
        return [self._shown(b) for b in self._inner.list()]

    def find_by_hash(self, content_hash: str) -> Book | None:
        found = self._inner.find_by_hash(content_hash)
        return None if found is None else self._shown(found)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)  # every other method: the user's repository's
