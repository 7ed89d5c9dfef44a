"""The imported files of a shared PostgreSQL library (migration 012), through the composition root
on a real server: kept in parts, read back byte for byte, a failed write leaves nothing, and a file
is deleted only once no book of the library has its content."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from folio.adapters.storage.postgres.book_files import PostgresBookFiles
from folio.adapters.storage.postgres.db import PgDatabase
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.book_files import BookFileStore
from folio.domain.errors import IngestError, IngestErrorCode
from tests.postgres_support import PgTestServer

TEXT = "# The Keeper\n\n## Chapter 1\n\n" + "The keeper wound the clock before the storm. " * 40


@pytest.fixture
def container(pg_server: PgTestServer, tmp_path: Path) -> Iterator[Container]:
    url = pg_server.database("book_files")
    env = {
        "FOLIO_HOME": str(tmp_path / "home"),
        "FOLIO_EMBEDDING_MODEL": "hashing",
        "FOLIO_DATABASE_URL": url,
    }
    built = Container(load_settings(env=env))
    yield built
    built.close()


def _read(files: BookFileStore, content_hash: str) -> bytes | None:
    stored = files.open(content_hash)
    return None if stored is None else b"".join(stored.blocks)


def test_an_imported_book_keeps_its_file_in_the_database_until_it_is_removed(
    container: Container, tmp_path: Path
) -> None:
    source = tmp_path / "keeper.md"
    source.write_text(TEXT, encoding="utf-8")
    book = container.ingest.execute(source).book
    files = container.book_files
    assert isinstance(files, PostgresBookFiles)
    assert not (tmp_path / "home" / "book-files").exists()  # nothing on this worker's disk
    assert _read(files, book.content_hash) == source.read_bytes()
    container.library.remove(book.id)
    assert files.open(book.content_hash) is None


def test_a_large_file_is_kept_in_parts_and_a_failed_write_leaves_nothing(
    container: Container, tmp_path: Path
) -> None:
    db = container.database
    assert isinstance(db, PgDatabase)
    files = PostgresBookFiles(db, max_bytes=8 << 20)
    data = bytes(range(256)) * (10 * 1024 + 7)  # 2.5 MB: three parts
    path = tmp_path / "big.pdf"
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    files.put(digest, path)
    files.put(digest, path)  # kept already: nothing more
    stored = files.open(digest)
    assert stored is not None and stored.size == len(data)
    assert b"".join(stored.blocks) == data
    with db.connection() as conn:
        parts = conn.execute(
            "SELECT count(*) FROM book_file_parts WHERE content_hash = %s", (digest,)
        ).fetchone()
    assert parts == (3,)
    other = tmp_path / "changed.pdf"
    other.write_bytes(data[:-1] + b"!")
    wrong = hashlib.sha256(b"what was imported").hexdigest()
    with pytest.raises(IngestError) as raised:
        files.put(wrong, other)
    assert raised.value.code is IngestErrorCode.CORRUPT
    assert files.stored([wrong, digest]) == {digest}
    files.release(digest)  # no book has these bytes
    assert files.open(digest) is None


def test_a_file_two_books_share_stays_until_the_last_is_removed(
    container: Container, tmp_path: Path
) -> None:
    source = tmp_path / "keeper.md"
    source.write_text(TEXT, encoding="utf-8")
    alice, _ = container.users.add("alice")
    bob, _ = container.users.add("bob")
    theirs = [container.for_user(u.id) for u in (alice, bob)]
    books = [container._ingest_on(scope.books).execute(source).book for scope in theirs]
    assert books[0].id != books[1].id and books[0].content_hash == books[1].content_hash
    theirs[0].library.remove(books[0].id)
    assert _read(container.book_files, books[1].content_hash) == source.read_bytes()
    theirs[1].library.remove(books[1].id)
    assert container.book_files.open(books[1].content_hash) is None


def test_copying_a_local_library_to_postgresql_copies_its_kept_files(
    pg_server: PgTestServer, tmp_path: Path
) -> None:
    env = {"FOLIO_HOME": str(tmp_path / "local"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    local = Container(load_settings(env=env))
    source = tmp_path / "keeper.md"
    source.write_text(TEXT, encoding="utf-8")
    book = local.ingest.execute(source).book
    url = pg_server.database("book_files_copy")
    _, copied = local.copy_library_to(url)
    assert copied["books"] == 1 and copied["book_files"] == 1
    shared = Container(load_settings(env={**env, "FOLIO_DATABASE_URL": url}))
    try:
        assert _read(shared.book_files, book.content_hash) == source.read_bytes()
    finally:
        shared.close()
