"""Property: whatever the reading position and the query, search shows nothing past the position.

Runs the real SQLite and PostgreSQL indexes and the SearchBook use case on a real book (Persuasion)
with hashing vectors, and checks every hit against the raw text offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.postgres.library import PostgresLibrary
from folio.adapters.storage.sqlite.db import Database
from folio.adapters.storage.sqlite.library import SqliteLibrary
from folio.app.search import SearchBook
from folio.domain.books import Book, PositionKind, ReadingPosition
from folio.domain.ports import BookRepository, ChunkIndex
from tests.contract.library_data import StoredBook, book_from_file
from tests.postgres_support import VECTOR_SCAN

pytestmark = pytest.mark.data
EMBEDDER = HashingEmbedder(128)


class Library(BookRepository, ChunkIndex, Protocol):
    pass


@pytest.fixture(scope="module")
def persuasion_book(books_dir: Path) -> StoredBook:
    return book_from_file(books_dir / "austen-persuasion.txt", EMBEDDER, book_id="persuasion")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def persuasion(
    request: pytest.FixtureRequest,
    persuasion_book: StoredBook,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Library, StoredBook]]:
    stored = persuasion_book
    library: SqliteLibrary | PostgresLibrary
    if request.param == "postgresql":
        pg = PgDatabase(request.getfixturevalue("pg_server").database("spoiler_property"))
        library = PostgresLibrary(
            pg, candidates=10_000, vector_scan=VECTOR_SCAN
        )  # every visible chunk reachable
    else:
        db = Database(tmp_path_factory.mktemp("property") / "folio.db")
        db.migrate()
        library = SqliteLibrary(db, candidates=10_000)  # every visible chunk reachable
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    yield library, stored
    library.close()
    if request.param == "postgresql":
        pg.close()


@pytest.fixture(scope="module")
def vocabulary(persuasion: tuple[Library, StoredBook]) -> list[str]:
    return sorted(set(re.findall(r"[A-Za-z]{3,}", persuasion[1].text)))


def _queries(words: list[str]) -> st.SearchStrategy[str]:
    from_book = st.lists(st.sampled_from(words), min_size=1, max_size=6).map(" ".join)
    return st.one_of(from_book, st.text(min_size=0, max_size=40))


def _check_hit_offsets(
    text: str, position: int, chunk_start: int, chunk_end: int, chunk_text: str
) -> None:
    assert chunk_end <= position
    assert chunk_start < chunk_end
    assert text[chunk_start:chunk_end] == chunk_text


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_no_search_result_contains_text_past_the_reading_position(
    persuasion: tuple[Library, StoredBook], vocabulary: list[str], data: st.DataObject
) -> None:
    library, stored = persuasion
    text = stored.text
    position = data.draw(st.integers(min_value=0, max_value=len(text)), label="position")
    query = data.draw(_queries(vocabulary), label="query")
    k = data.draw(st.integers(min_value=1, max_value=20), label="k")

    ranked = library.search(
        stored.book.id, query, EMBEDDER.embed([query])[0], k=k, max_char_offset=position
    )
    for r in ranked:
        _check_hit_offsets(text, position, r.chunk.char_start, r.chunk.char_end, r.chunk.text)

    book: Book = stored.book.with_position(ReadingPosition(position, PositionKind.PERCENT, 1.0))
    for hit in SearchBook(library, EMBEDDER).search(book, query, k=k):
        _check_hit_offsets(text, position, hit.chunk.char_start, hit.chunk.char_end, hit.chunk.text)
        assert hit.snippet.strip("…") in " ".join(hit.chunk.text.split())  # snippet is one line
        last_page = book.page_by_label(hit.page_label_end)
        assert last_page is not None and last_page.char_start < position


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(position=st.integers(min_value=1, max_value=10**9))
def test_every_visible_chunk_can_still_be_found(
    persuasion: tuple[Library, StoredBook], position: int
) -> None:
    """The filter is not over-eager: the chunks that start before the position are all reachable."""
    library, stored = persuasion
    limit = min(position, len(stored.text))
    visible = [c for c in stored.chunks if c.char_start < limit]
    results = library.search(
        stored.book.id, "", EMBEDDER.embed(["x"])[0], k=len(stored.chunks), max_char_offset=limit
    )
    assert sorted(r.chunk.ordinal for r in results) == [c.ordinal for c in visible]
