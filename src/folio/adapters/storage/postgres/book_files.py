"""The books' files in the PostgreSQL database (migration 012): every worker of a shared library,
on any machine, serves the same files, backed up and removed with the rest of the library.

Invariants: a file is written in one transaction (all its parts or none); ``put`` and ``release``
of one content hash take the same transaction-level advisory lock, and a book is stored before its
file is put, so a release never deletes a file that a book stored before it uses. Reading takes a
pooled connection per part, never one for the whole download.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from folio.adapters.storage.file_bytes import copy_verified, valid_hash
from folio.adapters.storage.postgres.db import PgDatabase
from folio.domain.book_files import StoredFile
from folio.domain.errors import IngestError, IngestErrorCode

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('folio book file ' || %s, 0))"


class _Parts:
    """Writes the blocks of a file as numbered parts in the open transaction."""

    def __init__(self, conn: Any, content_hash: str) -> None:
        self._conn = conn
        self._hash = content_hash
        self.count = 0

    def write(self, block: bytes, /) -> int:
        self._conn.execute(
            "INSERT INTO book_file_parts (content_hash, seq, data) VALUES (%s, %s, %s)",
            (self._hash, self.count, block),
        )
        self.count += 1
        return len(block)


class PostgresBookFiles:
    """Implements ``BookFileStore`` in ``db``; ``max_bytes``: the import bound."""

    def __init__(self, db: PgDatabase, *, max_bytes: int) -> None:
        self._db = db
        self._max_bytes = max_bytes

    def put(self, content_hash: str, source: Path) -> None:
        if not valid_hash(content_hash):
            raise IngestError(f"{content_hash!r} is not a sha256", code=IngestErrorCode.CORRUPT)
        with self._db.connection() as conn:  # one transaction
            conn.execute(_LOCK, (content_hash,))
            found = conn.execute(
                "SELECT 1 FROM book_files WHERE content_hash = %s", (content_hash,)
            ).fetchone()
            if found is not None:
                return
            conn.execute(
                "INSERT INTO book_files (content_hash, size, parts) VALUES (%s, 0, 0)",
                (content_hash,),
            )
            parts = _Parts(conn, content_hash)
            with source.open("rb") as f:
                size = copy_verified(f, parts, content_hash, self._max_bytes)
            conn.execute(
                "UPDATE book_files SET size = %s, parts = %s WHERE content_hash = %s",
                (size, parts.count, content_hash),
            )

    def stored(self, content_hashes: Iterable[str]) -> set[str]:
        wanted = sorted({h for h in content_hashes if valid_hash(h)})
        if not wanted:
            return set()
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT content_hash FROM book_files WHERE content_hash = ANY(%s)", (wanted,)
            ).fetchall()
        return {str(r[0]) for r in rows}

    def open(self, content_hash: str) -> StoredFile | None:
        if not valid_hash(content_hash):
            return None
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT size, parts FROM book_files WHERE content_hash = %s", (content_hash,)
            ).fetchone()
        if row is None:
            return None
        return StoredFile(int(row[0]), self._blocks(content_hash, int(row[1])))

    def _blocks(self, content_hash: str, parts: int) -> Iterator[bytes]:
        for seq in range(parts):
            with self._db.connection() as conn:
                row = conn.execute(
                    "SELECT data FROM book_file_parts WHERE content_hash = %s AND seq = %s",
                    (content_hash, seq),
                ).fetchone()
            if row is None:
                return  # released meanwhile: the download ends short, the client sees it
            yield bytes(row[0])

    def release(self, content_hash: str) -> None:
        if not valid_hash(content_hash):
            return
        with self._db.connection() as conn:  # one transaction
            conn.execute(_LOCK, (content_hash,))
            conn.execute(
                "DELETE FROM book_files WHERE content_hash = %s"
                " AND NOT EXISTS (SELECT 1 FROM books WHERE content_hash = %s)",
                (content_hash, content_hash),
            )
