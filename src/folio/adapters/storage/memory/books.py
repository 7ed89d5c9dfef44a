"""In-memory library: the fake of ``BookRepository`` and ``ChunkIndex`` for tests and demos.

Search fuses a term-overlap ranking and cosine similarity with reciprocal rank fusion, and keeps the
same reading-position contract as the SQLite index (both run the same contract tests): nothing
returned extends past the limit, and a straddling chunk is cut there.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from folio.domain.books import Book, Chunk, ReadingPosition, StoredSentences
from folio.domain.errors import BookError, BookErrorCode, IngestError, IngestErrorCode
from folio.domain.lexicon import Lexicon
from folio.domain.ports import Vectors
from folio.domain.search import RankedChunk, query_terms, reciprocal_rank_fusion

_WORD = re.compile(r"\w+")


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class InMemoryLibrary:
    """Implements both ``BookRepository`` and ``ChunkIndex``."""

    def __init__(
        self, *, candidates: int = 50, owner_of: Callable[[str], str] | None = None
    ) -> None:
        # owner_of(book_id): a book's owner, when ownership is recorded (as the owners table is
        # for SQL): content is unique per owner.
        self._owner_of = owner_of or (lambda book_id: "")
        self.books: dict[str, Book] = {}
        self.texts: dict[str, str] = {}
        self.chunks: dict[str, builtins.list[Chunk]] = {}
        self.vectors: dict[str, dict[str, npt.NDArray[np.float32]]] = {}  # book -> chunk id -> row
        # book -> chunk id -> its sentences' vectors, kept at float16 as the SQL stores keep them
        self.sentence_matrices: dict[str, dict[str, npt.NDArray[np.float16]]] = {}
        self.recaps: dict[tuple[str, int], str] = {}  # (book, chapter index) -> a model's recap
        self.lexicons: dict[str, str] = {}  # book -> its lexicon's JSON (as the SQL stores keep it)
        self._candidates = candidates

    # --- BookRepository ----------------------------------------------------------------------
    def add(
        self,
        book: Book,
        text: str,
        chunks: Sequence[Chunk],
        vectors: Vectors | None = None,
        *,
        lexicon: Lexicon | None = None,
    ) -> None:
        owner = self._owner_of(book.id)
        if book.id in self.books or any(
            b.content_hash == book.content_hash and self._owner_of(b.id) == owner
            for b in self.books.values()
        ):
            raise IngestError(
                f"{book.source_name} is already in the library",
                code=IngestErrorCode.DUPLICATE,
                book_id=book.id,
            )
        if vectors is not None and len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        self.books[book.id] = book
        self.texts[book.id] = text
        self.chunks[book.id] = sorted(chunks, key=lambda c: c.char_start)
        self.vectors[book.id] = {}
        self.sentence_matrices[book.id] = {}
        if vectors is not None:
            self.add_vectors(book.id, [c.id for c in chunks], vectors)
        if lexicon is not None:
            self.lexicons[book.id] = lexicon.to_json()

    def replace_text(
        self, book: Book, text: str, chunks: Sequence[Chunk], *, lexicon: Lexicon | None = None
    ) -> None:
        self.get(book.id)
        owner = self._owner_of(book.id)
        if any(
            b.id != book.id and (b.content_hash, self._owner_of(b.id)) == (book.content_hash, owner)
            for b in self.books.values()
        ):
            raise IngestError(
                f"{book.source_name} is already in the library",
                code=IngestErrorCode.DUPLICATE,
                book_id=book.id,
            )
        self.books[book.id] = book
        self.texts[book.id] = text
        self.chunks[book.id] = sorted(chunks, key=lambda c: c.char_start)
        self.vectors[book.id] = {}
        self.sentence_matrices[book.id] = {}
        self.recaps = {key: recap for key, recap in self.recaps.items() if key[0] != book.id}
        self.lexicons.pop(book.id, None)
        if lexicon is not None:
            self.lexicons[book.id] = lexicon.to_json()

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} vectors")
        self.get(book_id)
        known = {c.id for c in self.chunks[book_id]}
        rows = np.asarray(vectors, dtype=np.float32)
        for i, chunk_id in enumerate(chunk_ids):
            if chunk_id in known:
                self.vectors[book_id][chunk_id] = rows[i]

    def chunks_without_vectors(self, book_id: str) -> builtins.list[Chunk]:
        have = self.vectors.get(book_id, {})
        return [c for c in self.chunks.get(book_id, []) if c.id not in have]

    def add_sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str], vectors: Sequence[Vectors]
    ) -> None:
        if len(chunk_ids) != len(vectors):
            raise ValueError(f"{len(chunk_ids)} chunk ids but {len(vectors)} matrices")
        halves = [np.array(matrix, dtype=np.float16) for matrix in vectors]
        if any(half.ndim != 2 for half in halves):
            raise ValueError("sentence vectors are matrices, one row per sentence")
        self.get(book_id)
        known = {c.id for c in self.chunks[book_id]}
        for chunk_id, half in zip(chunk_ids, halves, strict=True):
            if chunk_id in known:
                self.sentence_matrices[book_id][chunk_id] = half

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]:
        have = self.sentence_matrices.get(book_id, {})
        ends = {c.id: c.char_end for c in self.chunks.get(book_id, [])}
        return {
            i: StoredSentences(ends[i], have[i].astype(np.float32)) for i in chunk_ids if i in have
        }

    def chunks_without_sentence_vectors(self, book_id: str) -> builtins.list[Chunk]:
        have = self.sentence_matrices.get(book_id, {})
        return [c for c in self.chunks.get(book_id, []) if c.id not in have]

    def vector_coverage(self, book_id: str) -> tuple[int, int]:
        return len(self.vectors.get(book_id, {})), len(self.chunks.get(book_id, []))

    def get(self, book_id: str) -> Book:
        try:
            return self.books[book_id]
        except KeyError:
            raise BookError(
                f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND, book_id=book_id
            ) from None

    def list(self) -> builtins.list[Book]:
        return sorted(self.books.values(), key=lambda b: (b.title.casefold(), b.id))

    def find_by_hash(self, content_hash: str) -> Book | None:
        return next((b for b in self.books.values() if b.content_hash == content_hash), None)

    def delete(self, book_id: str) -> None:
        self.get(book_id)
        for store in (self.books, self.texts, self.chunks, self.vectors, self.lexicons):
            store.pop(book_id, None)
        self.sentence_matrices.pop(book_id, None)
        self.recaps = {key: recap for key, recap in self.recaps.items() if key[0] != book_id}

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        self.get(book_id)
        return self.texts[book_id][start:end]

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        book = self.get(book_id).with_position(position)
        self.books[book_id] = book
        return book

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        book = replace(self.get(book_id), title=title, author=author)
        self.books[book_id] = book
        return book

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        book = replace(self.get(book_id), series=series, series_index=series_index)
        self.books[book_id] = book
        return book

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        return self.recaps.get((book_id, chapter_index))

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        self.get(book_id)
        self.recaps[(book_id, chapter_index)] = text

    def lexicon(self, book_id: str) -> Lexicon | None:
        stored = self.lexicons.get(book_id)
        return None if stored is None else Lexicon.from_json(stored)

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        self.get(book_id)
        self.lexicons[book_id] = lexicon.to_json()

    # --- ChunkIndex --------------------------------------------------------------------------
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
        chunks = self.chunks.get(book_id, [])
        visible = [
            i
            for i, c in enumerate(chunks)
            if c.char_start >= min_char_offset and c.cut_at(max_char_offset) is not None
        ]
        lexical = self._lexical(chunks, visible, query)
        sims: dict[int, float] = {}
        have = self.vectors.get(book_id, {})
        embedded = [i for i in visible if chunks[i].id in have]
        if query_vector is not None and embedded:
            matrix = np.stack([have[chunks[i].id] for i in embedded])
            scores = matrix @ np.asarray(query_vector, dtype=np.float32)
            order = np.argsort(-scores, kind="stable")[: self._candidates]
            sims = {embedded[j]: float(scores[j]) for j in order}
        lex_rank = {i: r for r, i in enumerate(lexical, start=1)}
        vec_rank = {i: r for r, i in enumerate(sims, start=1)}
        fused = reciprocal_rank_fusion(lex_rank, vec_rank)
        best = sorted(fused, key=lambda i: (-fused[i], i))[:k]
        out = []
        for i in best:
            cut = chunks[i].cut_at(max_char_offset)
            if cut is not None:
                out.append(
                    RankedChunk(cut, fused[i], lex_rank.get(i), vec_rank.get(i), sims.get(i))
                )
        return out

    def _lexical(
        self, chunks: Sequence[Chunk], visible: Sequence[int], query: str
    ) -> builtins.list[int]:
        terms = set(query_terms(query))
        overlap = {i: len(terms & _terms(chunks[i].text)) for i in visible}
        matching = [i for i in visible if overlap[i]]
        return sorted(matching, key=lambda i: -overlap[i])[: self._candidates]

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> builtins.list[Chunk]:
        return [
            c
            for c in self.chunks.get(book_id, [])
            if c.char_end > char_start and c.char_start < char_end
        ]
