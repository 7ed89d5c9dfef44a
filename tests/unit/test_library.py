"""The Library use case (references, removal, reading position) and SearchBook, on the in-memory
fake library."""

from __future__ import annotations

import itertools

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.library import Library
from folio.app.search import SearchBook
from folio.domain.books import Book, BookFormat, Chapter, Chunk, Page, PositionKind, ReadingPosition
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.search import best_window

EMBEDDER = HashingEmbedder(64)


def _book(book_id: str, title: str, text: str = "word " * 100) -> tuple[Book, str]:
    n = len(text)
    pages = (Page(1, "i", 0, n // 4), Page(2, "ii", n // 4, n // 2), Page(3, "1", n // 2, n))
    chapters = (Chapter(1, "One", 0), Chapter(2, "Two", n // 2))
    book = Book(
        book_id,
        title,
        None,
        BookFormat.TXT,
        f"{title}.txt",
        f"hash-{book_id}",
        3,
        n,
        chapters,
        pages,
    )
    return book, text


def _library(*titles: tuple[str, str]) -> tuple[Library, InMemoryLibrary]:
    store = InMemoryLibrary()
    for book_id, title in titles:
        book, text = _book(book_id, title)
        store.add(book, text, [], EMBEDDER.embed([]))
    return Library(store), store


SHELF = (
    ("a1b2c3d4-0000", "Pride and Prejudice"),
    ("a1ffffff-0000", "Persuasion"),
    ("e5e5e5e5-0000", "Emma"),
    ("f0f0f0f0-0000", "Emma: A Sequel"),
)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("a1b2c3d4-0000", "Pride and Prejudice"),
        ("a1b2", "Pride and Prejudice"),
        ("persuasion", "Persuasion"),
        ("  PRIDE  ", "Pride and Prejudice"),
        ("emma", "Emma"),  # the exact title wins over "Emma: A Sequel"
        ("sequel", "Emma: A Sequel"),
    ],
)
def test_resolve_finds_a_book_by_id_prefix_or_title(ref: str, expected: str) -> None:
    library, _ = _library(*SHELF)
    assert library.resolve(ref).title == expected


def test_an_ambiguous_reference_lists_every_candidate_with_its_id() -> None:
    library, _ = _library(*SHELF)
    with pytest.raises(BookError) as info:
        library.resolve("a1")
    assert info.value.code == BookErrorCode.AMBIGUOUS
    assert "a1b2c3d4" in info.value.message and "a1ffffff" in info.value.message
    assert set(info.value.details["candidates"]) == {"a1b2c3d4-0000", "a1ffffff-0000"}


def test_an_unknown_reference_suggests_close_titles() -> None:
    library, _ = _library(*SHELF)
    with pytest.raises(BookError) as info:
        library.resolve("Persuasoin")
    assert info.value.code == BookErrorCode.NOT_FOUND
    assert "Persuasion" in info.value.message
    with pytest.raises(BookError) as empty:
        library.resolve("  ")
    assert empty.value.code == BookErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("a1b2c3d4-0000", "a1b2c3d4-0000"), ("a1b", "a1b2c3d4-0000"), (" E5E5 ", "e5e5e5e5-0000")],
)
def test_full_id_takes_an_id_or_a_unique_prefix(ref: str, expected: str) -> None:
    library, _ = _library(*SHELF)
    assert library.full_id(ref) == expected


def test_full_id_of_a_prefix_of_several_ids_says_how_many_and_how_much_to_give() -> None:
    library, _ = _library(*SHELF)
    with pytest.raises(BookError) as info:
        library.full_id("a1")
    assert info.value.code == BookErrorCode.AMBIGUOUS
    assert "starts the ids of 2 books" in info.value.message
    assert "give at least 3 characters" in info.value.message
    assert set(info.value.details["candidates"]) == {"a1b2c3d4-0000", "a1ffffff-0000"}


@pytest.mark.parametrize("ref", ["Emma", "b", "", "a1b2c3d4-0000x"])
def test_full_id_matches_ids_only(ref: str) -> None:
    library, _ = _library(*SHELF)
    with pytest.raises(BookError) as info:
        library.full_id(ref)
    assert info.value.code == BookErrorCode.NOT_FOUND


def test_list_books_is_by_title() -> None:
    library, _ = _library(*SHELF)
    assert [b.title for b in library.list_books()][:2] == ["Emma", "Emma: A Sequel"]


def test_remove_deletes_the_book_and_calls_the_conversation_hook_first() -> None:
    store = InMemoryLibrary()
    book, text = _book("b1", "Emma")
    store.add(book, text, [], EMBEDDER.embed([]))
    seen: list[tuple[str, bool]] = []
    library = Library(
        store, on_remove=lambda book_id: seen.append((book_id, book_id in store.books))
    )

    assert library.remove("b1").title == "Emma"
    assert seen == [("b1", True)]
    assert store.books == {}
    with pytest.raises(BookError):
        library.remove("b1")
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("kwargs", "kind", "value"),
    [
        ({"page": "ii"}, PositionKind.PAGE, 2.0),
        ({"page": "3"}, PositionKind.PAGE, 3.0),
        ({"chapter": 1}, PositionKind.CHAPTER, 1.0),
        ({"percent": 50.0}, PositionKind.PERCENT, 50.0),
    ],
)
def test_set_position_stores_the_offset_the_reader_chose(
    kwargs: dict[str, object], kind: PositionKind, value: float
) -> None:
    library, store = _library(("b1", "Emma"))
    book = library.set_position("b1", **kwargs)  # type: ignore[arg-type]
    assert book.position.kind is kind and book.position.value == value
    assert store.get("b1").position == book.position
    expected = {"ii": 250, "3": 500}.get(str(kwargs.get("page")), 250)
    assert book.position.char_offset == expected


def test_reset_makes_the_whole_book_visible_again() -> None:
    library, _ = _library(("b1", "Emma"))
    library.set_position("b1", chapter=1)
    assert library.set_position("b1", reset=True).position == ReadingPosition()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"page": "ii", "chapter": 1},
        {"percent": 10.0, "reset": True},
        {"page": "99"},
        {"chapter": 3},
        {"percent": 101.0},
    ],
)
def test_an_invalid_position_is_refused_and_nothing_changes(kwargs: dict[str, object]) -> None:
    library, store = _library(("b1", "Emma"))
    with pytest.raises(BookError) as info:
        library.set_position("b1", **kwargs)  # type: ignore[arg-type]
    assert info.value.code == BookErrorCode.INVALID_POSITION
    assert store.get("b1").position.is_unlimited


def test_read_returns_the_text_with_its_chapter_and_pages() -> None:
    library, _ = _library(("b1", "Emma"))
    passage = library.read("b1", 100, 300)
    assert passage.text == ("word " * 100)[100:300]
    assert (passage.chapter, passage.page_start, passage.page_end) == ("One", "i", "1")
    assert (passage.char_start, passage.char_end) == (100, 300)


def test_read_never_returns_text_at_or_past_the_reading_position() -> None:
    library, _ = _library(("b1", "Emma"))
    library.set_position("b1", page="i")  # the reader is at offset 125
    passage = library.read("b1", 100, 400)
    assert (passage.char_start, passage.char_end) == (100, 125)
    assert passage.text == ("word " * 100)[100:125]
    with pytest.raises(BookError) as info:
        library.read("b1", 125, 200)
    assert info.value.code == BookErrorCode.INVALID_POSITION
    assert "reading position" in info.value.message


@pytest.mark.parametrize(("start", "end"), [(10, 10), (20, 10), (-1, 5), (0, 20_001), (500, 600)])
def test_a_bad_read_range_is_refused_with_the_bound(start: int, end: int) -> None:
    library, _ = _library(("b1", "Emma"))
    with pytest.raises(BookError) as info:
        library.read("b1", start, end)
    assert info.value.code == BookErrorCode.INVALID_INPUT


# --- SearchBook ------------------------------------------------------------------------------
def _searchable() -> tuple[SearchBook, Book]:
    text = (
        " ".join(f"Calm morning {i} in the village." for i in range(30))
        + " The dragon burned the village. "
        + " ".join(f"Quiet evening {i} by the river." for i in range(30))
    )
    book, _ = _book("s1", "Tale", text)
    dragon = text.index("The dragon")
    cuts = [0, dragon - 40, dragon + 60, len(text)]
    chunks = [
        Chunk(
            f"c{i}",
            "s1",
            i,
            text[a:b],
            a,
            b,
            book.page_at(a).number,
            book.page_at(b - 1).number,
            None,
            None,
        )
        for i, (a, b) in enumerate(itertools.pairwise(cuts))
    ]
    store = InMemoryLibrary()
    store.add(book, text, chunks, EMBEDDER.embed([c.text for c in chunks]))
    return SearchBook(store, EMBEDDER), book


def test_search_book_returns_the_passage_with_page_labels_and_a_snippet() -> None:
    searcher, book = _searchable()
    hits = searcher.search(book, "dragon", k=1)
    assert len(hits) == 1
    hit = hits[0]
    assert "dragon" in hit.snippet and hit.snippet.strip("…") in hit.chunk.text
    assert hit.page_label_start == book.page_at(hit.chunk.char_start).label
    assert hit.lexical_rank == 1 and hit.similarity is not None


def test_search_book_hides_everything_past_the_reading_position() -> None:
    searcher, book = _searchable()
    limit = book.char_count // 4 - 3
    hits = searcher.search(
        book.with_position(ReadingPosition(limit, PositionKind.PERCENT, 25)),
        "dragon village morning",
        k=10,
    )
    assert hits
    for hit in hits:
        assert hit.chunk.char_end <= limit and "dragon" not in hit.chunk.text
        assert hit.page_label_end == "i"  # the page holding the position, never a later one


def test_a_quoted_phrase_is_searched_as_written_its_passage_first() -> None:
    searcher, book = _searchable()
    ranked = searcher.search(book, "dragon village", k=3)
    last = ranked[-1].chunk
    phrase = " ".join(last.text.split()[5:9])  # a phrase of the passage ranked last
    plain = searcher.search(book, f"dragon village {phrase}", k=3)
    assert plain[0].chunk.id != last.id
    hits = searcher.search(book, f'dragon village "{phrase.upper()}"', k=3)
    assert hits[0].chunk.id == last.id and len(hits) == 3


def test_search_book_with_an_empty_query_returns_nothing() -> None:
    searcher, book = _searchable()
    assert searcher.search(book, "   ") == []


def test_best_window_centres_the_query_words() -> None:
    text = (
        " ".join(f"w{i}" for i in range(100))
        + " the whale dived "
        + " ".join(f"x{i}" for i in range(100))
    )
    snippet = best_window(text, "whales diving", words=9)
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "whale dived" in snippet
    assert snippet.strip("…").split()[4] in {"whale", "the", "dived"}
    assert best_window("short text here", "nothing") == "short text here"


def test_edit_sets_changes_and_clears_a_books_series() -> None:
    library, store = _library(*SHELF)
    book_id = SHELF[2][0]
    edited = library.edit(book_id, series="  Highbury   Tales ", series_index=2)
    assert (edited.series, edited.series_index) == ("Highbury Tales", 2.0)
    assert library.edit(book_id, series_index=2.5).series == "Highbury Tales"  # index alone
    assert library.edit(book_id, series="Highbury").series_index == 2.5  # name alone
    assert (store.get(book_id).series, store.get(book_id).series_index) == ("Highbury", 2.5)
    cleared = library.edit(book_id, series="")
    assert (cleared.series, cleared.series_index) == (None, None)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"series_index": 1.0}, "needs a series name"),
        ({"series": "S", "series_index": -1.0}, "from 0 to 10000"),
        ({"series": "S", "series_index": float("nan")}, "from 0 to 10000"),
        ({"series": "S" * 301}, "at most 300 characters"),
        ({"series": "S", "series_index": 1.0, "title": " "}, "A title is 1 to"),
    ],
)
def test_edit_refuses_a_bad_series_and_writes_nothing(
    changes: dict[str, object], message: str
) -> None:
    library, store = _library(*SHELF)
    book_id = SHELF[2][0]
    with pytest.raises(BookError) as caught:
        library.edit(book_id, **changes)  # type: ignore[arg-type]
    assert caught.value.code == BookErrorCode.INVALID_INPUT
    assert message in caught.value.message
    assert (store.get(book_id).series, store.get(book_id).title) == (None, "Emma")
