"""The part of the SQL libraries that SQLite and PostgreSQL share: book rows, their text,
chapters and pages, reading positions, chapter recaps, lexicons, reading chunks back, and the
hybrid search around each backend's candidates.

``SqlLibraryCore`` implements ``BookRepository`` and ``ChunkIndex`` once, with statements written
with ``?`` marks; a backend (``SqliteLibrary``, ``PostgresLibrary``) gives its ``Dialect`` and
its hooks: ``_reading`` and ``_rows_on`` (a connection to read on, rows read by column name),
``_write`` (one statement in its own transaction), ``_transaction`` (several statements, all or
nothing), ``_insert_vectors``, ``_is_duplicate``, and the search candidates ``_lexical`` (FTS5
and BM25, or ``tsvector``) and ``_nearest`` (vectors as blobs, or pgvector). Both candidate lists
are fused with the domain's ``reciprocal_rank_fusion``.

Invariants: ``add`` stores a book, its text, chunks (and the vectors and lexicon when given) in one
transaction: all or nothing; ``replace_text`` swaps a stored book's row, text, chunks and lexicon
for a new edition's the same way (its vectors, sentence vectors and recaps go, its conversations
stay). A missing book is ``BookError(NOT_FOUND)``; a book already in the owner's library is
``IngestError(DUPLICATE)``. Sentence vectors are kept as float16 blobs with their width, read back
as float32 in that width (one of another embedder is the caller's to skip).
``search`` never returns text at or past ``max_char_offset``: both candidate queries and the fetch
of the returned rows filter ``char_start`` to ``[min_char_offset, max_char_offset)`` in SQL, and a
chunk straddling the limit is cut there (``Chunk.cut_at``).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from folio.adapters.storage.book_codec import (
    CHUNK_COLUMNS,
    book_from_row,
    book_row,
    chunk_from_row,
    chunk_row,
    position_time,
)
from folio.adapters.storage.sql.dialect import Dialect
from folio.domain.books import Book, Chunk, ReadingPosition, StoredSentences
from folio.domain.errors import BookError, BookErrorCode, IngestError, IngestErrorCode
from folio.domain.lexicon import LEXICON_VERSION, Lexicon
from folio.domain.search import RankedChunk, reciprocal_rank_fusion

if TYPE_CHECKING:  # numpy is imported where vectors are used: listing books never loads it
    import numpy as np
    import numpy.typing as npt

    from folio.domain.ports import Vectors

NO_LIMIT = 2**62  # an offset past any book: SQL needs a number where the domain says ``None``

BOOK_COLUMNS = (
    "id, title, author, format, source_name, content_hash, page_count, char_count, chapters,"
    " pages, position_char_offset, position_kind, position_value, position_include_matter,"
    " created_at, series, series_index, position_source, position_set_at"
)
_BOOK_FIELDS = [c.strip() for c in BOOK_COLUMNS.split(",")]


@dataclass(frozen=True, slots=True)
class _Sql:
    insert_book: str
    insert_text: str
    insert_chunk: str
    replace_book: str
    replace_text: str
    delete_chunks: str
    delete_recaps: str
    delete_lexicon: str
    save_lexicon: str
    book_exists: str
    get_book: str
    list_books: str
    book_by_hash: str
    delete_book: str
    text_from: str
    text_between: str
    set_position: str
    update_details: str
    set_series: str
    chapter_recap: str
    save_chapter_recap: str
    lexicon: str
    chunks_without_vectors: str
    vector_coverage: str
    save_sentence_vectors: str
    chunks_without_sentence_vectors: str
    chunks_between: str


@cache
def _statements(dialect: Dialect) -> _Sql:
    sql = dialect.sql
    select_book = f"SELECT {BOOK_COLUMNS} FROM books"
    update_book = "UPDATE books SET {} WHERE id = ?"
    # owner_content: the book's identity, unique per owner: the owner recorded for the book
    # (ownership is recorded before the book is stored), else the local user.
    return _Sql(
        insert_book=sql(
            f"INSERT INTO books ({BOOK_COLUMNS}, owner_content)"
            f" VALUES ({', '.join('?' * len(_BOOK_FIELDS))},"
            " coalesce((SELECT user_id FROM owners WHERE kind = 'book' AND resource_id = ?),"
            " 'local') || ':' || ?)"
        ),
        insert_text=sql("INSERT INTO book_texts (book_id, text) VALUES (?, ?)"),
        insert_chunk=sql(
            "INSERT INTO chunks (id, book_id, ordinal, text, char_start, char_end, page_start,"
            " page_end, chapter, chapter_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ),
        replace_book=sql(
            update_book.format(
                ", ".join(f"{f} = ?" for f in _BOOK_FIELDS[1:])
                + ", owner_content = coalesce((SELECT user_id FROM owners WHERE kind = 'book'"
                " AND resource_id = ?), 'local') || ':' || ?"
            )
        ),
        replace_text=sql("UPDATE book_texts SET text = ? WHERE book_id = ?"),
        delete_chunks=sql("DELETE FROM chunks WHERE book_id = ?"),
        delete_recaps=sql("DELETE FROM chapter_recaps WHERE book_id = ?"),
        delete_lexicon=sql("DELETE FROM book_lexicons WHERE book_id = ?"),
        save_lexicon=sql(
            "INSERT INTO book_lexicons (book_id, version, data) VALUES (?, ?, ?)"
            " ON CONFLICT (book_id) DO UPDATE SET version = excluded.version, data = excluded.data"
        ),
        book_exists=sql("SELECT 1 FROM books WHERE id = ?"),
        get_book=sql(f"{select_book} WHERE id = ?"),
        list_books=sql(f"{select_book} ORDER BY {dialect.title_order}, id"),
        book_by_hash=sql(f"{select_book} WHERE content_hash = ?"),
        delete_book=sql("DELETE FROM books WHERE id = ?"),
        # substr's length is a 32-bit int in SQLite: "to the end" is the two-argument form.
        text_from=sql("SELECT substr(text, ?) AS text FROM book_texts WHERE book_id = ?"),
        text_between=sql("SELECT substr(text, ?, ?) AS text FROM book_texts WHERE book_id = ?"),
        set_position=sql(
            update_book.format(
                "position_char_offset = ?, position_kind = ?, position_value = ?,"
                " position_include_matter = ?, position_source = ?, position_set_at = ?"
            )
        ),
        update_details=sql(update_book.format("title = ?, author = ?")),
        set_series=sql(update_book.format("series = ?, series_index = ?")),
        chapter_recap=sql(
            "SELECT text FROM chapter_recaps WHERE book_id = ? AND chapter_index = ?"
        ),
        save_chapter_recap=sql(
            "INSERT INTO chapter_recaps (book_id, chapter_index, text, model, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (book_id, chapter_index) DO UPDATE SET"
            " text = excluded.text, model = excluded.model, created_at = excluded.created_at"
        ),
        lexicon=sql("SELECT data FROM book_lexicons WHERE book_id = ? AND version = ?"),
        chunks_without_vectors=sql(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE book_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM chunk_vectors AS v WHERE v.seq = chunks.seq)"
            " ORDER BY char_start, seq"
        ),
        vector_coverage=sql(
            "SELECT count(*) AS total, count(v.seq) AS embedded FROM chunks AS c"
            " LEFT JOIN chunk_vectors AS v ON v.seq = c.seq WHERE c.book_id = ?"
        ),
        # an id that is not one of the book's chunks selects no row: it is skipped
        save_sentence_vectors=sql(
            "INSERT INTO chunk_sentence_vectors (seq, dimensions, vectors)"
            " SELECT seq, ?, ? FROM chunks WHERE id = ? AND book_id = ? ON CONFLICT (seq)"
            " DO UPDATE SET dimensions = excluded.dimensions, vectors = excluded.vectors"
        ),
        chunks_without_sentence_vectors=sql(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE book_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM chunk_sentence_vectors AS v WHERE v.seq = chunks.seq)"
            " ORDER BY char_start, seq"
        ),
        chunks_between=sql(
            f"SELECT {CHUNK_COLUMNS} FROM chunks"
            " WHERE book_id = ? AND char_start < ? AND char_end > ? ORDER BY char_start"
        ),
    )


def not_found(book_id: str) -> BookError:
    return BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id)


class SqlLibraryCore:
    """The shared methods; see the module's docstring for the hooks a backend gives."""

    dialect: Dialect
    integrity_error: type[Exception]  # the driver's constraint violation

    # --- hooks -----------------------------------------------------------------------------------
    def _reading(self) -> AbstractContextManager[Any]:
        """A connection to read on (one for a whole search)."""
        raise NotImplementedError

    def _rows_on(self, conn: Any, sql: str, params: Sequence[Any]) -> builtins.list[Any]:
        """The rows of a query on ``conn``, each read by column name."""
        raise NotImplementedError

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def _transaction(self) -> AbstractContextManager[Any]:
        """Statements run all or nothing: what it yields has ``execute`` and ``executemany``
        (SQLite's connection, a psycopg cursor)."""
        raise NotImplementedError

    def _insert_vectors(
        self, tx: Any, chunk_ids: Sequence[str], vectors: Vectors, book_id: str
    ) -> None:
        raise NotImplementedError

    def _is_duplicate(self, error: Exception) -> bool:
        """Whether a refused ``add`` met a book already stored (its id or its identity)."""
        raise NotImplementedError

    def _forget(self, book_id: str) -> None:
        """Drop what the backend keeps of a deleted book in this process."""

    def _lexical(
        self, conn: Any, book_id: str, query: str, start: int, limit: int
    ) -> builtins.list[int]:
        """Seqs of the best full-text matches among the chunks starting in ``[start, limit)``."""
        raise NotImplementedError

    def _nearest(
        self,
        conn: Any,
        book_id: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32],
        start: int,
        limit: int,
    ) -> dict[int, float]:
        """Cosine similarity of the closest chunks starting in ``[start, limit)``, best first."""
        raise NotImplementedError

    def _rows(self, sql: str, params: Sequence[Any]) -> builtins.list[Any]:
        with self._reading() as conn:
            return self._rows_on(conn, sql, params)

    # --- BookRepository --------------------------------------------------------------------------
    @property
    def _sql(self) -> _Sql:
        return _statements(self.dialect)

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
        sql = self._sql
        row = book_row(book)
        try:
            with self._transaction() as tx:
                tx.execute(
                    sql.insert_book, (*(row[f] for f in _BOOK_FIELDS), book.id, book.content_hash)
                )
                tx.execute(sql.insert_text, (book.id, text))
                tx.executemany(sql.insert_chunk, [chunk_row(c) for c in chunks])
                if vectors is not None:
                    self._insert_vectors(tx, [c.id for c in chunks], vectors, book.id)
                if lexicon is not None:
                    tx.execute(sql.save_lexicon, (book.id, LEXICON_VERSION, lexicon.to_json()))
        except self.integrity_error as e:
            if self._is_duplicate(e):
                raise IngestError(
                    f"{book.source_name} is already in the library",
                    code=IngestErrorCode.DUPLICATE,
                    book_id=book.id,
                ) from e
            raise IngestError(
                f"{book.source_name} could not be stored: {str(e).strip()}",
                code=IngestErrorCode.CORRUPT,
                book_id=book.id,
            ) from e

    def replace_text(
        self, book: Book, text: str, chunks: Sequence[Chunk], *, lexicon: Lexicon | None = None
    ) -> None:
        sql = self._sql
        row = book_row(book)
        try:
            with self._transaction() as tx:
                values = (*(row[f] for f in _BOOK_FIELDS[1:]), book.id, book.content_hash, book.id)
                if not tx.execute(sql.replace_book, values).rowcount:
                    raise not_found(book.id)
                tx.execute(sql.replace_text, (text, book.id))
                tx.execute(sql.delete_chunks, (book.id,))  # their vectors and FTS rows follow
                tx.executemany(sql.insert_chunk, [chunk_row(c) for c in chunks])
                tx.execute(sql.delete_recaps, (book.id,))
                tx.execute(sql.delete_lexicon, (book.id,))
                if lexicon is not None:
                    tx.execute(sql.save_lexicon, (book.id, LEXICON_VERSION, lexicon.to_json()))
        except self.integrity_error as e:
            duplicate = self._is_duplicate(e)
            raise IngestError(
                f"{book.source_name} is already in the library"
                if duplicate
                else f"{book.source_name} could not be stored: {str(e).strip()}",
                code=IngestErrorCode.DUPLICATE if duplicate else IngestErrorCode.CORRUPT,
                book_id=book.id,
            ) from e
        finally:
            self._forget(book.id)

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} vectors")
        with self._transaction() as tx:
            if tx.execute(self._sql.book_exists, (book_id,)).fetchone() is None:
                raise not_found(book_id)
            self._insert_vectors(tx, chunk_ids, vectors, book_id)

    def add_sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str], vectors: Sequence[Vectors]
    ) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} matrices")
        rows = [
            (*_half_floats(m), chunk_id, book_id)
            for chunk_id, m in zip(chunk_ids, vectors, strict=True)
        ]
        with self._transaction() as tx:
            if tx.execute(self._sql.book_exists, (book_id,)).fetchone() is None:
                raise not_found(book_id)
            tx.executemany(self._sql.save_sentence_vectors, rows)

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]:
        if not chunk_ids:
            return {}
        sql = self.dialect.sql(
            "SELECT c.id, c.char_end, v.dimensions, v.vectors FROM chunks AS c"
            " JOIN chunk_sentence_vectors AS v ON v.seq = c.seq"
            f" WHERE c.book_id = ? AND c.id IN ({', '.join('?' * len(chunk_ids))})"
        )
        return {
            str(r["id"]): StoredSentences(
                int(r["char_end"]), _single_floats(r["vectors"], int(r["dimensions"]))
            )
            for r in self._rows(sql, (book_id, *chunk_ids))
        }

    def chunks_without_sentence_vectors(self, book_id: str) -> builtins.list[Chunk]:
        return self._chunks(self._sql.chunks_without_sentence_vectors, (book_id,))

    def get(self, book_id: str) -> Book:
        rows = self._rows(self._sql.get_book, (book_id,))
        if not rows:
            raise not_found(book_id)
        return book_from_row(rows[0])

    def list(self) -> builtins.list[Book]:
        return [book_from_row(r) for r in self._rows(self._sql.list_books, ())]

    def find_by_hash(self, content_hash: str) -> Book | None:
        rows = self._rows(self._sql.book_by_hash, (content_hash,))
        return book_from_row(rows[0]) if rows else None

    def delete(self, book_id: str) -> None:
        deleted = self._write(self._sql.delete_book, (book_id,))
        self._forget(book_id)
        if not deleted:
            raise not_found(book_id)

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        if start < 0 or (end is not None and end < 0):
            return self.get_text(book_id)[start:end]
        if end is None:
            rows = self._rows(self._sql.text_from, (start + 1, book_id))
        else:
            rows = self._rows(self._sql.text_between, (start + 1, max(0, end - start), book_id))
        if not rows:
            raise not_found(book_id)
        return str(rows[0]["text"])

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        return self._update(
            self._sql.set_position,
            book_id,
            position.char_offset,
            position.kind.value,
            position.value,
            int(position.include_matter),
            position.source,
            position_time(position),
        )

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        return self._update(self._sql.update_details, book_id, title, author)

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        return self._update(self._sql.set_series, book_id, series, series_index)

    def _update(self, sql: str, book_id: str, *values: Any) -> Book:
        if not self._write(sql, (*values, book_id)):
            raise not_found(book_id)
        return self.get(book_id)

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        rows = self._rows(self._sql.chapter_recap, (book_id, chapter_index))
        return str(rows[0]["text"]) if rows else None

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        self.get(book_id)
        now = datetime.now(UTC).isoformat()
        self._write(self._sql.save_chapter_recap, (book_id, chapter_index, text, model, now))

    def lexicon(self, book_id: str) -> Lexicon | None:
        rows = self._rows(self._sql.lexicon, (book_id, LEXICON_VERSION))
        return Lexicon.from_json(str(rows[0]["data"])) if rows else None

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        self.get(book_id)
        self._write(self._sql.save_lexicon, (book_id, LEXICON_VERSION, lexicon.to_json()))

    # --- ChunkIndex: the candidates of a search are each backend's (``_lexical``, ``_nearest``) ---
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
        with self._reading() as conn:
            lexical = self._lexical(conn, book_id, query, start, limit)
            similarity: dict[int, float] = {}
            if query_vector is not None:
                similarity = self._nearest(conn, book_id, query_vector, start, limit)
            lex_rank = {seq: r for r, seq in enumerate(lexical, start=1)}
            vec_rank = {seq: r for r, seq in enumerate(similarity, start=1)}
            fused = reciprocal_rank_fusion(lex_rank, vec_rank)
            best = sorted(fused, key=lambda s: (-fused[s], s))[:k]
            found = self._chunks_by_seq(conn, book_id, best, start, limit) if best else []
        rows = {int(r["seq"]): chunk_from_row(r) for r in found}
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

    def _chunks_by_seq(
        self, conn: Any, book_id: str, seqs: Sequence[int], start: int, limit: int
    ) -> builtins.list[Any]:
        sql = self.dialect.sql(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE seq IN ({', '.join('?' * len(seqs))})"
            " AND book_id = ? AND char_start < ? AND char_start >= ?"
        )
        return self._rows_on(conn, sql, (*seqs, book_id, limit, start))

    def chunks_without_vectors(self, book_id: str) -> builtins.list[Chunk]:
        return self._chunks(self._sql.chunks_without_vectors, (book_id,))

    def vector_coverage(self, book_id: str) -> tuple[int, int]:
        row = self._rows(self._sql.vector_coverage, (book_id,))[0]
        return int(row["embedded"]), int(row["total"])

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> builtins.list[Chunk]:
        return self._chunks(self._sql.chunks_between, (book_id, char_end, char_start))

    def _chunks(self, sql: str, params: Sequence[Any]) -> builtins.list[Chunk]:
        return [chunk_from_row(r) for r in self._rows(sql, params)]


# --- sentence vectors: a matrix kept as its width and its float16 rows (half the room) ----------
def _half_floats(vectors: Vectors) -> tuple[int, bytes]:
    """A matrix (one row per sentence) as its width and its rows in little-endian float16."""
    import numpy as np

    matrix = np.asarray(vectors, dtype="<f2")
    if matrix.ndim != 2:
        raise ValueError(f"sentence vectors are a matrix, not an array of shape {matrix.shape}")
    return matrix.shape[1], matrix.tobytes()


def _single_floats(data: bytes, dimensions: int) -> Vectors:
    """The matrix ``_half_floats`` kept, as float32 in its own width (whole rows only)."""
    import numpy as np

    rows = len(data) // (2 * dimensions) if dimensions else 0
    half = np.frombuffer(data, dtype="<f2", count=rows * dimensions)
    return half.reshape(rows, dimensions).astype(np.float32)
