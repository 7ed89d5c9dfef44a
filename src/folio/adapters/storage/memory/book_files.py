"""In-memory book files: the fake of ``BookFileStore`` for tests and demos, under the same
contract as the data directory's and PostgreSQL's stores."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from folio.adapters.storage.file_bytes import copy_verified, valid_hash
from folio.domain.book_files import StoredFile
from folio.domain.errors import IngestError, IngestErrorCode

BLOCK = 1 << 16


class InMemoryBookFiles:
    """Implements ``BookFileStore``; ``in_use(content_hash)``: whether a book has that content."""

    def __init__(self, *, in_use: Callable[[str], bool], max_bytes: int = 100 << 20) -> None:
        self.files: dict[str, bytes] = {}
        self._in_use = in_use
        self._max_bytes = max_bytes
        self._lock = threading.Lock()

    def put(self, content_hash: str, source: Path) -> None:
        if not valid_hash(content_hash):
            raise IngestError(f"{content_hash!r} is not a sha256", code=IngestErrorCode.CORRUPT)
        with self._lock:
            if content_hash in self.files:
                return
            out = io.BytesIO()
            with source.open("rb") as f:
                copy_verified(f, out, content_hash, self._max_bytes)
            self.files[content_hash] = out.getvalue()

    def stored(self, content_hashes: Iterable[str]) -> set[str]:
        return {h for h in content_hashes if h in self.files}

    def open(self, content_hash: str) -> StoredFile | None:
        data = self.files.get(content_hash)
        return None if data is None else StoredFile(len(data), _blocks(data))

    def release(self, content_hash: str) -> None:
        with self._lock:
            if not self._in_use(content_hash):
                self.files.pop(content_hash, None)


def _blocks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), BLOCK):
        yield data[start : start + BLOCK]
