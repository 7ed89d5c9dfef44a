"""Where a progress-sync push puts the reader in a book (``synced_position``): a PDF's page, an
EPUB's xpointer placed in its spine document, else the device's percentage.

Invariant: a place folio cannot find never moves the reader ahead of the device: the percentage
it falls back on is moved back (``at_or_before``) by more than a device runs ahead of the text.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from folio.domain.books import Book, BookFormat, PositionKind, ReadingPosition
from folio.domain.ports import BookRepository
from folio.domain.sync import (
    Fragment,
    MatchKind,
    PushedProgress,
    XPointer,
    device_label,
    parse_xpointer,
    pdf_page,
)
from folio.domain.xpointers import place_in_fragment

log = logging.getLogger(__name__)

# characters an xpointer folio cannot place moves back from the device's percentage, which runs
# up to two screens ahead of the text read in a reflowed book (3,600 characters measured)
PERCENTAGE_SLACK = 4000


def synced_position(
    book: Book,
    pushed: PushedProgress,
    fragments: list[Fragment],
    books: BookRepository,
    *,
    match: MatchKind = MatchKind.DOCUMENT,
) -> ReadingPosition | None:
    """Where ``pushed`` puts the reader in ``book``: the PDF page, else the xpointer's place in
    the EPUB's spine document, else the percentage. A weak match (``MatchKind.TITLE``: perhaps
    another edition) takes only the percentage, moved back as for a place folio cannot find."""
    base = replace(
        ReadingPosition(),
        include_matter=book.position.include_matter,
        source=device_label(pushed.device, match),
        set_at=pushed.pushed_at,
    )
    if match.weak:
        weak = at_or_before(book, round(book.char_count * pushed.percentage))
        percent = round(100 * weak / book.char_count, 2) if book.char_count else 0.0
        return replace(base, char_offset=weak, kind=PositionKind.PERCENT, value=percent)
    page = placed_page(book, pushed.progress)
    if page is not None:
        end = book.pages[page - 1].char_end
        return replace(base, char_offset=end, kind=PositionKind.PAGE, value=float(page))
    offset = xpointer_offset(book, pushed.progress, fragments, books)
    if offset is None:
        offset = round(book.char_count * pushed.percentage)
        if pushed.progress.strip().startswith("/body"):  # a place named that folio cannot find
            offset = at_or_before(book, offset)
            log.info(
                "sync: xpointer %r not placed in %r; %.4f of the book, moved back to %d",
                pushed.progress[:80], book.title, pushed.percentage, offset,
            )  # fmt: skip
    percent = round(100 * offset / book.char_count, 2) if book.char_count else 0.0
    return replace(base, char_offset=offset, kind=PositionKind.PERCENT, value=percent)


def at_or_before(book: Book, offset: int) -> int:
    """A place that is not ahead of ``offset`` as a device measures it: the start of the page
    ``PERCENTAGE_SLACK`` characters before it, so that an unplaced position never opens text
    the reader has not reached."""
    back = max(0, offset - PERCENTAGE_SLACK)
    return book.page_at(back).char_start if book.pages and back > 0 else back


def xpointer_offset(
    book: Book, progress: str, fragments: list[Fragment], books: BookRepository
) -> int | None:
    """Where KOReader's xpointer ``progress`` lies in ``book``'s text (an EPUB's), or None when
    it does not parse or names a spine document folio does not know (also for highlights'
    ``pos0``/``pos1``)."""
    placed = placed_fragment(book, progress, fragments)
    if placed is None:
        return None
    pointer, fragment = placed
    text = books.get_text(book.id, fragment.char_start, fragment.char_end)
    return fragment.char_start + place_in_fragment(fragment, pointer, text)


def placed_page(book: Book, progress: str) -> int | None:
    """The page of ``book`` (a PDF's, 1-based) that ``progress`` names, or None."""
    page = pdf_page(progress) if book.format is BookFormat.PDF else None
    return page if page is not None and 1 <= page <= len(book.pages) else None


def placed_fragment(
    book: Book, progress: str, fragments: Sequence[Fragment]
) -> tuple[XPointer, Fragment] | None:
    """KOReader's xpointer ``progress`` and the spine document of ``book`` (an EPUB's) it names,
    or None when it does not parse or names a document folio does not know."""
    pointer = parse_xpointer(progress) if book.format is BookFormat.EPUB else None
    fragment = next((f for f in fragments if pointer and f.index == pointer.fragment), None)
    return None if pointer is None or fragment is None else (pointer, fragment)
