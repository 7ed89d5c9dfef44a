"""The library in SQLite: ``BookRepository`` and ``ChunkIndex`` (hybrid BM25 + vector search).

Invariants:
- ``add`` stores a book, its text, chunks, FTS rows (and the vectors when given) in one transaction:
  all or nothing. Vectors may come later, batch by batch (``add_vectors``); until then a chunk is
  found by the lexical index only.
- Deleting a book removes its text, chunks and FTS rows (and, by foreign-key cascade, anything later
  migrations attach to ``books``, such as conversations).
- ``search`` never returns text at or past ``max_char_offset``: both candidate lists and the final
  fetch of the returned rows filter ``char_start < max_char_offset`` in SQL, and a chunk straddling
  the limit is cut there (``Chunk.cut_at``).
- A book's vector matrix is cached per process (vectors never change once stored); the cache entry
  is checked against the book's vector count and highest ``seq`` (never reused) on every search.
"""

from __future__ import annotations

import builtins
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from folio.adapters.storage.sql.dialect import SQLITE
from folio.adapters.storage.sql.library import SqlLibraryCore
from folio.adapters.storage.sqlite.db import Database, transaction
from folio.domain.errors import ConfigError
from folio.domain.search import query_terms

if TYPE_CHECKING:  # numpy is imported where vectors are used: listing books never loads it
    import numpy as np
    import numpy.typing as npt

    from folio.domain.ports import Vectors


@dataclass(frozen=True, slots=True)
class _BookVectors:
    """A book's chunk vectors in ``char_start`` order, with the seqs and starts of their rows."""

    seqs: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    max_seq: int


class SqliteLibrary(SqlLibraryCore):
    """Implements ``BookRepository`` and ``ChunkIndex`` over a migrated ``Database``: the book
    rows, texts, positions, recaps and lexicons are ``SqlLibraryCore``'s, search is here.

    One connection per thread; the vector cache is shared by the threads of the process.
    """

    dialect = SQLITE
    integrity_error = sqlite3.IntegrityError

    def __init__(self, db: Database, *, candidates: int = 50) -> None:
        self._db = db
        self._candidates = candidates
        self._local = threading.local()
        self._vectors: dict[str, _BookVectors] = {}
        self._lock = threading.Lock()

    @property
    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._db.connect()
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # --- the hooks of SqlLibraryCore ------------------------------------------------------------
    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        return nullcontext(self.conn)

    def _rows_on(
        self, conn: sqlite3.Connection, sql: str, params: Sequence[Any]
    ) -> builtins.list[Any]:
        return conn.execute(sql, params).fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        with transaction(self.conn) as conn:
            return conn.execute(sql, params).rowcount

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self.conn)

    def _insert_vectors(
        self, tx: sqlite3.Connection, chunk_ids: Sequence[str], vectors: Vectors, book_id: str
    ) -> None:
        import numpy as np

        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        tx.executemany(
            _INSERT_VECTOR,
            ((matrix[i].tobytes(), chunk_id, book_id) for i, chunk_id in enumerate(chunk_ids)),
        )

    def _is_duplicate(self, error: Exception) -> bool:
        return "books.owner_content" in str(error) or "books.id" in str(error)

    def _forget(self, book_id: str) -> None:
        with self._lock:
            self._vectors.pop(book_id, None)

    # --- ChunkIndex ------------------------------------------------------------------------------
    def _lexical(
        self, conn: sqlite3.Connection, book_id: str, query: str, start: int, limit: int
    ) -> builtins.list[int]:
        """Seqs of the best BM25 matches among the chunks starting in ``[start, limit)``."""
        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = conn.execute(
            "SELECT c.seq FROM chunks_fts JOIN chunks AS c ON c.seq = chunks_fts.rowid"
            " WHERE chunks_fts MATCH ? AND c.book_id = ? AND c.char_start < ?"
            " AND c.char_start >= ? ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, book_id, limit, start, self._candidates),
        )
        return [int(r[0]) for r in rows]

    def _nearest(
        self,
        conn: sqlite3.Connection,
        book_id: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32],
        start: int,
        limit: int,
    ) -> dict[int, float]:
        """Cosine similarity of the closest chunks starting in ``[start, limit)``, best first."""
        vectors = self._book_vectors(conn, book_id)
        if vectors is None:
            return {}
        import numpy as np

        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != vectors.matrix.shape[1]:
            raise ConfigError(
                f"The book was indexed with {vectors.matrix.shape[1]}-dimensional vectors but the"
                f" embedder gives {query.shape[0]}; remove and add the book again",
                book_id=book_id,
            )
        first = int(np.searchsorted(vectors.starts, start, side="left"))
        end = int(np.searchsorted(vectors.starts, limit, side="left"))
        visible = end - first
        if visible <= 0:
            return {}
        sims = vectors.matrix[first:end] @ query
        n = min(self._candidates, visible)
        top = np.argpartition(-sims, n - 1)[:n] if n < visible else np.arange(visible)
        top = top[np.argsort(-sims[top], kind="stable")]
        return {int(vectors.seqs[first + i]): float(sims[i]) for i in top}

    def _book_vectors(self, conn: sqlite3.Connection, book_id: str) -> _BookVectors | None:
        count, max_seq = conn.execute(
            "SELECT count(*), max(v.seq) FROM chunk_vectors AS v JOIN chunks AS c ON c.seq = v.seq"
            " WHERE c.book_id = ?",
            (book_id,),
        ).fetchone()
        if not count:
            return None
        with self._lock:
            cached = self._vectors.get(book_id)
        if cached is not None and cached.max_seq == max_seq and len(cached.seqs) == count:
            return cached
        loaded = self._load_vectors(conn, book_id)
        with self._lock:
            self._vectors[book_id] = loaded
        return loaded

    def _load_vectors(self, conn: sqlite3.Connection, book_id: str) -> _BookVectors:
        rows = conn.execute(
            "SELECT c.seq, c.char_start, v.embedding FROM chunks AS c"
            " JOIN chunk_vectors AS v ON v.seq = c.seq WHERE c.book_id = ?"
            " ORDER BY c.char_start, c.seq",
            (book_id,),
        ).fetchall()
        import numpy as np

        matrix = np.stack([np.frombuffer(r["embedding"], dtype="<f4") for r in rows])
        seqs = np.array([r["seq"] for r in rows], dtype=np.int64)
        return _BookVectors(
            seqs=seqs,
            starts=np.array([r["char_start"] for r in rows], dtype=np.int64),
            matrix=matrix.astype(np.float32, copy=False),
            max_seq=int(seqs.max()),
        )


# --- rows ----------------------------------------------------------------------------------------
_INSERT_VECTOR = """
INSERT OR REPLACE INTO chunk_vectors (seq, embedding)
SELECT seq, ? FROM chunks WHERE id = ? AND book_id = ?
"""
