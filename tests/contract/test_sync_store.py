"""One contract for the progress sync store and the book identifiers, in memory, on SQLite and on
PostgreSQL: logins, document ids with their EPUB fragments, the last push per document (kept for
a book folio does not hold yet), identifiers, and everything of a book gone with it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from folio.domain.books import Book, BookFormat
from folio.domain.ports import SyncAccount
from folio.domain.sync import DocumentIds, Fragment, PushedDocument, PushedProgress
from folio.domain.users import UserError
from tests.postgres_support import VECTOR_SCAN

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
BOOK = Book("b1", "A Book", None, BookFormat.EPUB, "a.epub", "hash-b1", 0, 10)


@dataclass
class Stores:
    sync: Any
    identifiers: Any  # None for the in-memory store
    library: Any


@pytest.fixture(scope="module")
def pg_sync_url(pg_server: Any) -> str:
    return str(pg_server.database("sync_contract"))


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "memory":
        from folio.adapters.storage.memory.books import InMemoryLibrary
        from folio.adapters.storage.memory.sync import InMemorySyncStore

        yield Stores(InMemorySyncStore(), None, InMemoryLibrary())
        return
    from folio.adapters.storage.sql.sync import SqlIdentifierStore

    if request.param == "sqlite":
        from folio.adapters.storage.sql.sync import sqlite_runner, sqlite_sync_store
        from folio.adapters.storage.sqlite.db import Database
        from folio.adapters.storage.sqlite.library import SqliteLibrary

        db = Database(tmp_path / "folio.db")
        db.migrate()
        yield Stores(
            sqlite_sync_store(db), SqlIdentifierStore(sqlite_runner(db)), SqliteLibrary(db)
        )
        return
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.postgres.library import PostgresLibrary
    from folio.adapters.storage.sql.sync import postgres_runner, postgres_sync_store

    url = request.getfixturevalue("pg_sync_url")
    request.getfixturevalue("pg_server").truncate(url)
    pg = PgDatabase(url, max_size=2)
    yield Stores(
        postgres_sync_store(pg),
        SqlIdentifierStore(postgres_runner(pg)),
        PostgresLibrary(pg, vector_scan=VECTOR_SCAN),
    )
    pg.close()


def test_a_login_is_one_users_and_its_name_is_unique(stores: Stores) -> None:
    stores.sync.save_account(SyncAccount("u1", "reader", "hash-1"))
    stores.sync.save_account(SyncAccount("u1", "reader", "hash-2"))  # a new password
    assert stores.sync.account("reader") == SyncAccount("u1", "reader", "hash-2")
    assert stores.sync.account("nobody") is None
    with pytest.raises(UserError):
        stores.sync.save_account(SyncAccount("u2", "reader", "hash-3"))


def test_a_books_document_ids_find_it_in_either_mode(stores: Stores) -> None:
    stores.library.add(BOOK, "0123456789", [])
    fragments = [Fragment(3, 0, 10, {"/body": 0, "/body/p/text()": 2}, 0.8)]
    stores.sync.save_documents("b1", DocumentIds("pmd5", "fmd5"), fragments)

    assert stores.sync.books_for_document("pmd5") == ["b1"]
    assert stores.sync.books_for_document("fmd5") == ["b1"]
    assert stores.sync.books_for_document("other") == []
    assert stores.sync.documents_of("b1") == DocumentIds("pmd5", "fmd5")
    assert stores.sync.fragments_of("b1") == fragments


def test_the_last_push_per_document_is_kept_even_without_its_book(stores: Stores) -> None:
    first = PushedProgress("doc", "/body/DocFragment[3]/body/p.4", 0.25, "Kobo", "D1", T0)
    later = PushedProgress("doc", "12", 0.5, "Phone", "D2", T0.replace(hour=9))
    stores.sync.save_progress("u1", first)
    stores.sync.save_progress("u1", later)

    assert stores.sync.progress("u1", "doc") == later
    assert stores.sync.progress("u2", "doc") is None


def test_an_epubs_structure_digest_finds_it_and_a_push_naming_it(stores: Stores) -> None:
    stores.library.add(BOOK, "0123456789", [])
    stores.sync.save_documents("b1", DocumentIds("pmd5", "fmd5", "s" * 32), [])
    described = PushedDocument("f.epub", "A Book", ("A One", "B Two"), "c" * 32, "s" * 32, "")
    old = PushedProgress("doc1", "0.1", 0.1, "Kobo", "D1", T0, described)
    new = PushedProgress("doc2", "0.2", 0.2, "Kobo", "D1", T0.replace(hour=9), described)
    for pushed in (new, old):
        stores.sync.save_progress("u1", pushed)

    assert stores.sync.books_for_structure("s" * 32) == ["b1"]
    assert stores.sync.books_for_structure("t" * 32) == []
    assert stores.sync.documents_of("b1") == DocumentIds("pmd5", "fmd5", "s" * 32)
    assert stores.sync.progress("u1", "doc1") == old  # what the push said, kept with it
    assert stores.sync.progress_for_structure("u1", "s" * 32) == new
    assert stores.sync.progress_for_structure("u2", "s" * 32) is None


def test_identifiers_are_kept_with_their_book_and_go_with_it(stores: Stores) -> None:
    if stores.identifiers is None:
        pytest.skip("the in-memory library has no identifier store")
    stores.library.add(BOOK, "0123456789", [])
    stores.sync.save_documents("b1", DocumentIds("pmd5", "fmd5"), [])
    stores.identifiers.set_identifiers("b1", {"isbn": "978", "calibre": "uuid-1"})
    stores.identifiers.set_identifiers("b1", {"isbn": "979"})

    assert stores.identifiers.identifiers_of("b1") == {"calibre": "uuid-1", "isbn": "979"}
    assert stores.identifiers.books_with("calibre", "uuid-1") == ["b1"]

    stores.library.delete("b1")
    assert stores.identifiers.identifiers_of("b1") == {}
    assert stores.sync.books_for_document("pmd5") == []
