"""SQLite specifics of the library: atomic add, cascade delete checked in SQL, persistence across
connections, and the per-process vector cache staying correct."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.sqlite.db import Database
from folio.adapters.storage.sqlite.library import SqliteLibrary
from folio.domain.books import Chunk
from folio.domain.errors import IngestError, IngestErrorCode
from tests.contract.library_data import StoredBook, build_book

EMBEDDER = HashingEmbedder(64)
TEXT = " ".join(f"The lighthouse keeper counted {i} gulls over the harbour." for i in range(300))


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(tmp_path / "folio.db")
    database.migrate()
    return database


@pytest.fixture
def library(db: Database) -> Iterator[SqliteLibrary]:
    lib = SqliteLibrary(db)
    yield lib
    lib.close()


def _stored(book_id: str = "b1", text: str = TEXT) -> StoredBook:
    return build_book(
        book_id, text, EMBEDDER, title="Lighthouse", source="lighthouse.txt", simple=True
    )


def _counts(conn: sqlite3.Connection, book_id: str) -> dict[str, int]:
    one = lambda sql: conn.execute(sql, (book_id,)).fetchone()[0]  # noqa: E731
    return {
        "books": one("SELECT count(*) FROM books WHERE id = ?"),
        "texts": one("SELECT count(*) FROM book_texts WHERE book_id = ?"),
        "chunks": one("SELECT count(*) FROM chunks WHERE book_id = ?"),
        "fts": one(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'lighthouse'"
            " AND rowid NOT IN (SELECT seq FROM chunks WHERE book_id != ?)"
        ),
    }


def _fts_is_consistent(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')")


class _FailingChunks(list[Chunk]):
    """A chunk list whose iteration breaks half-way, like a crash during the insert."""

    def __iter__(self) -> Iterator[Chunk]:
        for i, chunk in enumerate(list.__iter__(self)):
            if i == len(self) // 2:
                raise OSError("disk unplugged")
            yield chunk


def test_add_stores_book_text_chunks_and_fts_rows(library: SqliteLibrary) -> None:
    stored = _stored()
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    counts = _counts(library.conn, "b1")
    assert counts == {
        "books": 1,
        "texts": 1,
        "chunks": len(stored.chunks),
        "fts": len(stored.chunks),
    }
    _fts_is_consistent(library.conn)


def test_an_add_that_fails_half_way_stores_nothing(library: SqliteLibrary) -> None:
    stored = _stored()
    with pytest.raises(OSError):
        library.add(stored.book, stored.text, _FailingChunks(stored.chunks), stored.vectors)
    assert _counts(library.conn, "b1") == {"books": 0, "texts": 0, "chunks": 0, "fts": 0}
    assert not library.conn.in_transaction
    _fts_is_consistent(library.conn)


def test_an_add_rejected_by_a_constraint_on_the_last_chunk_stores_nothing(
    library: SqliteLibrary,
) -> None:
    stored = _stored()
    broken = [*stored.chunks[:-1], replace(stored.chunks[-1], char_end=-1)]
    with pytest.raises(IngestError) as info:
        library.add(stored.book, stored.text, broken, stored.vectors)
    assert info.value.code == IngestErrorCode.CORRUPT
    assert _counts(library.conn, "b1") == {"books": 0, "texts": 0, "chunks": 0, "fts": 0}
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    assert library.get("b1").title == "Lighthouse"


def test_a_duplicate_content_hash_is_an_ingest_duplicate(library: SqliteLibrary) -> None:
    stored = _stored()
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    copy = _stored("b2")
    with pytest.raises(IngestError) as info:
        library.add(copy.book, copy.text, copy.chunks, copy.vectors)
    assert info.value.code == IngestErrorCode.DUPLICATE
    assert _counts(library.conn, "b2")["chunks"] == 0


def test_deleting_a_book_cascades_to_text_chunks_and_fts_rows(library: SqliteLibrary) -> None:
    stored, other = _stored(), _stored("b2", TEXT + " And one more lighthouse.")
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    library.add(other.book, other.text, other.chunks, other.vectors)

    library.delete("b1")

    assert _counts(library.conn, "b1") == {"books": 0, "texts": 0, "chunks": 0, "fts": 0}
    assert _counts(library.conn, "b2")["chunks"] == len(other.chunks)
    _fts_is_consistent(library.conn)


def test_a_second_connection_sees_books_added_by_the_first(db: Database) -> None:
    stored = _stored()
    writer, reader = SqliteLibrary(db), SqliteLibrary(db)
    writer.add(stored.book, stored.text, stored.chunks, stored.vectors)
    assert reader.get("b1") == writer.get("b1")
    assert reader.search("b1", "gulls", EMBEDDER.embed(["gulls"])[0])


def test_the_vector_cache_notices_a_book_deleted_and_re_added_elsewhere(db: Database) -> None:
    first, here, elsewhere = _stored(), SqliteLibrary(db), SqliteLibrary(db)
    here.add(first.book, first.text, first.chunks, first.vectors)
    assert here.search("b1", "gulls", EMBEDDER.embed(["gulls"])[0])  # fills the cache

    other_text = " ".join(f"A storm sank {i} ships near the reef." for i in range(100))
    second = _stored("b1", other_text)
    elsewhere.delete("b1")
    elsewhere.add(second.book, second.text, second.chunks, second.vectors)

    results = here.search("b1", "storm ships", EMBEDDER.embed(["storm ships"])[0], k=3)
    assert results and all("storm" in r.chunk.text for r in results)
    assert all(r.vector_rank is not None for r in results)


def test_a_query_vector_of_another_dimension_is_a_clear_error(library: SqliteLibrary) -> None:
    stored = _stored()
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    with pytest.raises(Exception, match="dimensional vectors"):
        library.search("b1", "gulls", HashingEmbedder(32).embed(["gulls"])[0])


def test_the_lexical_search_is_bounded_in_sql(library: SqliteLibrary) -> None:
    stored = _stored()
    library.add(stored.book, stored.text, stored.chunks, stored.vectors)
    limit = stored.chunks[2].char_start
    results = library.search("b1", "lighthouse", None, k=50, max_char_offset=limit)
    assert sorted(r.chunk.ordinal for r in results) == [0, 1]
    assert all(r.lexical_rank is not None and r.vector_rank is None for r in results)
