"""One contract for what folio remembers of each book imported from Calibre
(``CalibreSourceRepository``), in memory, on SQLite and on PostgreSQL: a book's source read
back, replaced by a later import, listed per Calibre library, and on SQL gone with its book."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from folio.domain.books import Book, BookFormat
from folio.domain.calibre import CalibreSource
from tests.postgres_support import VECTOR_SCAN

BOOKS = [Book(f"b{n}", f"B{n}", None, BookFormat.EPUB, f"{n}.epub", f"h{n}", 0, 10) for n in "123"]
FIRST = CalibreSource("b1", "lib-a", "uuid-1", "2026-11-01T10:00:00+00:00", "/c/1.epub", 120, 7)


@dataclass
class Stores:
    sources: Any
    library: Any
    forgets_with_book: bool  # the in-memory fake leaves that to its callers


@pytest.fixture(scope="module")
def pg_calibre_url(pg_server: Any) -> str:
    return str(pg_server.database("calibre_contract"))


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "memory":
        from folio.adapters.storage.memory.books import InMemoryLibrary
        from folio.adapters.storage.memory.calibre import InMemoryCalibreSources

        yield Stores(InMemoryCalibreSources(), InMemoryLibrary(), False)
        return
    from folio.adapters.storage.sql.calibre import SqlCalibreSourceStore

    if request.param == "sqlite":
        from folio.adapters.storage.sql.sync import sqlite_runner
        from folio.adapters.storage.sqlite.db import Database
        from folio.adapters.storage.sqlite.library import SqliteLibrary

        db = Database(tmp_path / "folio.db")
        db.migrate()
        yield Stores(SqlCalibreSourceStore(sqlite_runner(db)), SqliteLibrary(db), True)
        return
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.postgres.library import PostgresLibrary
    from folio.adapters.storage.sql.sync import postgres_runner

    url = request.getfixturevalue("pg_calibre_url")
    request.getfixturevalue("pg_server").truncate(url)
    pg = PgDatabase(url, max_size=2)
    yield Stores(
        SqlCalibreSourceStore(postgres_runner(pg)),
        PostgresLibrary(pg, vector_scan=VECTOR_SCAN),
        True,
    )
    pg.close()


def _with_books(stores: Stores) -> None:
    for book in BOOKS:
        stores.library.add(book, "0123456789", [])


def test_a_books_source_reads_back_and_a_later_import_replaces_it(stores: Stores) -> None:
    _with_books(stores)
    assert stores.sources.get("b1") is None
    stores.sources.save(FIRST)
    assert stores.sources.get("b1") == FIRST
    later = replace(FIRST, last_modified="2026-11-20T09:30:00+00:00", file_size=None)
    stores.sources.save(later)
    assert stores.sources.get("b1") == later


def test_of_library_lists_that_librarys_books_in_id_order(stores: Stores) -> None:
    _with_books(stores)
    for book_id, library in (("b3", "lib-a"), ("b2", "lib-b"), ("b1", "lib-a")):
        stores.sources.save(replace(FIRST, book_id=book_id, library_id=library))
    assert [s.book_id for s in stores.sources.of_library("lib-a")] == ["b1", "b3"]
    assert [s.book_id for s in stores.sources.of_library("lib-b")] == ["b2"]
    assert stores.sources.of_library("lib-c") == []


def test_a_removed_books_source_goes_with_it_on_sql(stores: Stores) -> None:
    if not stores.forgets_with_book:
        pytest.skip("the in-memory fake leaves forgetting to its callers (its docstring)")
    _with_books(stores)
    stores.sources.save(FIRST)
    stores.library.delete("b1")
    assert stores.sources.get("b1") is None
