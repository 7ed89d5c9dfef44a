"""A book's content is unique per owner (SQLite, PostgreSQL and the in-memory fake, behind the
ownership wrapper the server uses): the same file may be in two users' libraries, a user's own
second copy is a duplicate, and one user's lookup never finds another's copy."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.ownership import OwnedBooks
from folio.domain.errors import BookError, BookErrorCode, IngestError, IngestErrorCode
from folio.domain.users import ResourceKind
from tests.contract.library_data import StoredBook, build_book
from tests.postgres_support import VECTOR_SCAN

TEXT = " ".join(f"The keeper counted ships in the harbour, line {i}." for i in range(120))


class MemoryOwners:
    """Ownership records in a dict (a resource without one is the local user's)."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], str] = {}

    def set_owner(self, kind: ResourceKind, resource_id: str, user_id: str) -> None:
        self.records[(kind.value, resource_id)] = user_id

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str:
        return self.records.get((kind.value, resource_id), "local")

    def owners(self, kind: ResourceKind, resource_ids: Sequence[str]) -> dict[str, str]:
        return {r: self.owner_of(kind, r) for r in resource_ids}

    def forget(self, kind: ResourceKind, resource_id: str) -> None:
        self.records.pop((kind.value, resource_id), None)


@dataclass
class Stores:
    library: Any
    owners: Any

    def of(self, user: str) -> OwnedBooks:
        return OwnedBooks(self.library, self.owners, user)


@pytest.fixture(scope="module")
def pg_identity_url(pg_server: Any) -> str:
    return str(pg_server.database("identity_contract"))


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "memory":
        owners = MemoryOwners()
        yield Stores(
            InMemoryLibrary(owner_of=lambda b: owners.owner_of(ResourceKind.BOOK, b)), owners
        )
        return
    if request.param == "postgresql":
        from folio.adapters.storage.postgres.db import PgDatabase
        from folio.adapters.storage.postgres.library import PostgresLibrary
        from folio.adapters.storage.postgres.users import PostgresUsers

        url = request.getfixturevalue("pg_identity_url")
        request.getfixturevalue("pg_server").truncate(url)
        pg = PgDatabase(url, max_size=2)
        yield Stores(PostgresLibrary(pg, vector_scan=VECTOR_SCAN), PostgresUsers(pg))
        pg.close()
        return
    from folio.adapters.storage.sqlite.db import Database
    from folio.adapters.storage.sqlite.library import SqliteLibrary
    from folio.adapters.storage.sqlite.users import SqliteUsers

    db = Database(tmp_path / "folio.db")
    db.migrate()
    library = SqliteLibrary(db)
    yield Stores(library, SqliteUsers(db))
    library.close()


def _copy(book_id: str) -> StoredBook:
    return build_book(book_id, TEXT, HashingEmbedder(32), title="Keeper", simple=True)


def _id(book: Any) -> str | None:
    return None if book is None else str(book.id)


def _add(books: OwnedBooks, stored: StoredBook) -> None:
    books.add(stored.book, stored.text, stored.chunks, stored.vectors)


def test_two_owners_may_hold_the_same_file_and_neither_sees_the_other(stores: Stores) -> None:
    alice, bob = stores.of("alice"), stores.of("bob")
    first, second = _copy("alice-book"), _copy("bob-book")
    assert first.book.content_hash == second.book.content_hash
    _add(alice, first)
    assert bob.find_by_hash(first.book.content_hash) is None  # alice's copy is no answer for bob
    _add(bob, second)
    assert _id(alice.find_by_hash(first.book.content_hash)) == "alice-book"
    assert _id(bob.find_by_hash(first.book.content_hash)) == "bob-book"
    assert [b.id for b in bob.list()] == ["bob-book"]
    assert stores.of("carol").find_by_hash(first.book.content_hash) is None


def test_an_owners_second_copy_is_a_duplicate(stores: Stores) -> None:
    alice = stores.of("alice")
    _add(alice, _copy("one"))
    again = _copy("two")
    with pytest.raises(IngestError) as info:
        _add(alice, replace(again, book=replace(again.book, title="Copy")))
    assert info.value.code == IngestErrorCode.DUPLICATE
    assert [b.id for b in alice.list()] == ["one"]


def test_another_owners_sentence_vectors_are_not_found(stores: Stores) -> None:
    alice, bob = stores.of("alice"), stores.of("bob")
    stored = _copy("alice-book")
    _add(alice, stored)
    ids = [stored.chunks[0].id]
    alice.add_sentence_vectors("alice-book", ids, [stored.vectors[:2]])
    for call in (
        lambda: bob.add_sentence_vectors("alice-book", ids, [stored.vectors[:1]]),
        lambda: bob.sentence_vectors("alice-book", ids),
        lambda: bob.chunks_without_sentence_vectors("alice-book"),
    ):
        with pytest.raises(BookError) as info:
            call()
        assert info.value.code == BookErrorCode.NOT_FOUND
    assert alice.sentence_vectors("alice-book", ids)[ids[0]].vectors.shape == (
        2,
        32,
    )  # bob changed nothing
    assert len(alice.chunks_without_sentence_vectors("alice-book")) == len(stored.chunks) - 1
