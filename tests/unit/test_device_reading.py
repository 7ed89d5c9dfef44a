"""Questions from an e-reader (``folio.app.device_reading``) on in-memory fakes: the user's book
found by KOReader's document id (another user's copy is not found), the device's place as a sync
push would make it but not stored, a place folio cannot find without a percentage refused, and
the places a citation opens on the device."""

from __future__ import annotations

from typing import Any

import pytest

from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.memory.sync import InMemorySyncStore
from folio.app.device_reading import DeviceReading, PositionedBooks
from folio.app.ownership import OwnedBooks
from folio.domain.books import Book, BookFormat, Chapter, Page
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.sync import DocumentIds, Fragment
from folio.domain.users import ResourceKind
from folio.domain.window import ReadingWindow

TEXT = "".join(f"Chapter {n}\n\n" + "word " * 198 + "\n\n" for n in range(1, 11))
PAGES = tuple(Page(n, str(n), (n - 1) * 1000, n * 1000) for n in range(1, 11))
# one spine document per chapter, each a heading and a paragraph
FRAGMENTS = [
    Fragment(
        n + 1,
        TEXT.index(f"Chapter {n}\n"),
        TEXT.index(f"Chapter {n}\n") + len(f"Chapter {n}\n\n" + "word " * 198),
        {"/body": 0, "/body/h1": 0, "/body/h1/text()": 0,
         "/body/p": len(f"Chapter{n}"), "/body/p/text()": len(f"Chapter{n}")},
        density=0.8,
    )
    for n in range(1, 11)
]  # fmt: skip


class Owners:
    def __init__(self) -> None:
        self.owner: dict[str, str] = {}

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str | None:
        return self.owner.get(resource_id)

    def owners(self, kind: ResourceKind, ids: list[str]) -> dict[str, str | None]:
        return {i: self.owner.get(i) for i in ids}


def _book(book_id: str, fmt: BookFormat = BookFormat.EPUB) -> Book:
    starts = [TEXT.index(f"Chapter {n}\n") for n in range(1, 11)]
    chapters = tuple(Chapter(n, f"Chapter {n}", s) for n, s in enumerate(starts, 1))
    return Book(book_id, "A Novel", None, fmt, f"{book_id}.{fmt.value}", f"hash-{book_id}",
                len(PAGES), len(TEXT), chapters, PAGES)  # fmt: skip


@pytest.fixture
def shelves() -> tuple[InMemoryLibrary, InMemorySyncStore, Owners]:
    library, store, owners = InMemoryLibrary(), InMemorySyncStore(), Owners()
    for book_id, user, fmt in (("a", "alice", BookFormat.EPUB), ("b", "bob", BookFormat.EPUB),
                               ("p", "alice", BookFormat.PDF)):  # fmt: skip
        library.add(_book(book_id, fmt), TEXT, [])
        owners.owner[book_id] = user
        fragments = FRAGMENTS if fmt is BookFormat.EPUB else []
        store.save_documents(book_id, DocumentIds(f"doc-{book_id}", f"name-{book_id}"), fragments)
    # bob holds a copy of alice's file too
    store.save_documents("b", DocumentIds("doc-a", "name-a"), FRAGMENTS)
    return library, store, owners


def _reading(shelves: tuple[InMemoryLibrary, InMemorySyncStore, Owners], user: str) -> Any:
    library, store, owners = shelves
    return DeviceReading(store, OwnedBooks(library, owners, user))


def test_the_document_names_the_callers_own_copy_only(shelves: Any) -> None:
    assert _reading(shelves, "alice").book_for("doc-a").id == "a"
    assert _reading(shelves, "bob").book_for("doc-a").id == "b"
    assert _reading(shelves, "alice").book_for("name-p").id == "p"  # KOReader's filename mode
    with pytest.raises(BookError) as refused:
        _reading(shelves, "bob").book_for("doc-p")
    assert refused.value.is_not_found and "folio add FILE" in refused.value.message


def test_an_xpointer_bounds_the_window_without_moving_the_stored_position(shelves: Any) -> None:
    library = shelves[0]
    reading = _reading(shelves, "alice")
    book = reading.book_for("doc-a")
    position = reading.position(book, "/body/DocFragment[4]/body/p/text().10", 0.9)

    assert book.chapter_at(position.char_offset).title == "Chapter 3"  # DocFragment[4]
    assert position.source is None  # where the reader is now, not a sync from some time ago
    shown = reading.positioned(book, position)
    assert isinstance(shown, PositionedBooks)
    assert shown.get("a").position == position
    assert [b.position for b in shown.list() if b.id == "a"] == [position]
    assert ReadingWindow(shown.get("a")).end == position.char_offset
    assert library.get("a").position.char_offset is None  # nothing stored
    assert shown.get_text("a", 0, 9) == "Chapter 1"  # the rest passes through


def test_a_place_folio_cannot_find_falls_back_to_the_percentage_or_is_refused(
    shelves: Any,
) -> None:
    reading = _reading(shelves, "alice")
    book = reading.book_for("doc-a")
    lost = "/body/DocFragment[99]/body/p/text().3"

    behind = reading.position(book, lost, 0.5)
    assert behind.char_offset is not None and behind.char_offset < len(TEXT) * 0.5
    with pytest.raises(BookError) as refused:
        reading.position(book, lost, None)
    assert refused.value.code is BookErrorCode.INVALID_POSITION
    assert "percentage" in refused.value.message
    pdf = reading.book_for("doc-p")
    assert reading.position(pdf, "4", None).char_offset == PAGES[3].char_end


def test_a_citation_opens_at_its_xpointer_or_its_pdf_page(shelves: Any) -> None:
    reading = _reading(shelves, "alice")
    epub, pdf = reading.book_for("doc-a"), reading.book_for("doc-p")
    offset = TEXT.index("Chapter 5\n") + 30

    (place, other_volume) = reading.places(epub, [(None, offset), ("elsewhere", offset)])
    assert place.xpointer is not None and place.xpointer.startswith("/body/DocFragment[6]/body/p/")
    assert place.pdf_page is None and other_volume.xpointer is None
    (page,) = reading.places(pdf, [(None, 2500)])
    assert page.pdf_page == 3 and page.xpointer is None
