"""The book file stores (data directory, in memory) under one contract: the bytes kept are the
bytes imported, a write is whole or absent, a file shared by two books stays until the last goes;
and the ingest keeps the file with the book, which removing the book releases."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.book_files import InMemoryBookFiles
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.sqlite.book_files import DirectoryBookFiles
from folio.app.book_files import BooksKeepingFiles
from folio.app.ingest import IngestBook
from folio.app.library import Library
from folio.domain.book_files import BookFileStore
from folio.domain.errors import IngestError, IngestErrorCode, StorageError
from tests.unit.test_ingest import FakeParse

BOUND = 64 * 1024
StoreFactory = Callable[[Path, Callable[[str], bool]], BookFileStore]


def _directory(tmp: Path, in_use: Callable[[str], bool]) -> BookFileStore:
    return DirectoryBookFiles(tmp / "book-files", in_use=in_use, max_bytes=BOUND)


def _memory(tmp: Path, in_use: Callable[[str], bool]) -> BookFileStore:
    return InMemoryBookFiles(in_use=in_use, max_bytes=BOUND)


@pytest.fixture(params=[_directory, _memory], ids=["directory", "memory"])
def make_store(request: pytest.FixtureRequest) -> StoreFactory:
    factory: StoreFactory = request.param
    return factory


def _file(tmp: Path, data: bytes, name: str = "book.epub") -> tuple[Path, str]:
    path = tmp / name
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def _read(store: BookFileStore, content_hash: str) -> bytes | None:
    stored = store.open(content_hash)
    if stored is None:
        return None
    data = b"".join(stored.blocks)
    assert len(data) == stored.size
    return data


def test_a_kept_file_reads_back_byte_for_byte(tmp_path: Path, make_store: StoreFactory) -> None:
    data = bytes(range(256)) * 200  # binary, every byte value, several blocks of memory's store
    path, digest = _file(tmp_path, data)
    store = make_store(tmp_path, lambda h: True)
    store.put(digest, path)
    path.write_bytes(b"changed after the import")  # the store holds its own copy
    assert _read(store, digest) == data
    assert store.stored([digest, "0" * 64]) == {digest}


def test_a_file_that_does_not_hash_to_its_name_is_not_kept(
    tmp_path: Path, make_store: StoreFactory
) -> None:
    path, digest = _file(tmp_path, b"the bytes hashed at import")
    path.write_bytes(b"other bytes, written while the import ran")
    store = make_store(tmp_path, lambda h: True)
    with pytest.raises(IngestError) as raised:
        store.put(digest, path)
    assert raised.value.code is IngestErrorCode.CORRUPT
    assert store.open(digest) is None and store.stored([digest]) == set()


def test_a_file_over_the_bound_is_not_kept(tmp_path: Path, make_store: StoreFactory) -> None:
    path, digest = _file(tmp_path, b"x" * (BOUND + 1))
    store = make_store(tmp_path, lambda h: True)
    with pytest.raises(IngestError) as raised:
        store.put(digest, path)
    assert raised.value.code is IngestErrorCode.TOO_LARGE
    assert store.open(digest) is None


def test_a_shared_file_stays_until_no_book_has_its_content(
    tmp_path: Path, make_store: StoreFactory
) -> None:
    books_with_it = {"alice's copy", "bob's copy"}
    path, digest = _file(tmp_path, b"one file, two readers")
    store = make_store(tmp_path, lambda h: bool(books_with_it))
    store.put(digest, path)
    store.put(digest, path)  # the second reader's import: already kept
    books_with_it.discard("alice's copy")
    store.release(digest)
    assert _read(store, digest) == b"one file, two readers"
    books_with_it.discard("bob's copy")
    store.release(digest)
    assert store.open(digest) is None
    store.release(digest)  # releasing a file that is gone is harmless


def test_a_name_that_is_not_a_sha256_is_never_a_path(
    tmp_path: Path, make_store: StoreFactory
) -> None:
    store = make_store(tmp_path, lambda h: False)
    assert store.open("../../folio.db") is None
    assert store.stored(["../x"]) == set()
    with pytest.raises(IngestError):
        store.put("../../escape", tmp_path)


class _Interrupted(Exception):
    pass


def test_an_interrupted_write_leaves_no_file_and_no_part(tmp_path: Path) -> None:
    data = b"y" * (3 << 20)  # three blocks
    path, digest = _file(tmp_path, data)
    store = DirectoryBookFiles(tmp_path / "book-files", in_use=lambda h: True, max_bytes=8 << 20)
    real_open = Path.open

    class Failing:
        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.reads = 0

        def read(self, n: int) -> bytes:
            self.reads += 1
            if self.reads == 2:
                raise _Interrupted
            return self.inner.read(n)

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    def failing_open(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        f = real_open(self, mode, *args, **kwargs)
        return Failing(f) if self == path else f

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Path, "open", failing_open)
        with pytest.raises(_Interrupted):
            store.put(digest, path)
    assert not store.path_of(digest).exists()
    assert list((tmp_path / "book-files" / ".partial").iterdir()) == []
    store.put(digest, path)  # the next import keeps it whole
    assert store.path_of(digest).read_bytes() == data


def test_a_file_being_read_survives_its_release(tmp_path: Path) -> None:
    path, digest = _file(tmp_path, b"z" * (2 << 20))
    store = DirectoryBookFiles(tmp_path / "book-files", in_use=lambda h: False, max_bytes=8 << 20)
    store.put(digest, path)
    stored = store.open(digest)
    assert stored is not None
    store.release(digest)
    assert not store.path_of(digest).exists()
    assert b"".join(stored.blocks) == b"z" * (2 << 20)


def test_an_unwritable_directory_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the store's folder should be")
    path, digest = _file(tmp_path, b"bytes")
    store = DirectoryBookFiles(blocker, in_use=lambda h: True, max_bytes=BOUND)
    with pytest.raises(StorageError):
        store.put(digest, path)


# --- the ingest and the library keep and release the file ---------------------------------------


@pytest.fixture
def library() -> Iterator[tuple[InMemoryLibrary, InMemoryBookFiles, BooksKeepingFiles]]:
    store = InMemoryLibrary()
    files = InMemoryBookFiles(in_use=lambda h: store.find_by_hash(h) is not None)
    yield store, files, BooksKeepingFiles(store, files)


def _ingest(books: BooksKeepingFiles, files: BookFileStore) -> IngestBook:
    return IngestBook(parse=FakeParse(), embedder=HashingEmbedder(16), books=books, files=files)


def _book_file(tmp: Path) -> Path:
    path = tmp / "story.txt"
    path.write_text("Chapter 1\n\n" + "The keeper counted the ships. " * 200)
    return path


def test_an_imported_book_keeps_its_file_and_removing_it_deletes_the_file(
    tmp_path: Path,
    library: tuple[InMemoryLibrary, InMemoryBookFiles, BooksKeepingFiles],
) -> None:
    _, files, books = library
    path = _book_file(tmp_path)
    book = _ingest(books, files).execute(path).book
    assert _read(files, book.content_hash) == path.read_bytes()
    Library(books).remove(book.id)
    assert files.files == {}


def test_adding_the_file_again_keeps_it_for_a_book_imported_before_files_were_kept(
    tmp_path: Path,
    library: tuple[InMemoryLibrary, InMemoryBookFiles, BooksKeepingFiles],
) -> None:
    store, files, books = library
    path = _book_file(tmp_path)
    old = IngestBook(parse=FakeParse(), embedder=HashingEmbedder(16), books=store)
    book = old.execute(path).book
    assert files.open(book.content_hash) is None
    with pytest.raises(IngestError) as raised:
        _ingest(books, files).execute(path)
    assert raised.value.code is IngestErrorCode.DUPLICATE
    assert _read(files, book.content_hash) == path.read_bytes()


def test_a_file_that_cannot_be_kept_stores_no_book(
    tmp_path: Path,
    library: tuple[InMemoryLibrary, InMemoryBookFiles, BooksKeepingFiles],
) -> None:
    store, _, books = library
    full = InMemoryBookFiles(in_use=lambda h: False, max_bytes=10)  # every book is over it
    with pytest.raises(IngestError) as raised:
        _ingest(books, full).execute(_book_file(tmp_path))
    assert raised.value.code is IngestErrorCode.TOO_LARGE
    assert store.list() == []


def test_a_new_edition_keeps_its_file_and_releases_the_old_one(
    tmp_path: Path,
    library: tuple[InMemoryLibrary, InMemoryBookFiles, BooksKeepingFiles],
) -> None:
    _, files, books = library
    first = _book_file(tmp_path)
    book = _ingest(books, files).execute(first).book
    second = tmp_path / "story, second edition.txt"
    second.write_text(first.read_text() + "\n\nAn afterword the second edition adds. " * 20)
    new = _ingest(books, files).reingest(book, second).book
    assert new.id == book.id and new.content_hash != book.content_hash
    assert _read(files, new.content_hash) == second.read_bytes()
    assert files.open(book.content_hash) is None  # no book has the first edition's bytes now
