"""One contract for the highlight store, in memory, on SQLite and on PostgreSQL: kept once per
book, owner and entry, listed in the book's order per owner, and gone with the book."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from folio.domain.books import Book, BookFormat
from folio.domain.highlights import Highlight, HighlightKind, ImportedHighlight
from tests.postgres_support import VECTOR_SCAN

BOOK = Book("b1", "A Book", None, BookFormat.TXT, "a.txt", "hash-b1", 0, 10)
H = Highlight("h1", "b1", "u1", HighlightKind.HIGHLIGHT, "a truth", "my note", "Chapter 1",
              "page 1", 40, 47, "2026-11-20 21:14:03", "Kindle", "k1")  # fmt: skip


@dataclass
class Stores:
    highlights: Any
    library: Any
    sql: bool


@pytest.fixture(scope="module")
def pg_highlights_url(pg_server: Any) -> str:
    return str(pg_server.database("highlights_contract"))


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    from folio.adapters.storage.sql.highlights import SqlHighlightStore

    if request.param == "memory":
        from folio.adapters.storage.memory.books import InMemoryLibrary
        from folio.adapters.storage.memory.highlights import InMemoryHighlightStore

        yield Stores(InMemoryHighlightStore(), InMemoryLibrary(), False)
        return
    if request.param == "sqlite":
        from folio.adapters.storage.sql.sync import sqlite_runner
        from folio.adapters.storage.sqlite.db import Database
        from folio.adapters.storage.sqlite.library import SqliteLibrary

        db = Database(tmp_path / "folio.db")
        db.migrate()
        yield Stores(SqlHighlightStore(sqlite_runner(db)), SqliteLibrary(db), True)
        return
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.postgres.library import PostgresLibrary
    from folio.adapters.storage.sql.sync import postgres_runner

    url = request.getfixturevalue("pg_highlights_url")
    request.getfixturevalue("pg_server").truncate(url)
    pg = PgDatabase(url, max_size=2)
    yield Stores(
        SqlHighlightStore(postgres_runner(pg)), PostgresLibrary(pg, vector_scan=VECTOR_SCAN), True
    )
    pg.close()


def test_a_highlight_is_kept_once_per_book_owner_and_entry(stores: Stores) -> None:
    stores.library.add(BOOK, "x" * 100, [])
    assert stores.highlights.add([H]) == 1
    assert stores.highlights.add([replace(H, id="h2")]) == 0  # the same entry imported again
    assert stores.highlights.add([replace(H, id="h3", user_id="u2")]) == 1  # another owner's
    assert stores.highlights.of_book("b1", "u1") == [H]
    assert [h.id for h in stores.highlights.of_book("b1", "u2")] == ["h3"]
    assert stores.highlights.of_book("b1", "nobody") == []


def test_a_large_import_is_kept_whole_and_once(stores: Stores) -> None:
    stores.library.add(BOOK, "x" * 100, [])
    many = [replace(H, id=f"h{i}", key=f"k{i}", char_start=i % 90, char_end=i % 90 + 5)
            for i in range(1201)]  # fmt: skip
    assert stores.highlights.add([*many, replace(many[0], id="twin")]) == 1201
    assert stores.highlights.add(many) == 0
    kept = stores.highlights.of_book("b1", "u1")
    assert len(kept) == 1201 and "twin" not in {h.id for h in kept}


def test_highlights_come_in_the_books_order_unanchored_last(stores: Stores) -> None:
    stores.library.add(BOOK, "x" * 100, [])
    late = replace(H, id="late", key="k2", char_start=80, char_end=90, note=None)
    lost = replace(H, id="lost", key="k3", char_start=None, char_end=None, chapter=None,
                   kind=HighlightKind.BOOKMARK, text="")  # fmt: skip
    stores.highlights.add([lost, late, H])
    assert [h.id for h in stores.highlights.of_book("b1", "u1")] == ["h1", "late", "lost"]
    assert stores.highlights.of_book("b1", "u1")[2] == lost


def test_a_books_highlights_go_with_it(stores: Stores) -> None:
    if not stores.sql:
        pytest.skip("the in-memory store is not tied to a library")
    stores.library.add(BOOK, "x" * 100, [])
    stores.highlights.add([H])
    stores.library.delete("b1")
    assert stores.highlights.of_book("b1", "u1") == []


def test_only_the_owner_deletes_a_highlight(stores: Stores) -> None:
    stores.library.add(BOOK, "x" * 100, [])
    stores.highlights.add([H])
    assert not stores.highlights.delete("b1", "u2", "h1")  # another user's: none such
    assert not stores.highlights.delete("other-book", "u1", "h1")
    assert stores.highlights.of_book("b1", "u1") == [H]
    assert stores.highlights.delete("b1", "u1", "h1")
    assert stores.highlights.of_book("b1", "u1") == []
    assert not stores.highlights.delete("b1", "u1", "h1")


def test_entries_wait_for_their_book_per_owner_once_and_in_order(stores: Stores) -> None:
    first = ImportedHighlight("Emma", "Jane Austen", HighlightKind.HIGHLIGHT, "Emma Woodhouse",
                              note="a note ✓", location="Location 5-6", page=1, created="today",
                              source="Kindle", end_location=None)  # fmt: skip
    second = replace(first, text="handsome, clever, and rich", location="Location 7")
    assert stores.highlights.keep_pending("u1", [first, second]) == 2
    assert stores.highlights.keep_pending("u1", [first]) == 0  # the same file again
    assert stores.highlights.keep_pending("u2", [first]) == 1
    assert stores.highlights.pending("u1") == [first, second]
    stores.highlights.drop_pending("u1", [first])
    assert stores.highlights.pending("u1") == [second]
    assert stores.highlights.pending("u2") == [first]
    assert stores.highlights.pending("nobody") == []
