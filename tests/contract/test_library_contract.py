"""The ``BookRepository`` + ``ChunkIndex`` contract, run against SQLite, PostgreSQL and the
in-memory fake."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.postgres.library import PostgresLibrary
from folio.adapters.storage.sqlite.db import Database
from folio.adapters.storage.sqlite.library import SqliteLibrary
from folio.domain.books import PositionKind, ReadingPosition
from folio.domain.errors import BookError, BookErrorCode, IngestError, IngestErrorCode
from folio.domain.lexicon import Lexicon
from tests.contract.library_data import StoredBook, build_book
from tests.postgres_support import VECTOR_SCAN, PgTestServer

EMBEDDER = HashingEmbedder(64)
WHALE_TEXT = " ".join(
    [f"Opening words number {i} about the quiet harbour." for i in range(60)]
    + ["CHAPTER 2. The whale appears.", "Ishmael saw the great white whale breach the sea."] * 20
    + [f"Closing words number {i} about the long voyage home." for i in range(60)]
)
GARDEN_TEXT = " ".join(f"Emma walked in the garden of Hartfield, sentence {i}." for i in range(200))
WHALE_NAMES = " ".join(  # names met mid-sentence: a lexicon finds them
    ["The sailor Ishmael met Captain Ahab in Nantucket.", "Later, Ishmael sailed with Queequeg."]
    * 5
)
GARDEN_NAMES = " ".join(["In the garden, Emma met Mr. Knightley at Hartfield."] * 5)


@pytest.fixture(scope="module")
def pg_library_url(pg_server: PgTestServer) -> str:
    return pg_server.database("library_contract")


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemoryLibrary()
        return
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_library_url")
        request.getfixturevalue("pg_server").truncate(url)
        pg = PgDatabase(url, max_size=2)
        yield PostgresLibrary(pg, vector_scan=VECTOR_SCAN)
        pg.close()
        return
    db = Database(tmp_path / "folio.db")
    db.migrate()
    lib = SqliteLibrary(db)
    yield lib
    lib.close()


def _whale() -> StoredBook:
    stored = build_book(
        "whale-1", WHALE_TEXT, EMBEDDER, title="Moby", source="moby.txt", simple=True
    )
    created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return replace(stored, book=replace(stored.book, created_at=created, author="Melville"))


def _garden() -> StoredBook:
    return build_book(
        "garden-1", GARDEN_TEXT, EMBEDDER, title="emma", source="emma.txt", simple=True
    )


def _add(library: Any, stored: StoredBook) -> None:
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)


def test_an_added_book_reads_back_equal_with_its_text(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    assert library.get(stored.book.id) == stored.book
    assert library.get_text(stored.book.id) == stored.text
    assert library.get_text(stored.book.id, 100, 250) == stored.text[100:250]
    assert library.get_text(stored.book.id, len(stored.text) - 5) == stored.text[-5:]
    assert library.find_by_hash(stored.book.content_hash) == stored.book
    assert library.find_by_hash("nope") is None


def test_list_is_ordered_by_title_ignoring_case(library: Any) -> None:
    _add(library, _whale())
    _add(library, _garden())
    assert [b.title for b in library.list()] == ["emma", "Moby"]


def test_adding_the_same_content_twice_is_a_duplicate_and_keeps_the_first(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    again = replace(stored, book=replace(stored.book, id="other-id", title="Copy"))
    with pytest.raises(IngestError) as info:
        _add(library, again)
    assert info.value.code == IngestErrorCode.DUPLICATE
    assert [b.id for b in library.list()] == [stored.book.id]


def test_unknown_books_are_not_found(library: Any) -> None:
    for call in (
        lambda: library.get("missing"),
        lambda: library.delete("missing"),
        lambda: library.get_text("missing"),
        lambda: library.set_position("missing", ReadingPosition(5, PositionKind.PERCENT, 1.0)),
    ):
        with pytest.raises(BookError) as info:
            call()
        assert info.value.code == BookErrorCode.NOT_FOUND


def test_a_deleted_book_is_gone_with_its_chunks(library: Any) -> None:
    stored, other = _whale(), _garden()
    _add(library, stored)
    _add(library, other)
    vector = EMBEDDER.embed(["whale"])[0]
    assert library.search(stored.book.id, "whale", vector)

    library.delete(stored.book.id)

    with pytest.raises(BookError):
        library.get(stored.book.id)
    assert library.search(stored.book.id, "whale", vector) == []
    assert library.chunks_between(stored.book.id, 0, len(stored.text)) == []
    assert library.find_by_hash(stored.book.content_hash) is None
    assert [b.id for b in library.list()] == [other.book.id]


def test_set_position_is_stored(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    position = stored.book.position_at_percent(25)
    updated = library.set_position(stored.book.id, position)
    assert updated.position == position
    assert library.get(stored.book.id).position == position
    assert library.set_position(stored.book.id, ReadingPosition()).position.is_unlimited
    with_matter = position.with_matter(True)
    assert library.set_position(stored.book.id, with_matter).position.include_matter
    assert library.get(stored.book.id).position == with_matter


def test_a_synced_position_keeps_where_and_when_it_came_from(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    at = datetime(2026, 11, 24, 7, 30, 15, 123456, tzinfo=UTC)
    synced = replace(stored.book.position_at_percent(40), source="KOReader on Kobo", set_at=at)

    library.set_position(stored.book.id, synced)

    assert library.get(stored.book.id).position == synced
    by_hand = stored.book.position_at_percent(50)  # set in folio: no source any more
    assert library.set_position(stored.book.id, by_hand).position.source is None
    assert library.get(stored.book.id).position.set_at is None


def test_a_chapter_recap_is_kept_replaced_and_deleted_with_its_book(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    book_id = stored.book.id
    assert library.chapter_recap(book_id, 1) is None
    library.save_chapter_recap(book_id, 1, "Ishmael goes to sea.", "model-a")
    library.save_chapter_recap(book_id, 1, "Ishmael signs on.", "model-b")
    assert library.chapter_recap(book_id, 1) == "Ishmael signs on."
    assert library.chapter_recap(book_id, 2) is None
    with pytest.raises(BookError) as info:
        library.save_chapter_recap("missing", 1, "x", "m")
    assert info.value.code == BookErrorCode.NOT_FOUND
    library.delete(book_id)
    assert library.chapter_recap(book_id, 1) is None


def test_a_lexicon_is_kept_with_its_book_replaced_and_deleted_with_it(library: Any) -> None:
    stored = _whale()
    book_id = stored.book.id
    lexicon = Lexicon.of(WHALE_NAMES)
    assert lexicon.find("Ishmael") is not None
    library.add(stored.book, stored.text, stored.chunks, stored.vectors, lexicon=lexicon)
    assert library.lexicon(book_id) == lexicon
    assert library.lexicon(book_id).find("Ishmael") == lexicon.find("Ishmael")

    other = Lexicon.of(GARDEN_NAMES)
    library.save_lexicon(book_id, other)
    assert library.lexicon(book_id) == other
    with pytest.raises(BookError) as info:
        library.save_lexicon("missing", other)
    assert info.value.code == BookErrorCode.NOT_FOUND
    assert library.lexicon("missing") is None
    library.delete(book_id)
    assert library.lexicon(book_id) is None


def test_a_book_added_without_a_lexicon_has_none_until_one_is_saved(library: Any) -> None:
    stored = _garden()
    _add(library, stored)
    assert library.lexicon(stored.book.id) is None
    library.save_lexicon(stored.book.id, Lexicon.of(GARDEN_NAMES))
    assert library.lexicon(stored.book.id).find("Mr Knightley").name == "Mr Knightley"


def test_a_refused_book_leaves_no_lexicon_behind(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    copy = replace(stored.book, id="whale-2")  # the same file again: a duplicate
    with pytest.raises(IngestError):
        library.add(copy, stored.text, stored.chunks, lexicon=Lexicon.of(WHALE_NAMES))
    assert library.lexicon("whale-2") is None


def test_update_details_changes_title_and_author_only(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    updated = library.update_details(stored.book.id, title="The Whale", author=None)
    assert (updated.title, updated.author) == ("The Whale", None)
    again = library.get(stored.book.id)
    assert (again.title, again.author, again.content_hash) == (
        "The Whale",
        None,
        stored.book.content_hash,
    )
    with pytest.raises(BookError):
        library.update_details("nope", title="x", author=None)


def test_set_series_stores_the_series_and_index_with_the_book(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    assert (library.get(stored.book.id).series, library.get(stored.book.id).series_index) == (
        None,
        None,
    )
    updated = library.set_series(stored.book.id, series="Whaling Tales", series_index=2.5)
    assert (updated.series, updated.series_index) == ("Whaling Tales", 2.5)
    again = library.get(stored.book.id)
    assert (again.series, again.series_index, again.title) == ("Whaling Tales", 2.5, "Moby")
    assert [b.series for b in library.list()] == ["Whaling Tales"]
    library.set_series(stored.book.id, series=None, series_index=None)
    assert library.get(stored.book.id).series is None
    with pytest.raises(BookError):
        library.set_series("nope", series="x", series_index=None)


def test_a_book_added_with_a_series_keeps_it(library: Any) -> None:
    stored = _whale()
    book = replace(stored.book, series="Whaling Tales", series_index=1.0)
    _add(library, replace(stored, book=book))
    got = library.get(book.id)
    assert (got.series, got.series_index) == ("Whaling Tales", 1.0)


def test_search_finds_the_passage_by_word_and_by_vector(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    results = library.search(stored.book.id, "white whale", EMBEDDER.embed(["white whale"])[0])
    assert results
    top = results[0]
    assert "whale" in top.chunk.text
    assert top.lexical_rank is not None and top.vector_rank is not None
    assert top.similarity is not None and -1.0 <= top.similarity <= 1.0
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert len(library.search(stored.book.id, "whale", None, k=2)) == 2


def test_search_stays_within_its_book(library: Any) -> None:
    whale, garden = _whale(), _garden()
    _add(library, whale)
    _add(library, garden)
    results = library.search(garden.book.id, "whale", EMBEDDER.embed(["whale"])[0], k=50)
    assert results and all(r.chunk.book_id == garden.book.id for r in results)


def test_search_never_returns_text_past_the_limit_and_cuts_a_straddling_chunk(
    library: Any,
) -> None:
    stored = _whale()
    _add(library, stored)
    straddling = stored.chunks[1]
    limit = straddling.char_start + 10
    results = library.search(
        stored.book.id, "words", EMBEDDER.embed(["words"])[0], k=50, max_char_offset=limit
    )
    assert {r.chunk.ordinal for r in results} == {0, 1}
    for r in results:
        assert r.chunk.char_end <= limit
        assert stored.text[r.chunk.char_start : r.chunk.char_end] == r.chunk.text
    cut = next(r.chunk for r in results if r.chunk.ordinal == 1)
    assert cut.char_end == limit and cut.text == straddling.text[:10]


def test_search_skips_chunks_starting_before_the_lower_bound(library: Any) -> None:
    """Front matter the reader has not read (``min_char_offset``) is never a result."""
    stored = _whale()
    _add(library, stored)
    floor = stored.chunks[2].char_start
    vector = EMBEDDER.embed(["words"])[0]
    results = library.search(stored.book.id, "words", vector, k=50, min_char_offset=floor)
    assert results and all(r.chunk.char_start >= floor for r in results)
    assert {r.chunk.ordinal for r in results} == {c.ordinal for c in stored.chunks[2:]}
    assert library.search(stored.book.id, "words", vector, min_char_offset=10**9) == []


def test_search_before_the_first_chunk_or_with_k_zero_returns_nothing(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    vector = EMBEDDER.embed(["whale"])[0]
    assert library.search(stored.book.id, "whale", vector, max_char_offset=0) == []
    assert library.search(stored.book.id, "whale", vector, k=0) == []


def test_search_survives_queries_full_of_fts_syntax(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    for query in ['"whale', "whale AND OR NOT", "(sea)*", "-:^", "", "NEAR(whale sea)"]:
        results = library.search(stored.book.id, query, EMBEDDER.embed([query])[0])
        assert all(
            stored.text[r.chunk.char_start : r.chunk.char_end] == r.chunk.text for r in results
        )


def test_chunks_between_returns_overlapping_chunks_in_order(library: Any) -> None:
    stored = _whale()
    _add(library, stored)
    a, b = stored.chunks[1], stored.chunks[2]
    found = library.chunks_between(stored.book.id, a.char_start + 1, b.char_start + 1)
    assert [c.ordinal for c in found] == [1, 2]
    assert found[0] == a


def test_a_book_stored_without_vectors_answers_keyword_searches_at_once(library: Any) -> None:
    stored = _whale()
    library.add(stored.book, stored.text, stored.chunks)
    assert library.vector_coverage(stored.book.id) == (0, len(stored.chunks))
    assert library.chunks_without_vectors(stored.book.id) == sorted(
        stored.chunks, key=lambda c: c.char_start
    )
    results = library.search(stored.book.id, "whale", EMBEDDER.embed(["whale"])[0])
    assert results and all(r.vector_rank is None for r in results)
    assert "whale" in results[0].chunk.text


def test_vectors_added_later_join_the_search_batch_by_batch(library: Any) -> None:
    stored = _whale()
    library.add(stored.book, stored.text, stored.chunks)
    first = stored.chunks[:3]
    library.add_vectors(stored.book.id, [c.id for c in first], stored.vectors[:3])
    assert library.vector_coverage(stored.book.id) == (3, len(stored.chunks))
    query = EMBEDDER.embed(["opening words harbour"])[0]
    ranked = library.search(stored.book.id, "xyzzy", query, k=50)
    assert {r.chunk.id for r in ranked} == {c.id for c in first}, "only embedded chunks by vector"
    library.add_vectors(stored.book.id, [c.id for c in stored.chunks[3:]], stored.vectors[3:])
    assert library.vector_coverage(stored.book.id) == (len(stored.chunks),) * 2
    assert library.chunks_without_vectors(stored.book.id) == []
    ranked = library.search(stored.book.id, "xyzzy", query, k=50)
    assert len(ranked) == len(stored.chunks)


def test_vectors_for_a_deleted_book_are_refused(library: Any) -> None:
    stored = _whale()
    library.add(stored.book, stored.text, stored.chunks)
    library.delete(stored.book.id)
    with pytest.raises(BookError) as info:
        library.add_vectors(stored.book.id, [stored.chunks[0].id], stored.vectors[:1])
    assert info.value.code == BookErrorCode.NOT_FOUND


def test_a_new_edition_replaces_text_chunks_and_lexicon_and_keeps_the_book(library: Any) -> None:
    stored, other = _whale(), _garden()
    library.add(stored.book, stored.text, stored.chunks, stored.vectors,
                lexicon=Lexicon.of(WHALE_NAMES))  # fmt: skip
    _add(library, other)
    library.save_chapter_recap(stored.book.id, 1, "An old recap.", "m")
    edition = build_book("whale-1", GARDEN_TEXT.replace("Emma", "Ahab"), EMBEDDER, title="Moby",
                         source="moby-2.txt", simple=True)  # fmt: skip
    new = replace(edition.book, created_at=stored.book.created_at, author="Melville")

    library.replace_text(new, edition.text, edition.chunks, lexicon=Lexicon.of(GARDEN_NAMES))

    assert library.get(new.id) == new and new.content_hash != stored.book.content_hash
    assert library.get_text(new.id) == edition.text
    assert library.find_by_hash(stored.book.content_hash) is None
    assert library.find_by_hash(new.content_hash) == new
    assert library.chapter_recap(new.id, 1) is None
    assert library.lexicon(new.id) == Lexicon.of(GARDEN_NAMES)
    assert library.vector_coverage(new.id) == (0, len(edition.chunks))  # to be embedded again
    assert not library.search(new.id, "whale Ishmael", None)  # the old text is gone
    assert library.search(new.id, "Ahab garden", None)
    assert [b.id for b in library.list()] == [other.book.id, new.id]
    with pytest.raises(IngestError) as duplicate:  # another book's content
        library.replace_text(replace(new, content_hash=other.book.content_hash), "x", [])
    assert duplicate.value.code == IngestErrorCode.DUPLICATE
    with pytest.raises(BookError):
        library.replace_text(replace(new, id="missing"), "x", [])


def _sentence_matrices(chunks: Any) -> list[Any]:
    """Each chunk's sentences embedded, one row per sentence."""
    return [EMBEDDER.embed([s for s in c.text.split(". ") if s]) for c in chunks]


def test_sentence_vectors_read_back_at_half_precision_for_the_chunks_that_have_them(
    library: Any,
) -> None:
    stored, other = _whale(), _garden()
    _add(library, stored)
    _add(library, other)
    first = stored.chunks[:2]
    matrices = _sentence_matrices(first)
    empty = np.zeros((0, EMBEDDER.dimensions), dtype=np.float32)  # a chunk without a sentence
    ids = [c.id for c in first] + [stored.chunks[2].id, other.chunks[0].id]  # another book's
    library.add_sentence_vectors(stored.book.id, ids, [*matrices, empty, matrices[0]])

    asked = [*ids, stored.chunks[3].id, "no-such-chunk"]
    found = library.sentence_vectors(stored.book.id, asked)

    assert set(found) == {*ids[:3]}
    for chunk, matrix in zip(first, matrices, strict=True):
        assert found[chunk.id].chunk_end == chunk.char_end  # a passage cut before it is not whole
        got = found[chunk.id].vectors
        assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == matrix.shape
        assert np.allclose(got, matrix, atol=2e-3) and not np.array_equal(got, matrix)
    assert found[stored.chunks[2].id].vectors.shape == (0, EMBEDDER.dimensions)
    assert library.sentence_vectors(stored.book.id, []) == {}
    assert library.sentence_vectors(other.book.id, ids) == {}  # not stored for the other book
    assert library.chunks_without_sentence_vectors(stored.book.id) == sorted(
        stored.chunks[3:], key=lambda c: c.char_start
    )
    assert len(library.chunks_without_sentence_vectors(other.book.id)) == len(other.chunks)


def test_sentence_vectors_added_again_replace_the_first_even_in_another_width(
    library: Any,
) -> None:
    stored = _whale()
    _add(library, stored)
    chunk = stored.chunks[0]
    library.add_sentence_vectors(stored.book.id, [chunk.id], _sentence_matrices([chunk]))
    narrow = HashingEmbedder(32).embed(["Another model.", "Its own width."])

    library.add_sentence_vectors(stored.book.id, [chunk.id], [narrow])

    got = library.sentence_vectors(stored.book.id, [chunk.id])[chunk.id].vectors
    assert got.shape == (2, 32) and np.allclose(got, narrow, atol=2e-3)  # as stored: not a crash


def test_sentence_vectors_go_with_their_chunks(library: Any) -> None:
    stored, other = _whale(), _garden()
    _add(library, stored)
    _add(library, other)
    for book in (stored, other):
        ids = [c.id for c in book.chunks]
        library.add_sentence_vectors(book.book.id, ids, _sentence_matrices(book.chunks))
        assert library.chunks_without_sentence_vectors(book.book.id) == []
    edition = build_book("whale-1", GARDEN_TEXT.replace("Emma", "Ahab"), EMBEDDER, title="Moby",
                         source="moby-2.txt", simple=True)  # fmt: skip
    assert {c.id for c in edition.chunks} & {c.id for c in stored.chunks}  # the same chunk ids

    library.replace_text(edition.book, edition.text, edition.chunks)
    library.delete(other.book.id)

    assert library.sentence_vectors("whale-1", [c.id for c in edition.chunks]) == {}
    assert library.chunks_without_sentence_vectors("whale-1") == sorted(
        edition.chunks, key=lambda c: c.char_start
    )
    _add(library, other)  # the same chunks again: none of their old rows is left
    assert len(library.chunks_without_sentence_vectors(other.book.id)) == len(other.chunks)
    assert library.sentence_vectors(other.book.id, [c.id for c in other.chunks]) == {}


def test_sentence_vectors_for_an_unknown_book_or_of_mismatched_lengths_are_refused(
    library: Any,
) -> None:
    stored = _whale()
    _add(library, stored)
    chunk = stored.chunks[0]
    with pytest.raises(BookError) as info:
        library.add_sentence_vectors("missing", [chunk.id], _sentence_matrices([chunk]))
    assert info.value.code == BookErrorCode.NOT_FOUND
    with pytest.raises(ValueError):
        library.add_sentence_vectors(stored.book.id, [chunk.id, stored.chunks[1].id],
                                     _sentence_matrices([chunk]))  # fmt: skip
    assert library.chunks_without_sentence_vectors(stored.book.id) == sorted(
        stored.chunks, key=lambda c: c.char_start
    )
