"""Books for library tests and benchmarks: parsed with ``parse_book`` when the parsers are present
(else the text split into 300-word pages), and chunked with ``chunk_book`` when it is present (else
200-word chunks). Either way the offset invariants of parsed books hold."""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from folio.domain.books import Book, BookFormat, Chapter, Chunk, Page, ParsedBook
from folio.domain.ports import Embedder, Vectors

_WORD_SPAN = re.compile(r"\S+")
_CHAPTER = re.compile(r"^(chapter|letter|book|part)\s+\w+.*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class StoredBook:
    book: Book
    text: str
    chunks: list[Chunk]
    vectors: Vectors


def simple_parse(text: str) -> ParsedBook:
    spans = [m.span() for m in _WORD_SPAN.finditer(text)]
    pages = []
    for number, i in enumerate(range(0, len(spans), 300), start=1):
        start = 0 if i == 0 else spans[i][0]
        end = spans[i + 300][0] if i + 300 < len(spans) else len(text)
        pages.append(Page(number, str(number), start, end))
    chapters = [
        Chapter(n, m.group().strip(), m.start())
        for n, m in enumerate(_CHAPTER.finditer(text), start=1)
    ]
    return ParsedBook(text=text, pages=tuple(pages), chapters=tuple(chapters))


def simple_chunks(book_id: str, parsed: ParsedBook, *, words: int = 200) -> list[Chunk]:
    text = parsed.text
    spans = [m.span() for m in _WORD_SPAN.finditer(text)]
    page_starts = [p.char_start for p in parsed.pages]
    chapter_starts = [c.char_start for c in parsed.chapters]
    chunks = []
    for ordinal, i in enumerate(range(0, len(spans), words)):
        start, end = spans[i][0], spans[min(i + words, len(spans)) - 1][1]
        ch = bisect.bisect_right(chapter_starts, start) - 1
        chunks.append(
            Chunk(
                id=f"{book_id}-{ordinal}",
                book_id=book_id,
                ordinal=ordinal,
                text=text[start:end],
                char_start=start,
                char_end=end,
                page_start=bisect.bisect_right(page_starts, start),
                page_end=bisect.bisect_right(page_starts, end - 1),
                chapter=parsed.chapters[ch].title if ch >= 0 else None,
                chapter_index=parsed.chapters[ch].index if ch >= 0 else None,
            )
        )
    return chunks


def build_book(
    book_id: str,
    text: str,
    embedder: Embedder,
    *,
    title: str = "A Book",
    source: str = "a.txt",
    parsed: ParsedBook | None = None,
    simple: bool = False,
) -> StoredBook:
    """``simple``: always the plain 200-word chunks (no overlap), for tests that count chunks."""
    parsed = parsed or simple_parse(text)
    chunks = simple_chunks(book_id, parsed) if simple else _chunk(book_id, parsed)
    book = Book(
        id=book_id,
        title=title,
        author=None,
        format=BookFormat.TXT,
        source_name=source,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        page_count=len(parsed.pages),
        char_count=len(text),
        chapters=parsed.chapters,
        pages=parsed.pages,
    )
    return StoredBook(book, text, chunks, embed_chunks(embedder, chunks))


def book_from_file(path: Path, embedder: Embedder, *, book_id: str | None = None) -> StoredBook:
    parsed = parse_file(path)
    title = parsed.title or path.stem
    return build_book(
        book_id or path.stem, parsed.text, embedder, title=title, source=path.name, parsed=parsed
    )


def parse_file(path: Path) -> ParsedBook:
    try:
        from folio.adapters.parsers import parse_book
    except ImportError:
        return simple_parse(path.read_text(encoding="utf-8-sig"))
    return parse_book(path)[0]


def _chunk(book_id: str, parsed: ParsedBook) -> list[Chunk]:
    try:
        from folio.app.chunking import chunk_book  # type: ignore[import-not-found]
    except ImportError:
        return simple_chunks(book_id, parsed)
    return list(chunk_book(book_id, parsed))


def embed_chunks(embedder: Embedder, chunks: Sequence[Chunk]) -> Vectors:
    return embedder.embed([c.text for c in chunks])
