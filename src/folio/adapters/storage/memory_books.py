"""In-memory library: the fake of ``BookRepository`` and ``ChunkIndex`` for tests and demos.

Search fuses a simple term-overlap ranking and cosine similarity with reciprocal rank fusion, and keeps
the same reading-position contract as the SQLite index: nothing returned extends past the limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from folio.domain.books import Book, Chunk, ReadingPosition
from folio.domain.errors import BookError, BookErrorCode, IngestError, IngestErrorCode
from folio.domain.ports import Vectors
from folio.domain.search import RankedChunk

_WORD = re.compile(r"\w+")
RRF_K = 60


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def cut_chunk(chunk: Chunk, max_char_offset: int | None) -> Chunk | None:
    """The chunk limited to text before ``max_char_offset``; None when nothing of it is before."""
    if max_char_offset is None or chunk.char_end <= max_char_offset:
        return chunk
    if chunk.char_start >= max_char_offset:
        return None
    keep = max_char_offset - chunk.char_start
    return replace(chunk, text=chunk.text[:keep], char_end=max_char_offset)


class InMemoryLibrary:
    """Implements both ``BookRepository`` and ``ChunkIndex``."""

    def __init__(self) -> None:
        self.books: dict[str, Book] = {}
        self.texts: dict[str, str] = {}
        self.chunks: dict[str, list[Chunk]] = {}
        self.vectors: dict[str, Vectors] = {}

    # --- BookRepository ----------------------------------------------------------------------------
    def add(self, book: Book, text: str, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        if book.id in self.books or self.find_by_hash(book.content_hash):
            raise IngestError(f"{book.source_name} is already in the library",
                              code=IngestErrorCode.DUPLICATE)
        if len(chunks) != len(vectors):
            raise ValueError("one vector per chunk")
        self.books[book.id] = book
        self.texts[book.id] = text
        self.chunks[book.id] = list(chunks)
        self.vectors[book.id] = np.asarray(vectors, dtype=np.float32)

    def get(self, book_id: str) -> Book:
        try:
            return self.books[book_id]
        except KeyError:
            raise BookError(f"No book {book_id!r}", code=BookErrorCode.NOT_FOUND) from None

    def list(self) -> list[Book]:
        return sorted(self.books.values(), key=lambda b: b.title.lower())

    def find_by_hash(self, content_hash: str) -> Book | None:
        return next((b for b in self.books.values() if b.content_hash == content_hash), None)

    def delete(self, book_id: str) -> None:
        self.get(book_id)
        for store in (self.books, self.texts, self.chunks, self.vectors):
            store.pop(book_id, None)

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str:
        self.get(book_id)
        return self.texts[book_id][start:end]

    def set_position(self, book_id: str, position: ReadingPosition) -> Book:
        book = self.get(book_id).with_position(position)
        self.books[book_id] = book
        return book

    # --- ChunkIndex --------------------------------------------------------------------------------
    def search(
        self,
        book_id: str,
        query: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32] | None,
        *,
        k: int = 5,
        max_char_offset: int | None = None,
    ) -> list[RankedChunk]:
        chunks = self.chunks.get(book_id, [])
        visible = [i for i, c in enumerate(chunks) if cut_chunk(c, max_char_offset) is not None]
        q = _terms(query)
        lexical = sorted(
            (i for i in visible if q & _terms(chunks[i].text)),
            key=lambda i: -len(q & _terms(chunks[i].text)),
        )
        vector_order: list[int] = []
        if query_vector is not None and visible:
            sims = self.vectors[book_id][visible] @ np.asarray(query_vector, dtype=np.float32)
            vector_order = [visible[j] for j in np.argsort(-sims)]
        lex_rank = {i: r + 1 for r, i in enumerate(lexical)}
        vec_rank = {i: r + 1 for r, i in enumerate(vector_order)}
        fused = {
            i: sum(1.0 / (RRF_K + ranks[i]) for ranks in (lex_rank, vec_rank) if i in ranks)
            for i in set(lex_rank) | set(vec_rank)
        }
        best = sorted(fused, key=lambda i: -fused[i])[:k]
        out = []
        for i in best:
            cut = cut_chunk(chunks[i], max_char_offset)
            assert cut is not None
            out.append(RankedChunk(cut, fused[i], lex_rank.get(i), vec_rank.get(i)))
        return out

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> list[Chunk]:
        return [
            c for c in self.chunks.get(book_id, [])
            if c.char_end > char_start and c.char_start < char_end
        ]
