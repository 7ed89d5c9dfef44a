"""IngestBook with the real parsers on the shared books (in-memory library, hashing embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.parsers import parse_book
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.ingest import IngestBook
from folio.domain.books import BookFormat
from folio.domain.errors import IngestError, IngestErrorCode

pytestmark = pytest.mark.data


@pytest.fixture
def library() -> InMemoryLibrary:
    return InMemoryLibrary()


def ingest(library: InMemoryLibrary) -> IngestBook:
    return IngestBook(parse=parse_book, embedder=HashingEmbedder(64), books=library)


def test_frankenstein_epub_becomes_a_book_with_chapters_and_cited_chunks(
    library: InMemoryLibrary, books_dir: Path
) -> None:
    result = ingest(library).execute(books_dir / "formats" / "frankenstein.epub")
    book = result.book
    assert book.format is BookFormat.EPUB
    assert book.title == "Frankenstein; or, the Modern Prometheus"
    assert len(book.chapters) == 28 and book.page_count == len(book.pages) > 100
    chunks = library.chunks[book.id]
    assert {c.chapter for c in chunks} >= {"Letter 1", "Chapter 24"}
    text = library.get_text(book.id)
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.text
        assert book.chapter_at(chunk.char_start) == book.chapter_at(chunk.char_end - 1)


def test_adding_the_same_file_again_is_reported_as_a_duplicate(
    library: InMemoryLibrary, books_dir: Path
) -> None:
    first = ingest(library).execute(books_dir / "formats" / "frankenstein.md").book
    with pytest.raises(IngestError) as caught:
        ingest(library).execute(books_dir / "formats" / "frankenstein.md")
    assert caught.value.code == IngestErrorCode.DUPLICATE
    assert caught.value.details["book_id"] == first.id
    assert len(library.books) == 1


@pytest.mark.parametrize(
    "name", ["empty.txt", "fake_zip.epub", "truncated.epub", "truncated.pdf", "random_bytes.pdf"]
)
def test_a_bad_file_leaves_the_library_untouched(
    library: InMemoryLibrary, books_dir: Path, name: str
) -> None:
    with pytest.raises(IngestError) as caught:
        ingest(library).execute(books_dir / "bad" / name)
    assert "\n" not in str(caught.value)
    assert library.books == {} and library.chunks == {}


def test_the_latin1_sample_is_imported(library: InMemoryLibrary, books_dir: Path) -> None:
    book = ingest(library).execute(books_dir / "bad" / "latin1_encoded.txt").book
    assert book.title.startswith("Frankenstein")
    assert library.chunks[book.id]
