"""The ingest use case: a file becomes a book in the library (parse, chunk, embed, store).

Invariant: nothing is stored unless every step succeeded: the book, its text, chunks and vectors are
handed to ``BookRepository.add`` once, at the end, and that call is atomic. A file whose bytes are
already in the library is refused with ``IngestError(DUPLICATE)`` before any parsing.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from folio.app.chunking import TokenCounter, chunk_book
from folio.domain.books import Book, BookFormat, Chunk, ParsedBook
from folio.domain.errors import IngestError, IngestErrorCode
from folio.domain.ports import BookRepository, Embedder, Vectors

ParseFunction = Callable[[Path], tuple[ParsedBook, BookFormat]]
STAGES = ("parse", "chunk", "embed", "store")
EMBED_BATCH = 64


class IngestProgress(Protocol):
    """What the ingest reports while it works (the CLI draws it as a progress bar)."""

    def stage(self, name: str, total: int | None = None) -> None:
        """A stage starts: one of ``STAGES``; ``total`` counts its steps when known."""
        ...

    def advance(self, n: int = 1) -> None:
        """``n`` more steps of the current stage are done."""
        ...


class _NoProgress:
    def stage(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


@dataclass(frozen=True, slots=True)
class IngestResult:
    book: Book
    chunk_count: int
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage, keys = STAGES


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes, hex. Raises ``IngestError(NOT_FOUND)`` when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as e:
        raise IngestError(
            f"{path} cannot be read: {e.strerror or e}",
            code=IngestErrorCode.NOT_FOUND,
            path=str(path),
        ) from e
    return digest.hexdigest()


class IngestBook:
    """Adds a book file to the library.

    Args:
        parse: the parser dispatch (``folio.adapters.parsers.parse_book``), injected by bootstrap.
        embedder: turns chunk texts into vectors.
        books: where the book is stored.
        clock: the time stamped on the book.
        new_id: the book id factory (uuid4 hex).
        count_tokens: optional token counter of the embedding model, so that no chunk exceeds
            ``max_tokens`` (see ``chunk_book``).
        batch_size: chunks embedded per call (progress is reported per batch).
    """

    def __init__(
        self,
        *,
        parse: ParseFunction,
        embedder: Embedder,
        books: BookRepository,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        count_tokens: TokenCounter | None = None,
        max_tokens: int = 256,
        batch_size: int = EMBED_BATCH,
    ) -> None:
        self._parse = parse
        self._embedder = embedder
        self._books = books
        self._clock = clock
        self._new_id = new_id
        self._count_tokens = count_tokens
        self._max_tokens = max_tokens
        self._batch_size = batch_size

    def execute(
        self,
        path: Path,
        *,
        title: str | None = None,
        author: str | None = None,
        progress: IngestProgress | None = None,
    ) -> IngestResult:
        """Parse, chunk, embed and store ``path``. Raises ``IngestError`` (NOT_FOUND, UNSUPPORTED,
        CORRUPT, EMPTY, DUPLICATE with ``details["book_id"]``); stores nothing on any failure."""
        report = progress or _NoProgress()
        timings: dict[str, float] = {}
        content_hash = file_hash(path)
        self._refuse_duplicate(path, content_hash)
        with _timed(timings, "parse"):
            report.stage("parse", None)
            parsed, fmt = self._parse(path)
        book = self._book(path, parsed, fmt, content_hash, title=title, author=author)
        with _timed(timings, "chunk"):
            report.stage("chunk", None)
            chunks = chunk_book(
                book.id, parsed, count_tokens=self._count_tokens, max_tokens=self._max_tokens
            )
        if not chunks:
            raise IngestError(
                f"{path.name} contains no readable text", code=IngestErrorCode.EMPTY, path=str(path)
            )
        with _timed(timings, "embed"):
            vectors = self._embed(chunks, report)
        with _timed(timings, "store"):
            report.stage("store", 1)
            self._books.add(book, parsed.text, chunks, vectors)
            report.advance(1)
        return IngestResult(book=book, chunk_count=len(chunks), timings=timings)

    def _refuse_duplicate(self, path: Path, content_hash: str) -> None:
        existing = self._books.find_by_hash(content_hash)
        if existing is not None:
            raise IngestError(
                f"{path.name} is already in the library as {existing.title!r} ({existing.id[:8]})",
                code=IngestErrorCode.DUPLICATE,
                book_id=existing.id,
            )

    def _book(
        self,
        path: Path,
        parsed: ParsedBook,
        fmt: BookFormat,
        content_hash: str,
        *,
        title: str | None,
        author: str | None,
    ) -> Book:
        return Book(
            id=self._new_id(),
            title=_first_text(title, parsed.title) or path.stem,
            author=_first_text(author, parsed.author),
            format=fmt,
            source_name=path.name,
            content_hash=content_hash,
            page_count=len(parsed.pages),
            char_count=len(parsed.text),
            chapters=parsed.chapters,
            pages=parsed.pages,
            created_at=self._clock(),
        )

    def _embed(self, chunks: list[Chunk], report: IngestProgress) -> Vectors:
        report.stage("embed", len(chunks))
        parts: list[Vectors] = []
        for i in range(0, len(chunks), self._batch_size):
            batch = [c.text for c in chunks[i : i + self._batch_size]]
            parts.append(np.asarray(self._embedder.embed(batch), dtype=np.float32))
            report.advance(len(batch))
        return np.concatenate(parts, axis=0)


def _first_text(*candidates: str | None) -> str | None:
    return next((c.strip() for c in candidates if c and c.strip()), None)


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = time.perf_counter() - start
