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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from folio.adapters.storage.book_codec import (
    CHUNK_COLUMNS,
    book_from_row,
    book_row,
    chunk_from_row,
    chunk_row,
    position_time,
)
from folio.adapters.storage.sqlite_db import Database, transaction
from folio.domain.books import (
    Book,
    Chunk,
    ReadingPosition,
)
from folio.domain.errors import (
    BookError,
    BookErrorCode,
    ConfigError,
    IngestError,
    IngestErrorCode,
)
from folio.domain.lexicon import LEXICON_VERSION, Lexicon
from folio.domain.search import RankedChunk, query_terms, reciprocal_rank_fusion

if TYPE_CHECKING:  # numpy is imported where vectors are used: listing books never loads it
    import numpy as np
    import numpy.typing as npt

    from folio.domain.ports import Vectors

NO_LIMIT = 2**62  # an offset past any book: SQL needs a number where the domain says ``None``
_SAVE_LEXICON = (
    "INSERT INTO book_lexicons (book_id, version, data) VALUES (?, ?, ?)"
    " ON CONFLICT (book_id) DO UPDATE SET version = excluded.version, data = excluded.data"
)


@dataclass(frozen=True, slots=True)
class _BookVectors:
    """A book's chunk vectors in ``char_start`` order, with the seqs and starts of their rows."""

    seqs: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    max_seq: int


class SqliteLibrary:
    """Implements ``BookRepository`` and ``ChunkIndex`` over a migrated ``Database``.

    One connection per thread; the vector cache is shared by the threads of the process.
    """

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
            with transaction(self.conn) as conn:
                conn.execute(_INSERT_BOOK, book_row(book))
                conn.execute(
                    "INSERT INTO book_texts (book_id, text) VALUES (?, ?)", (book.id, text)
                )
                conn.executemany(_INSERT_CHUNK, (chunk_row(c) for c in chunks))
                if vectors is not None:
                    _insert_vectors(conn, [c.id for c in chunks], vectors)
                if lexicon is not None:
                    conn.execute(_SAVE_LEXICON, (book.id, LEXICON_VERSION, lexicon.to_json()))
        except sqlite3.IntegrityError as e:
            raise _ingest_error(book, e) from e

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} vectors")
        with transaction(self.conn) as conn:
            if conn.execute("SELECT 1 FROM books WHERE id = ?", (book_id,)).fetchone() is None:
                raise BookError(
                    f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id
                )
            _insert_vectors(conn, chunk_ids, vectors, book_id=book_id)

    def chunks_without_vectors(self, book_id: str) -> builtins.list[Chunk]:
        rows = self.conn.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE book_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM chunk_vectors AS v WHERE v.seq = chunks.seq)"
            " ORDER BY char_start, seq",
            (book_id,),
        )
        return [chunk_from_row(r) for r in rows]

    def vector_coverage(self, book_id: str) -> tuple[int, int]:
        total, embedded = self.conn.execute(
            "SELECT count(*), count(v.seq) FROM chunks AS c"
            " LEFT JOIN chunk_vectors AS v ON v.seq = c.seq WHERE c.book_id = ?",
            (book_id,),
        ).fetchone()
        return int(embedded), int(total)

    def get(self, book_id: str) -> Book:
        row = self.conn.execute("SELECT * FROM books WHERE id = ?", (book_id,)).fetchone()
        if row is None:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return book_from_row(row)

    def list(self) -> list[Book]:
        rows = self.conn.execute("SELECT * FROM books ORDER BY title COLLATE NOCASE, id")
        return [book_from_row(r) for r in rows]

    def find_by_hash(self, content_hash: str) -> Book | None:
        row = self.conn.execute(
            "SELECT * FROM books WHERE content_hash = ?", (content_hash,)
        ).fetchone()
        return None if row is None else book_from_row(row)

    def delete(self, book_id: str) -> None:
        with transaction(self.conn) as conn:
            deleted = conn.execute("DELETE FROM books WHERE id = ?", (book_id,)).rowcount
        with self._lock:
            self._vectors.pop(book_id, None)
        if not deleted:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        if start < 0 or (end is not None and end < 0):
            return self._full_text(book_id)[start:end]
        # substr's length is a 32-bit int: "to the end" is the two-argument form.
        if end is None:
            sql = "SELECT substr(text, ?) FROM book_texts WHERE book_id = ?"
            params: tuple[int, ...] = (start + 1,)
        else:
            sql = "SELECT substr(text, ?, ?) FROM book_texts WHERE book_id = ?"
            params = (start + 1, max(0, end - start))
        row = self.conn.execute(sql, (*params, book_id)).fetchone()
        if row is None:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return str(row[0])

    def _full_text(self, book_id: str) -> str:
        row = self.conn.execute(
            "SELECT text FROM book_texts WHERE book_id = ?", (book_id,)
        ).fetchone()
        if row is None:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return str(row[0])

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        with transaction(self.conn) as conn:
            updated = conn.execute(
                "UPDATE books SET position_char_offset = ?, position_kind = ?, position_value = ?,"
                " position_include_matter = ?,"
                " position_source = ?, position_set_at = ? WHERE id = ?",
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
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return self.get(book_id)

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        with transaction(self.conn) as conn:
            updated = conn.execute(
                "UPDATE books SET title = ?, author = ? WHERE id = ?", (title, author, book_id)
            ).rowcount
        if not updated:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return self.get(book_id)

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        with transaction(self.conn) as conn:
            updated = conn.execute(
                "UPDATE books SET series = ?, series_index = ? WHERE id = ?",
                (series, series_index, book_id),
            ).rowcount
        if not updated:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)
        return self.get(book_id)

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        row = self.conn.execute(
            "SELECT text FROM chapter_recaps WHERE book_id = ? AND chapter_index = ?",
            (book_id, chapter_index),
        ).fetchone()
        return None if row is None else str(row[0])

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        self.get(book_id)
        with transaction(self.conn) as conn:
            conn.execute(
                "INSERT INTO chapter_recaps (book_id, chapter_index, text, model, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (book_id, chapter_index) DO UPDATE SET"
                " text = excluded.text, model = excluded.model, created_at = excluded.created_at",
                (book_id, chapter_index, text, model, datetime.now(UTC).isoformat()),
            )

    def lexicon(self, book_id: str) -> Lexicon | None:
        row = self.conn.execute(
            "SELECT data FROM book_lexicons WHERE book_id = ? AND version = ?",
            (book_id, LEXICON_VERSION),
        ).fetchone()
        return None if row is None else Lexicon.from_json(str(row[0]))

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        self.get(book_id)
        with transaction(self.conn) as conn:
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
        lexical = self._lexical(book_id, query, start, limit)
        similarity: dict[int, float] = {}
        if query_vector is not None:
            similarity = self._nearest(book_id, query_vector, start, limit)
        lex_rank = {seq: r for r, seq in enumerate(lexical, start=1)}
        vec_rank = {seq: r for r, seq in enumerate(similarity, start=1)}
        fused = reciprocal_rank_fusion(lex_rank, vec_rank)
        best = sorted(fused, key=lambda s: (-fused[s], s))[:k]
        rows = self._chunks_by_seq(book_id, best, limit)
        out = []
        for seq in best:
            chunk = rows[seq].cut_at(max_char_offset) if seq in rows else None
            if chunk is not None and chunk.char_start < start:
                chunk = None
            if chunk is not None:
                ranked = RankedChunk(
                    chunk, fused[seq], lex_rank.get(seq), vec_rank.get(seq), similarity.get(seq)
                )
                out.append(ranked)
        return out

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> builtins.list[Chunk]:
        rows = self.conn.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks"
            " WHERE book_id = ? AND char_start < ? AND char_end > ? ORDER BY char_start",
            (book_id, char_end, char_start),
        )
        return [chunk_from_row(r) for r in rows]

    def _lexical(self, book_id: str, query: str, start: int, limit: int) -> builtins.list[int]:
        """Seqs of the best BM25 matches among the chunks starting in ``[start, limit)``."""
        terms = query_terms(query)
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.conn.execute(
            "SELECT c.seq FROM chunks_fts JOIN chunks AS c ON c.seq = chunks_fts.rowid"
            " WHERE chunks_fts MATCH ? AND c.book_id = ? AND c.char_start < ?"
            " AND c.char_start >= ? ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, book_id, limit, start, self._candidates),
        )
        return [int(r[0]) for r in rows]

    def _nearest(
        self,
        book_id: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32],
        start: int,
        limit: int,
    ) -> dict[int, float]:
        """Cosine similarity of the closest chunks starting in ``[start, limit)``, best first."""
        vectors = self._book_vectors(book_id)
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

    def _book_vectors(self, book_id: str) -> _BookVectors | None:
        count, max_seq = self.conn.execute(
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
        loaded = self._load_vectors(book_id)
        with self._lock:
            self._vectors[book_id] = loaded
        return loaded

    def _load_vectors(self, book_id: str) -> _BookVectors:
        rows = self.conn.execute(
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

    def _chunks_by_seq(self, book_id: str, seqs: Sequence[int], limit: int) -> dict[int, Chunk]:
        if not seqs:
            return {}
        marks = ", ".join("?" * len(seqs))
        rows = self.conn.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks"
            f" WHERE seq IN ({marks}) AND book_id = ? AND char_start < ?",
            (*seqs, book_id, limit),
        )
        return {int(r["seq"]): chunk_from_row(r) for r in rows}


# --- rows ----------------------------------------------------------------------------------------
# owner_content: the book's identity, unique per owner (migration 012): the owner recorded for
# the book (ownership is recorded before the book is stored), else the local user.
_INSERT_BOOK = """
INSERT INTO books (id, title, author, format, source_name, content_hash, page_count, char_count,
    chapters, pages, position_char_offset, position_kind, position_value, position_include_matter,
    created_at, series, series_index, owner_content)
VALUES (:id, :title, :author, :format, :source_name, :content_hash, :page_count, :char_count,
    :chapters, :pages, :position_char_offset, :position_kind, :position_value,
    :position_include_matter, :created_at, :series, :series_index,
    coalesce((SELECT user_id FROM owners WHERE kind = 'book' AND resource_id = :id), 'local')
        || ':' || :content_hash)
"""

_INSERT_CHUNK = """
INSERT INTO chunks (id, book_id, ordinal, text, char_start, char_end, page_start, page_end,
    chapter, chapter_index)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_INSERT_VECTOR = """
INSERT OR REPLACE INTO chunk_vectors (seq, embedding)
SELECT seq, ? FROM chunks WHERE id = ? AND book_id = coalesce(?, book_id)
"""


def _insert_vectors(
    conn: sqlite3.Connection,
    chunk_ids: Sequence[str],
    vectors: Vectors,
    *,
    book_id: str | None = None,
) -> None:
    import numpy as np

    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    conn.executemany(
        _INSERT_VECTOR,
        ((matrix[i].tobytes(), chunk_id, book_id) for i, chunk_id in enumerate(chunk_ids)),
    )


def _ingest_error(book: Book, error: sqlite3.IntegrityError) -> IngestError:
    message = str(error)
    if "books.owner_content" in message or "books.id" in message:
        return IngestError(
            f"{book.source_name} is already in the library",
            code=IngestErrorCode.DUPLICATE,
            book_id=book.id,
        )
    return IngestError(
        f"{book.source_name} could not be stored: {message}",
        code=IngestErrorCode.CORRUPT,
        book_id=book.id,
    )
