"""The story so far offline on whole novels of the shared data set (Frankenstein, Pride and
Prejudice): real files, the real ingest (which ranks each chapter's sentences once and keeps them
with the book) and real SQLite, through the recap tool and the offline answer.

Nothing past the position is quoted, however the reader got there (a chapter's end, a page in the
middle of one); the first chapters stay in the recap however long the reading; no chapter's
recap leads with a question or a line of dialogue. The embedder is the hashing one (the ranking's
quality is the shipped model's, measured by hand; these tests hold for any embedder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.agent.offline.strategy import reader_answer
from folio.agent.tools import ToolContext, ToolServices, default_registry
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.passages import RECAP, Recap
from folio.domain.summary import SUMMARY_INDEX, StorySummary

FRANKENSTEIN = "pg84_frankenstein.txt"
PRIDE = "pg1342_pride_and_prejudice.txt"


@pytest.fixture(scope="module")
def library(
    books_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Container, dict[str, Book]]]:
    home = tmp_path_factory.mktemp("story-so-far")
    settings = load_settings(env={"FOLIO_HOME": str(home)}, conversation_store="sqlite")
    container = Container(settings, embedder=HashingEmbedder(256))
    books = {
        name: container.ingest.execute(books_dir / name).book for name in (FRANKENSTEIN, PRIDE)
    }
    yield container, books
    container.close()


def recap(container: Container, book: Book, **arguments: object) -> Recap:
    services = ToolServices(
        container.searcher, container.books, container.chunk_index, summaries=container.summaries
    )
    result = default_registry().execute(RECAP, ToolContext(book=book), services, arguments)
    assert result.success and isinstance(result.data, Recap), result.error
    return result.data


def leads(data: Recap) -> list[str]:
    """The first sentence quoted of each chapter."""
    seen: dict[str | None, str] = {}
    for p in data.passages:
        seen.setdefault(p.chapter, p.text)
    return list(seen.values())


def assert_readable(data: Recap) -> None:
    for text in leads(data):
        assert not text.rstrip("”\"’'_").endswith("?"), text
        assert not text.startswith(("“", '"')), text
        assert len(text.split()) >= 8, text


def test_the_import_keeps_a_ranking_of_every_story_chapter(
    library: tuple[Container, dict[str, Book]],
) -> None:
    container, books = library
    for book in books.values():
        summary = StorySummary.from_json(container.books.chapter_recap(book.id, SUMMARY_INDEX))
        assert summary is not None
        story = [c for c in book.chapters if c.is_story]
        assert set(summary.chapters) == {c.index for c in story}
        assert sum(bool(r) for r in summary.chapters.values()) >= len(story) - 1


@pytest.mark.parametrize(
    ("name", "where", "first"),
    [(FRANKENSTEIN, "Chapter 5", "Letter 1"), (PRIDE, "Chapter XII", "Chapter I")],
)
def test_the_story_so_far_starts_at_the_first_chapter_and_stops_at_the_position(
    library: tuple[Container, dict[str, Book]], name: str, where: str, first: str
) -> None:
    container, books = library
    book = container.library.set_position(books[name].id, chapter=where)
    limit = book.position.char_offset
    assert limit is not None
    data = recap(container, book)
    assert data.passages[0].chapter is not None and data.passages[0].chapter.startswith(first)
    assert all(p.char_end <= limit for p in data.passages)
    read = [c.title for c in book.chapters if c.is_story and c.char_start < limit]
    assert {p.chapter for p in data.passages} == set(read)  # every chapter read, none left out
    assert_readable(data)
    answer = reader_answer(
        default_registry()
        .execute(
            RECAP,
            ToolContext(book=book),
            ToolServices(container.searcher, container.books, container.chunk_index),
            {},
        )
        .outcome()
    )
    assert answer.startswith(f"The story up to {where}, in the book's words:\n- {first}")


def test_a_reader_in_the_middle_of_a_chapter_gets_only_what_they_have_read(
    library: tuple[Container, dict[str, Book]],
) -> None:
    container, books = library
    whole = container.library.set_position(books[PRIDE].id, chapter="Chapter XII")
    chapter = next(c for c in whole.chapters if c.title == "Chapter XII")
    middle = (chapter.char_start + whole.chapter_end(chapter)) // 2
    page = next(p for p in whole.pages if p.char_start <= middle < p.char_end)
    book = container.library.set_position(whole.id, page=page.label)
    limit = book.position.char_offset
    assert limit is not None and chapter.char_start < limit < whole.chapter_end(chapter)
    data = recap(container, book)
    assert all(p.char_end <= limit for p in data.passages)
    assert data.passages[0].chapter == "Chapter I"
    assert_readable(data)
    one = recap(container, book, chapter="Chapter XII")
    assert all(chapter.char_start <= p.char_start and p.char_end <= limit for p in one.passages)


def test_the_whole_novel_fits_the_bound_and_keeps_its_first_chapters(
    library: tuple[Container, dict[str, Book]],
) -> None:
    container, books = library
    book = container.library.set_position(books[PRIDE].id, reset=True)
    book = container.library.set_position_from_text(book.id, "whole")
    data = recap(container, book)
    assert 20 <= len(data.passages) <= 24
    assert data.passages[0].chapter == "Chapter I"
    assert data.passages[-1].chapter in ("Chapter LIX", "Chapter LX", "Chapter LXI")
    assert data.note is not None and "one sentence for every" in data.note
    assert_readable(data)
