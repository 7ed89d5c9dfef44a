"""The books' files in the data directory (beside the SQLite library): ``books/ab/abcd...``, one
file per content hash (sha256, hex).

Invariants:
- a file is written to ``books/.partial/`` and renamed into place once its bytes are flushed and
  hash to its name, so the store never holds half a file, whatever stops the writer;
- ``put`` and ``release`` run under one lock (a lock file: every process on this data directory
  takes it). A book is stored before its file is put, so a ``release`` that finds no book with
  the hash runs either before that book existed (the ``put`` that follows writes the file again)
  or after its last book was removed: a file in use is never deleted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from filelock import FileLock, Timeout

from folio.adapters.storage.file_bytes import BLOCK, copy_verified, valid_hash
from folio.domain.book_files import StoredFile
from folio.domain.errors import IngestError, IngestErrorCode, StorageError, StorageErrorCode

LOCK_TIMEOUT_S = 60.0


def _os_error(error: OSError, where: Path) -> StorageError:
    if error.errno == errno.ENOSPC:
        return StorageError(
            f"The disk of {where} is full: the book's file was not kept",
            code=StorageErrorCode.DISK_FULL,
        )
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StorageError(
            f"{where} cannot be written: {error.strerror}", code=StorageErrorCode.READ_ONLY
        )
    return StorageError(f"{where} failed: {error.strerror or error}")


class DirectoryBookFiles:
    """Implements ``BookFileStore`` in ``directory``. ``in_use(content_hash)``: whether a book
    of the library (any user's) has this content; ``max_bytes``: the import bound."""

    def __init__(self, directory: Path, *, in_use: Callable[[str], bool], max_bytes: int) -> None:
        self.directory = directory
        self._in_use = in_use
        self._max_bytes = max_bytes

    def path_of(self, content_hash: str) -> Path:
        return self.directory / content_hash[:2] / content_hash

    def put(self, content_hash: str, source: Path) -> None:
        if not valid_hash(content_hash):
            raise IngestError(f"{content_hash!r} is not a sha256", code=IngestErrorCode.CORRUPT)
        target = self.path_of(content_hash)
        try:
            with self._locked():
                if target.is_file():
                    return
                self._write(content_hash, source, target)
        except OSError as e:
            raise _os_error(e, self.directory) from e

    def _write(self, content_hash: str, source: Path, target: Path) -> None:
        partial = self.directory / ".partial"
        partial.mkdir(parents=True, exist_ok=True)
        temporary = partial / f"{uuid.uuid4().hex}.part"
        try:
            with source.open("rb") as f, temporary.open("wb") as out:
                copy_verified(f, out, content_hash, self._max_bytes)
                out.flush()
                os.fsync(out.fileno())
            target.parent.mkdir(exist_ok=True)
            os.replace(temporary, target)
            _sync_directory(target.parent)
        finally:
            temporary.unlink(missing_ok=True)

    def stored(self, content_hashes: Iterable[str]) -> set[str]:
        return {h for h in content_hashes if valid_hash(h) and self.path_of(h).is_file()}

    def open(self, content_hash: str) -> StoredFile | None:
        if not valid_hash(content_hash):
            return None
        try:
            f = self.path_of(content_hash).open("rb")
        except FileNotFoundError:
            return None
        except OSError as e:
            raise _os_error(e, self.directory) from e
        # The open file stays readable even if the file is released meanwhile.
        return StoredFile(os.fstat(f.fileno()).st_size, _blocks(f))

    def release(self, content_hash: str) -> None:
        if not valid_hash(content_hash):
            return
        try:
            with self._locked():
                if not self._in_use(content_hash):
                    self.path_of(content_hash).unlink(missing_ok=True)
        except OSError as e:
            raise _os_error(e, self.directory) from e

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(self.directory / ".lock", timeout=LOCK_TIMEOUT_S):
                yield
        except Timeout as e:
            raise StorageError(
                f"Another process holds {self.directory}'s lock (waited {LOCK_TIMEOUT_S:g}s)",
                code=StorageErrorCode.BUSY,
            ) from e


def _blocks(f: BinaryIO) -> Iterator[bytes]:
    with f:
        while block := f.read(BLOCK):
            yield block


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
