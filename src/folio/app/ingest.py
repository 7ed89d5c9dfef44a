"""The ingest use case: a file becomes a book in the library (parse, chunk, store, embed).

Invariants:
- the book, its text, chunks and lexicon (the names it uses: ``folio.domain.lexicon``) are stored
  in one atomic ``BookRepository.add`` once parsing and chunking succeeded, or not at all; from
  then on the book is searchable by keywords;
- vectors follow batch by batch (``add_vectors``, each batch atomic), so search improves while the
  reader starts; an interrupted import leaves a whole book whose missing vectors the next import of
  the same file fills in (nothing is parsed twice, nothing is lost);
- then the vectors of each passage's sentences (``split_sentences``), batch by batch the same way
  (``add_sentence_vectors``): the offline policy ranks a search's passages by the sentence that
  answers (``folio.agent.offline.ranking``) without embedding them at the turn;
- then each story chapter's most central sentences (``folio.domain.summary``: the recap of the
  story so far) are ranked once, with the same embedder, and kept with the book; a book without
  them (imported before, or interrupted) gets its recap ranked from the text read when asked;
- a file whose bytes are already in the library, fully embedded, is refused with
  ``IngestError(DUPLICATE)`` before any parsing;
- with a file store, the book is stored with its file, byte for byte, or not at all (the file is
  put once the book is stored; if that fails the book is removed again); adding a book's file
  again keeps it for a book imported before files were kept.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from folio.app.chunking import TokenCounter, chunk_book
from folio.domain.book_files import BookFileStore
from folio.domain.books import Book, BookFormat, Chunk, ParsedBook, ReadingPosition
from folio.domain.editions import CarriedPosition, carry_position
from folio.domain.errors import BookError, IngestError, IngestErrorCode
from folio.domain.lexicon import Lexicon
from folio.domain.ports import BookRepository, EditionRepository, Embedder, Vectors
from folio.domain.sentences import split_sentences
from folio.domain.series import series_fields
from folio.domain.summary import SUMMARY_INDEX, StorySummary

ParseFunction = Callable[[Path], tuple[ParsedBook, BookFormat]]
# Asked again for a position that named no place in the book: the reader's new answer, or None
# to give up (the file is then refused).
PositionRetry = Callable[[Book, BookError], str | None]
STAGES = ("parse", "chunk", "store", "embed", "sentences", "summarise")
EMBED_BATCH = 64
MAX_BOOK_BYTES = 100 * 1024 * 1024
MAX_BOOK_TITLE_CHARS = 300


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
    resumed: bool = False  # the book was stored by an earlier, interrupted import
    carried: CarriedPosition | None = None  # a new edition: how the reading position moved

    @property
    def searchable_after(self) -> float:
        """Seconds from the start until the book answered keyword searches."""
        return sum(self.timings.get(stage, 0.0) for stage in ("parse", "chunk", "store"))


def check_book_file(path: Path, *, max_bytes: int = MAX_BOOK_BYTES) -> None:
    """A book must be a regular file (not a FIFO, a device, or a link to one: reading those can
    hang or never end) of at most ``max_bytes``. Checked with ``stat`` before anything opens it.
    Raises ``IngestError`` (NOT_FOUND, UNSUPPORTED, TOO_LARGE)."""
    try:
        info = os.stat(path)  # follows symlinks: a link to /dev/zero is a device
    except FileNotFoundError as e:
        raise IngestError(
            f"{path} does not exist", code=IngestErrorCode.NOT_FOUND, path=str(path)
        ) from e
    except OSError as e:
        raise IngestError(
            f"{path} cannot be read: {e.strerror or e}",
            code=IngestErrorCode.NOT_FOUND,
            path=str(path),
        ) from e
    if stat.S_ISDIR(info.st_mode):
        raise IngestError(
            f"{path} is a directory, not a book file",
            code=IngestErrorCode.UNSUPPORTED,
            path=str(path),
        )
    if not stat.S_ISREG(info.st_mode):
        raise IngestError(
            f"{path} is not a regular file (a pipe, socket or device); folio reads book files only",
            code=IngestErrorCode.UNSUPPORTED,
            path=str(path),
        )
    if info.st_size > max_bytes:
        raise IngestError(
            f"{path.name} is {info.st_size / 1048576:.1f} MB; books may be at most"
            f" {max_bytes / 1048576:g} MB (setting max_book_mb, FOLIO_MAX_BOOK_MB)",
            code=IngestErrorCode.TOO_LARGE,
            path=str(path),
        )


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
        on_stored: called with the new book and its file once it is stored (progress sync
            records how e-readers name the file there).
        files: where the imported file is kept (served to e-readers over OPDS); none: not kept.
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
        max_bytes: int = MAX_BOOK_BYTES,
        on_stored: Callable[[Book, Path], None] | None = None,
        files: BookFileStore | None = None,
    ) -> None:
        self._parse = parse
        self._embedder = embedder
        self._books = books
        self._clock = clock
        self._new_id = new_id
        self._count_tokens = count_tokens
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._on_stored = on_stored
        self._files = files

    def execute(
        self,
        path: Path,
        *,
        title: str | None = None,
        author: str | None = None,
        series: str | None = None,
        series_index: float | None = None,
        progress: IngestProgress | None = None,
        position: str | None = None,
        retry_position: PositionRetry | None = None,
    ) -> IngestResult:
        """Parse, chunk, store and embed ``path``. Raises ``IngestError`` (NOT_FOUND, UNSUPPORTED,
        CORRUPT, EMPTY, DUPLICATE with ``details["book_id"]``); stores nothing when parsing or
        chunking fails. ``series``/``series_index`` (a Calibre library's, say) replace what the
        file says (checked by ``series_fields``). A failure while embedding leaves the stored
        book searchable by keywords; importing the same file again completes its vectors.

        ``position``: how far the reader has read, as they typed it before the import ("Chapter
        5", "p. 45", "23%", "not started", "whole"; see ``Book.position_from_text``), resolved in
        the book's own words as soon as it is parsed, so the book is stored with it. When it
        names no place in the book, ``retry_position`` is asked again (a terminal asks the
        reader); without one, or when it gives up, the file is refused with
        ``IngestError(INVALID_POSITION)`` and nothing is stored."""
        report = progress or _NoProgress()
        timings: dict[str, float] = {}
        check_book_file(path, max_bytes=self._max_bytes)
        _check_title(title)
        place = series_fields(series, series_index) if series or series_index is not None else None
        content_hash = file_hash(path)
        existing = self._books.find_by_hash(content_hash)
        if existing is not None:
            return self._resume(path, existing, report)
        with _timed(timings, "parse"):
            report.stage("parse", None)
            parsed, fmt = self._parse(path)
        book = self._book(path, parsed, fmt, content_hash, title=title, author=author)
        series_name, index = place or _file_series(parsed)
        book = replace(book, series=series_name, series_index=index)
        if position is not None:
            book = book.with_position(_resolve_position(book, position, retry_position))
        with _timed(timings, "chunk"):
            report.stage("chunk", None)
            chunks = chunk_book(
                book.id, parsed, count_tokens=self._count_tokens, max_tokens=self._max_tokens
            )
            lexicon = Lexicon.of(parsed.text)  # the book's names, stored with it (people tool)
        if not chunks:
            raise IngestError(
                f"{path.name} contains no readable text", code=IngestErrorCode.EMPTY, path=str(path)
            )
        with _timed(timings, "store"):
            report.stage("store", 1)
            self._books.add(book, parsed.text, chunks, lexicon=lexicon)
            self._keep_file(book, path)
            if self._on_stored is not None:
                self._on_stored(book, path)
            report.advance(1)
        with _timed(timings, "embed"):
            self._embed(book.id, chunks, report)
        with _timed(timings, "sentences"):
            self._embed_sentences(book.id, chunks, report)
        with _timed(timings, "summarise"):
            self._summarise(book, parsed.text, report)
        return IngestResult(book=book, chunk_count=len(chunks), timings=timings)

    def _resume(self, path: Path, existing: Book, report: IngestProgress) -> IngestResult:
        """The file is in the library already: finish its vectors if an import was interrupted,
        else refuse it as a duplicate (once the sentences' vectors it lacks are made: a book
        imported before they were kept, or an import stopped among them). Either way its file is
        kept (a book imported before files were kept gets it)."""
        if self._files is not None:
            self._files.put(existing.content_hash, path)
        pending = self._books.chunks_without_vectors(existing.id)
        unsplit = self._books.chunks_without_sentence_vectors(existing.id)
        if not pending:
            if unsplit:
                self._embed_sentences(existing.id, unsplit, report)
            raise IngestError(
                f"{path.name} is already in the library as {existing.title!r} ({existing.id[:8]})",
                code=IngestErrorCode.DUPLICATE,
                book_id=existing.id,
            )
        timings: dict[str, float] = {}
        with _timed(timings, "embed"):
            self._embed(existing.id, pending, report)
        with _timed(timings, "sentences"):
            self._embed_sentences(existing.id, unsplit, report)
        if self._books.chapter_recap(existing.id, SUMMARY_INDEX) is None:
            with _timed(timings, "summarise"):
                text = self._books.get_text(existing.id, 0, existing.char_count)
                self._summarise(existing, text, report)
        return IngestResult(book=existing, chunk_count=len(pending), timings=timings, resumed=True)

    def _keep_file(self, book: Book, path: Path) -> None:
        if self._files is None:
            return
        try:
            self._files.put(book.content_hash, path)
        except BaseException:
            self._books.delete(book.id)  # stored with its file or not at all
            raise

    def reingest(
        self, book: Book, path: Path, *, progress: IngestProgress | None = None
    ) -> IngestResult:
        """``path`` is a new edition of the stored ``book`` (its file changed in Calibre, say):
        parsed, chunked and stored in its place (same id, title, author and series: its
        conversations, identifiers and owner stay), its reading position carried over
        (``folio.domain.editions``), then embedded and summarised again. Raises ``IngestError``
        as ``execute`` does (``DUPLICATE`` when the file is another book of the library's);
        nothing changes when parsing or chunking fails."""
        report = progress or _NoProgress()
        timings: dict[str, float] = {}
        check_book_file(path, max_bytes=self._max_bytes)
        content_hash = file_hash(path)
        with _timed(timings, "parse"):
            report.stage("parse", None)
            parsed, fmt = self._parse(path)
        fresh = self._book(path, parsed, fmt, content_hash, title=book.title, author=book.author)
        new = replace(fresh, id=book.id, created_at=book.created_at, series=book.series,
                      series_index=book.series_index)  # fmt: skip
        carried = carry_position(book, self._books.get_text(book.id), new, parsed.text)
        new = new.with_position(carried.position)
        with _timed(timings, "chunk"):
            report.stage("chunk", None)
            chunks = chunk_book(
                new.id, parsed, count_tokens=self._count_tokens, max_tokens=self._max_tokens
            )
        if not chunks:
            raise IngestError(
                f"{path.name} contains no readable text", code=IngestErrorCode.EMPTY, path=str(path)
            )
        with _timed(timings, "store"):
            report.stage("store", 1)
            if self._files is not None:  # kept first: a failure leaves the old edition whole
                self._files.put(new.content_hash, path)
            try:
                self._editions().replace_text(
                    new, parsed.text, chunks, lexicon=Lexicon.of(parsed.text)
                )
            except BaseException:
                self._release(new.content_hash)
                raise
            if new.content_hash != book.content_hash:
                self._release(book.content_hash)  # the old edition's file, unless a book has it
            if self._on_stored is not None:
                self._on_stored(new, path)
            report.advance(1)
        with _timed(timings, "embed"):
            self._embed(new.id, chunks, report)
        with _timed(timings, "sentences"):
            self._embed_sentences(new.id, chunks, report)
        with _timed(timings, "summarise"):
            self._summarise(new, parsed.text, report)
        return IngestResult(new, len(chunks), timings, carried=carried)

    def _release(self, content_hash: str) -> None:
        if self._files is not None:
            self._files.release(content_hash)

    def _editions(self) -> EditionRepository:
        if not isinstance(self._books, EditionRepository):
            raise IngestError(
                "This library cannot take a new edition of a book", code=IngestErrorCode.UNSUPPORTED
            )
        return self._books

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
            title=_clip(_first_text(title, parsed.title)) or _clip(path.stem) or path.name,
            author=_clip(_first_text(author, parsed.author)),
            format=fmt,
            source_name=path.name,
            content_hash=content_hash,
            page_count=len(parsed.pages),
            char_count=len(parsed.text),
            chapters=parsed.chapters,
            pages=parsed.pages,
            created_at=self._clock(),
        )

    def _embed(self, book_id: str, chunks: list[Chunk], report: IngestProgress) -> None:
        """Embed and store the vectors of ``chunks`` batch by batch (each batch is searchable as
        soon as it is stored)."""
        report.stage("embed", len(chunks))
        for i in range(0, len(chunks), self._batch_size):
            batch = chunks[i : i + self._batch_size]
            vectors: Vectors = np.asarray(
                self._embedder.embed([c.text for c in batch]), dtype=np.float32
            )
            self._books.add_vectors(book_id, [c.id for c in batch], vectors)
            report.advance(len(batch))

    def _embed_sentences(self, book_id: str, chunks: list[Chunk], report: IngestProgress) -> None:
        """Embed and store the vectors of the sentences of ``chunks``, batch by batch (each
        batch is used as soon as it is stored); a sentence in the overlap of two passages is
        embedded with each."""
        report.stage("sentences", len(chunks))
        for i in range(0, len(chunks), self._batch_size):
            batch = chunks[i : i + self._batch_size]
            sentences = [split_sentences(c.text) for c in batch]
            vectors = np.asarray(
                self._embedder.embed([s for texts in sentences for s in texts]), dtype=np.float32
            )
            ends = np.cumsum([len(texts) for texts in sentences])
            matrices = np.split(vectors.reshape(-1, self._embedder.dimensions), ends[:-1])
            self._books.add_sentence_vectors(book_id, [c.id for c in batch], matrices)
            report.advance(len(batch))

    def _summarise(self, book: Book, text: str, report: IngestProgress) -> None:
        """Rank the sentences of each story chapter and keep the best with the book (in its
        chapter recaps, under ``SUMMARY_INDEX``: no chapter has it)."""
        chapters = [
            (c.index, c.char_start, book.chapter_end(c)) for c in book.chapters if c.is_story
        ]
        report.stage("summarise", len(chapters))
        summary = StorySummary.of(
            text,
            chapters,
            self._embedder.embed,
            model=self._embedder.name,
            on_chapter=report.advance,
        )
        self._books.save_chapter_recap(book.id, SUMMARY_INDEX, summary.to_json(), summary.model)


def _file_series(parsed: ParsedBook) -> tuple[str | None, float | None]:
    """The series the file's metadata names, or none when it names one no reader could use."""
    try:
        return series_fields(parsed.series, parsed.series_index if parsed.series else None)
    except BookError:
        return None, None


def _resolve_position(book: Book, text: str, retry: PositionRetry | None) -> ReadingPosition:
    while True:
        try:
            return book.position_from_text(text)
        except BookError as e:
            again = retry(book, e) if retry is not None else None
            if again is None:
                raise IngestError(
                    f"{book.source_name}: {e.message}",
                    code=IngestErrorCode.INVALID_POSITION,
                    path=book.source_name,
                ) from e
            text = again


def _check_title(title: str | None) -> None:
    if title is not None and len(title.strip()) > MAX_BOOK_TITLE_CHARS:
        raise IngestError(
            f"A title has at most {MAX_BOOK_TITLE_CHARS} characters (got {len(title.strip())})",
            code=IngestErrorCode.UNSUPPORTED,
        )


def _clip(text: str | None) -> str | None:
    """Metadata read from a file is cut to a sane length (a hostile file may carry a megabyte)."""
    if text is None or len(text) <= MAX_BOOK_TITLE_CHARS:
        return text
    return " ".join(text[:MAX_BOOK_TITLE_CHARS].split()[:-1]) + "…"


def _first_text(*candidates: str | None) -> str | None:
    return next((c.strip() for c in candidates if c and c.strip()), None)


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = time.perf_counter() - start
