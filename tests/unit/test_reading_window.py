"""The reading window: one value says what the reader has read (position, unread matter, the
earlier volumes of the series)."""

from __future__ import annotations

from dataclasses import replace

from folio.domain.books import (
    Book,
    BookFormat,
    Chapter,
    Chunk,
    PositionKind,
    ReadingPosition,
    SectionKind,
)
from folio.domain.window import ReadingWindow


def _book(book_id: str, *, series: str | None = None, index: float | None = None) -> Book:
    chapters = (
        Chapter(1, "Introduction", 0, SectionKind.COMMENTARY),
        Chapter(2, "Chapter 1", 100),
        Chapter(3, "Notes", 200, SectionKind.BACK_MATTER),
        Chapter(4, "Chapter 2", 300),
    )
    return Book(book_id, f"Title {book_id}", None, BookFormat.TXT, "x.txt", book_id, 1, 400,
                chapters, series=series, series_index=index)  # fmt: skip


def _at(book: Book, offset: int | None) -> Book:
    return book.with_position(ReadingPosition(offset, PositionKind.PERCENT, 1.0))


def _chunk(book_id: str, start: int, end: int) -> Chunk:
    return Chunk("c", book_id, 0, "x" * (end - start), start, end, 1, 1)


def test_the_window_skips_unread_matter_and_stops_at_the_position() -> None:
    window = ReadingWindow(_at(_book("b"), 350))
    assert window.spans("b") == ((100, 200), (300, 350))
    assert [c.title for c in window.chapters()] == ["Chapter 1", "Chapter 2"]
    assert window.cut(_chunk("b", 150, 250)) == _chunk("b", 150, 200)
    assert window.cut(_chunk("b", 210, 260)) is None  # inside the notes
    assert window.cut(_chunk("b", 340, 380)) == _chunk("b", 340, 350)
    assert window.clip("b", 0, 120) == (100, 120) and not window.allows("b", 90, 120)


def test_a_finished_book_or_included_matter_shows_everything_read() -> None:
    assert ReadingWindow(_at(_book("b"), None)).spans("b") == ((0, 400),)
    included = _at(_book("b"), 350)
    included = included.with_position(included.position.with_matter(True))
    assert ReadingWindow(included).spans("b") == ((0, 350),)


def test_the_series_brings_the_earlier_volumes_in_full_and_never_a_later_one() -> None:
    one, two, three = (_book(f"v{i}", series="Saga", index=float(i)) for i in (1, 2, 3))
    other = _book("o", series="Other", index=1.0)
    loose = _book("l")
    window = ReadingWindow.of(_at(two, 150), [three, other, one, loose, two])
    assert [b.id for b in window.volumes] == ["v1", "v2"]
    assert window.spans("v1") == ((0, 400),) and window.spans("v3") == ()
    assert window.cut(_chunk("v3", 0, 10)) is None and window.cut(_chunk("o", 0, 10)) is None
    assert window.volume_name("v1") == "Title v1" and window.volume_name("v2") is None
    assert "earlier volumes of Saga read in full: Title v1" in window.describe()
    assert ReadingWindow.of(replace(two, series_index=None), [one]).earlier == ()


def test_a_passage_and_a_source_from_an_earlier_volume_keep_it_through_their_codecs() -> None:
    from folio.adapters.storage.conversation_codec import source_from_dict, source_to_dict
    from folio.domain.conversations import Source
    from folio.domain.passages import Passage, SearchResults, decode_payload, encode_payload

    passage = Passage("c1", "Chapter 2", "4", "5", 10, 90, "text", 0.5, "v1", "Volume One")
    results = SearchResults("q", "through Chapter 1", (passage,))
    assert decode_payload(encode_payload(results)) == results
    assert passage.location == "Volume One, Chapter 2, pp. 4-5"
    brief = encode_payload(results, brief=True)["results"][0]
    assert (brief["volume"], brief["book_id"]) == ("Volume One", "v1")
    source = Source("c1", "Chapter 2", "4", "4", 10, 90, "quote", 0.5, "v1", "Volume One")
    assert source_from_dict(source_to_dict(source)) == source
    assert source.location == "Volume One, Chapter 2, p. 4"
    own = replace(source, book_id=None, volume=None)
    assert "book_id" not in source_to_dict(own) and source_from_dict(source_to_dict(own)) == own
