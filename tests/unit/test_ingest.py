"""IngestBook against the in-memory library and the hashing embedder, with a fake parse function."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.ingest import IngestBook
from folio.domain.books import BookFormat, Chapter, Page, ParsedBook
from folio.domain.errors import IngestError, IngestErrorCode
from folio.domain.ports import Vectors
from folio.domain.sentences import split_sentences

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
BODY = " ".join(f"This is sentence {i} of the story." for i in range(300))
TEXT = f"Chapter 1\n\n{BODY}\n\nChapter 2\n\n{BODY}"


class FakeParse:
    """Reads the file's text and gives it two chapters; counts its calls."""

    def __init__(self, *, title: str | None = "Parsed Title", author: str | None = "Parsed Author"):
        self.calls = 0
        self.title, self.author = title, author

    def __call__(self, path: Path) -> tuple[ParsedBook, BookFormat]:
        self.calls += 1
        text = path.read_text()
        half = len(text) // 2
        pages = (Page(1, "1", 0, half), Page(2, "2", half, len(text)))
        second = text.find("Chapter 2")
        chapters = (Chapter(1, "Chapter 1", 0),) + (
            (Chapter(2, "Chapter 2", second),) if second > 0 else ()
        )
        parsed = ParsedBook(text, pages, chapters, title=self.title, author=self.author)
        return parsed, BookFormat.TXT


class FailingEmbedder(HashingEmbedder):
    """Embeds ``good_batches`` batches, then crashes."""

    def __init__(self, dimensions: int, *, good_batches: int = 0) -> None:
        super().__init__(dimensions)
        self._good = good_batches

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self._good <= 0:
            raise RuntimeError("model crashed")
        self._good -= 1
        return super().embed(texts)


class RecordingProgress:
    """Records ("stage", name, total) and ("advance", "", n) events in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int | None]] = []

    def stage(self, name: str, total: int | None = None) -> None:
        self.events.append(("stage", name, total))

    def advance(self, n: int = 1) -> None:
        self.events.append(("advance", "", n))


@pytest.fixture
def library() -> InMemoryLibrary:
    return InMemoryLibrary()


@pytest.fixture
def book_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_story.txt"
    path.write_text(TEXT)
    return path


def make_ingest(
    library: InMemoryLibrary, parse: FakeParse | None = None, **kwargs: object
) -> IngestBook:
    return IngestBook(
        parse=parse or FakeParse(),
        embedder=kwargs.pop("embedder", HashingEmbedder(64)),  # type: ignore[arg-type]
        books=library,
        clock=lambda: NOW,
        new_id=lambda: "book-1",
        **kwargs,  # type: ignore[arg-type]
    )


def test_ingest_stores_the_book_its_text_chunks_and_vectors(
    library: InMemoryLibrary, book_file: Path
) -> None:
    result = make_ingest(library, batch_size=4).execute(book_file)
    book = library.get("book-1")
    assert result.book == book
    assert (book.title, book.author, book.format) == (
        "Parsed Title",
        "Parsed Author",
        BookFormat.TXT,
    )
    assert book.source_name == "my_story.txt"
    assert book.content_hash == hashlib.sha256(book_file.read_bytes()).hexdigest()
    assert (book.page_count, book.char_count) == (2, len(TEXT))
    assert [c.title for c in book.chapters] == ["Chapter 1", "Chapter 2"]
    assert book.created_at == NOW
    assert library.get_text("book-1") == TEXT
    chunks = library.chunks["book-1"]
    assert result.chunk_count == len(chunks) > 2
    assert all(TEXT[c.char_start : c.char_end] == c.text for c in chunks)
    assert set(library.vectors["book-1"]) == {c.id for c in chunks}
    assert all(v.shape == (64,) for v in library.vectors["book-1"].values())
    assert library.vector_coverage("book-1") == (len(chunks), len(chunks))
    assert set(result.timings) == {"parse", "chunk", "embed", "store", "sentences", "summarise"}
    kept = library.sentence_vectors("book-1", [c.id for c in chunks])
    assert [len(kept[c.id].vectors) for c in chunks] == [
        len(split_sentences(c.text)) for c in chunks
    ]
    first = split_sentences(chunks[0].text)[0]
    assert np.allclose(
        kept[chunks[0].id].vectors[0], HashingEmbedder(64).embed([first])[0], atol=2e-3
    )
    assert 0 <= result.searchable_after <= sum(result.timings.values())
    assert all(t >= 0 for t in result.timings.values())


def test_explicit_title_and_author_win_over_parsed_metadata(
    library: InMemoryLibrary, book_file: Path
) -> None:
    book = make_ingest(library).execute(book_file, title=" Mine ", author="Me").book
    assert (book.title, book.author) == ("Mine", "Me")


def test_without_metadata_the_title_is_the_file_stem(
    library: InMemoryLibrary, book_file: Path
) -> None:
    book = make_ingest(library, FakeParse(title=None, author=None)).execute(book_file).book
    assert (book.title, book.author) == ("my_story", None)


def test_the_same_file_twice_is_a_duplicate_naming_the_existing_book(
    library: InMemoryLibrary, book_file: Path, tmp_path: Path
) -> None:
    make_ingest(library).execute(book_file)
    copy = tmp_path / "copy.txt"
    copy.write_bytes(book_file.read_bytes())
    parse = FakeParse()
    with pytest.raises(IngestError) as caught:
        make_ingest(library, parse).execute(copy)
    assert caught.value.code == IngestErrorCode.DUPLICATE
    assert caught.value.details["book_id"] == "book-1"
    assert "Parsed Title" in caught.value.message
    assert parse.calls == 0, "a duplicate is refused before parsing"
    assert len(library.books) == 1


def test_a_failure_while_embedding_keeps_a_whole_book_searchable_by_keywords(
    library: InMemoryLibrary, book_file: Path
) -> None:
    ingest = make_ingest(library, embedder=FailingEmbedder(64, good_batches=1), batch_size=2)
    with pytest.raises(RuntimeError):
        ingest.execute(book_file)
    chunks = library.chunks["book-1"]
    assert library.get_text("book-1") == TEXT and len(chunks) > 2
    assert library.vector_coverage("book-1") == (2, len(chunks))
    hits = library.search("book-1", "Chapter", None, k=3)
    assert hits, "the stored chunks answer keyword searches before their vectors exist"


def test_importing_the_same_file_again_completes_an_interrupted_embedding(
    library: InMemoryLibrary, book_file: Path
) -> None:
    with pytest.raises(RuntimeError):
        make_ingest(library, embedder=FailingEmbedder(64, good_batches=1), batch_size=2).execute(
            book_file
        )
    missing = len(library.chunks_without_vectors("book-1"))
    assert 0 < missing < len(library.chunks["book-1"])
    parse = FakeParse()
    result = make_ingest(library, parse).execute(book_file)
    assert result.resumed and result.chunk_count == missing
    assert parse.calls == 0, "the stored text is reused, not parsed again"
    assert library.chunks_without_vectors("book-1") == []
    assert len(library.books) == 1
    with pytest.raises(IngestError) as caught:
        make_ingest(library).execute(book_file)
    assert caught.value.code == IngestErrorCode.DUPLICATE


def test_importing_the_same_file_again_completes_its_sentences_vectors(
    library: InMemoryLibrary, book_file: Path
) -> None:
    """An import stopped among the sentences (its passages all embedded; or a book imported
    before they were kept) is the same book again: the next import of the file embeds the
    sentences still missing and says it is in the library already."""
    count = make_ingest(InMemoryLibrary()).execute(book_file).chunk_count
    good = -(-count // 2) + 1  # every batch of passages, then one of sentences
    with pytest.raises(RuntimeError):
        make_ingest(library, embedder=FailingEmbedder(64, good_batches=good), batch_size=2).execute(
            book_file
        )
    assert library.chunks_without_vectors("book-1") == []
    assert len(library.chunks_without_sentence_vectors("book-1")) == count - 2
    parse = FakeParse()

    with pytest.raises(IngestError) as caught:
        make_ingest(library, parse).execute(book_file)

    assert caught.value.code == IngestErrorCode.DUPLICATE
    assert caught.value.details["book_id"] == "book-1" and parse.calls == 0
    assert library.chunks_without_sentence_vectors("book-1") == []


def test_nothing_is_stored_when_parsing_fails(library: InMemoryLibrary, tmp_path: Path) -> None:
    def broken(path: Path) -> tuple[ParsedBook, BookFormat]:
        raise IngestError("bad.epub cannot be read", code=IngestErrorCode.CORRUPT)

    path = tmp_path / "bad.epub"
    path.write_bytes(b"junk")
    ingest = IngestBook(parse=broken, embedder=HashingEmbedder(8), books=library)
    with pytest.raises(IngestError) as caught:
        ingest.execute(path)
    assert caught.value.code == IngestErrorCode.CORRUPT
    assert library.books == {}


def test_a_missing_file_is_not_found(library: InMemoryLibrary, tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        make_ingest(library).execute(tmp_path / "absent.txt")
    assert caught.value.code == IngestErrorCode.NOT_FOUND


def test_a_book_with_no_words_is_empty(library: InMemoryLibrary, tmp_path: Path) -> None:
    path = tmp_path / "blank.txt"
    path.write_text("   \n\n  ")
    with pytest.raises(IngestError) as caught:
        make_ingest(library).execute(path)
    assert caught.value.code == IngestErrorCode.EMPTY
    assert library.books == {}


def test_progress_reports_each_stage_and_every_embedded_batch(
    library: InMemoryLibrary, book_file: Path
) -> None:
    progress = RecordingProgress()
    result = make_ingest(library, batch_size=5).execute(book_file, progress=progress)
    stages = [(name, total) for kind, name, total in progress.events if kind == "stage"]
    assert [name for name, _ in stages] == [
        "parse",
        "chunk",
        "store",
        "embed",
        "sentences",
        "summarise",
    ]
    store_at = progress.events.index(("stage", "store", 1))
    embed_at = progress.events.index(("stage", "embed", result.chunk_count))
    sentences_at = progress.events.index(("stage", "sentences", result.chunk_count))
    assert progress.events[store_at + 1] == ("advance", "", 1)  # stored before embedding
    embedding = progress.events[embed_at:sentences_at]
    advances = [n or 0 for kind, _, n in embedding if kind == "advance"]
    assert sum(advances) == result.chunk_count
    assert len(advances) == -(-result.chunk_count // 5)


def test_a_token_counter_caps_the_chunks(library: InMemoryLibrary, book_file: Path) -> None:
    def count(text: str) -> int:
        return 2 + len(text.split()) * 2

    result = make_ingest(library, count_tokens=count, max_tokens=100).execute(book_file)
    assert all(count(c.text) <= 100 for c in library.chunks["book-1"])
    assert result.chunk_count > make_ingest(InMemoryLibrary()).execute(book_file).chunk_count
