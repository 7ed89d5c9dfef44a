"""Front matter is not the story: Pride and Prejudice's 1894 preface (by George Saintsbury, before
Chapter I, and full of later events) counts as unread until the reader finishes the book.

Property: for random positions inside the story and queries made of the preface's own words, no
search result, tool result, offline answer or export holds text from before the story's start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext, ToolServices
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book, PositionKind, ReadingPosition, SectionKind
from folio.domain.window import ReadingWindow

pytestmark = pytest.mark.data
PREFACE_SPOILERS = ("elopement of Lydia", "the great proposal", "GEORGE SAINTSBURY")


@pytest.fixture(scope="module")
def austen(books_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    home = tmp_path_factory.mktemp("front-matter")
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    container.ingest.execute(books_dir / "pg1342_pride_and_prejudice.txt")
    yield container


def _book(container: Container) -> Book:
    (book,) = container.library.list_books()
    return book


def _text(container: Container, book: Book) -> str:
    return container.books.get_text(book.id)


def test_the_preface_and_the_list_of_illustrations_are_known_as_what_they_are(
    austen: Container,
) -> None:
    book = _book(austen)
    matter = [(c.title, c.kind) for c in book.chapters if not c.is_story]
    assert matter == [
        ("Preface", SectionKind.COMMENTARY),
        ("List of Illustrations", SectionKind.FRONT_MATTER),
    ]
    story = [c for c in book.chapters if c.is_story]
    assert len(story) == 61 and story[0].title.casefold().startswith("chapter i")
    assert book.story_start == story[0].char_start
    assert "GEORGE SAINTSBURY" in _text(austen, book)[: book.story_start]


def test_at_chapter_10_nothing_comes_from_the_preface(austen: Container) -> None:
    book = austen.library.set_position(_book(austen).id, chapter="10")
    try:
        assert book.describe_position().startswith("through Chapter X (p. ")
        assert [c.title for c in ReadingWindow(book).hidden_sections()] == [
            "Preface",
            "List of Illustrations",
        ]
        for query in ("elopement of Lydia and Wickham", "the great proposal scene with Darcy",
                      "George Saintsbury", "Austenians or Janites"):  # fmt: skip
            for hit in austen.searcher.search(book, query, k=10):
                assert hit.chunk.char_start >= book.story_start
        chat = austen.chat(provider="offline")
        conversation = austen.conversations.create(book.id, "front matter")
        answer = chat.execute(conversation.id, "What happens between Lydia and Wickham?").answer
        exported = json.dumps(austen.conversations.export_json(conversation.id))
        for spoiler in PREFACE_SPOILERS:
            assert spoiler not in answer and spoiler not in exported
    finally:
        austen.library.set_position(book.id, reset=True)


def test_a_reader_who_includes_the_matter_may_read_the_preface_before_finishing(
    austen: Container,
) -> None:
    """Off by default; on, the preface is searchable at Chapter 10 and stays on when the
    position moves; off again, it is hidden again."""
    book_id = _book(austen).id
    try:
        book = austen.library.set_position(book_id, chapter="10")
        assert not book.position.include_matter
        book = austen.library.set_position(book_id, include_matter=True)
        assert book.position.kind is PositionKind.CHAPTER and ReadingWindow(book).start == 0
        hits = austen.searcher.search(book, "Saintsbury preface Austenians Janites", k=5)
        assert any(h.chunk.char_start < book.story_start for h in hits)
        book = austen.library.set_position(book_id, chapter="12")
        assert austen.books.get(book_id).position.include_matter  # stored, kept
        book = austen.library.set_position(book_id, include_matter=False)
        hits = austen.searcher.search(book, "Saintsbury preface Austenians Janites", k=10)
        assert all(h.chunk.char_start >= book.story_start for h in hits)
    finally:
        austen.library.set_position(book_id, reset=True, include_matter=False)


def test_a_reader_who_has_finished_the_book_may_read_the_preface(austen: Container) -> None:
    book = _book(austen)
    assert book.position.is_unlimited and ReadingWindow(book).start == 0
    hits = austen.searcher.search(book, "Saintsbury preface Austenians Janites", k=5)
    assert any(h.chunk.char_start < book.story_start for h in hits)


def _offsets(data: Any) -> Iterator[tuple[int, int]]:
    if isinstance(data, dict):
        if isinstance(data.get("char_start"), int) and isinstance(data.get("char_end"), int):
            yield data["char_start"], data["char_end"]
        for value in data.values():
            yield from _offsets(value)
    elif isinstance(data, list):
        for value in data:
            yield from _offsets(value)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_no_tool_shows_front_matter_at_any_position_inside_the_story(
    austen: Container, data: st.DataObject
) -> None:
    book = _book(austen)
    text = _text(austen, book)
    story = [c for c in book.chapters if c.is_story]
    last_end = book.chapter_end(story[-1])
    limit = data.draw(st.integers(book.story_start + 1, last_end - 1), label="position")
    reader = book.with_position(ReadingPosition(limit, PositionKind.PERCENT, 1.0))
    preface_words = sorted(set(re.findall(r"[A-Za-z]{4,}", text[: book.story_start])))
    query = " ".join(data.draw(st.lists(st.sampled_from(preface_words), min_size=1, max_size=5)))
    page = data.draw(st.integers(1, reader.page_at(limit - 1).number), label="page")

    registry = default_registry()
    ctx = ToolContext(book=reader)
    tool_services = ToolServices(austen.searcher, austen.books, austen.chunk_index, 5)
    calls = [
        ("search_book", {"query": query, "k": 10}),
        ("read_passage", {"page_start": str(page), "page_end": str(page + 1)}),
        ("list_chapters", {}),
    ]
    for name, arguments in calls:
        result = registry.execute(name, ctx, tool_services, arguments)
        envelope = result.envelope()
        for start, end in _offsets(envelope):
            assert start >= book.story_start and end <= limit
        for chapter in envelope.get("data", {}).get("chapters", []) or []:
            assert chapter["title"] not in ("Preface", "List of Illustrations")
        dumped = json.dumps({**envelope, "data": {**(envelope.get("data") or {}), "query": ""}})
        for typed in query.split():  # the reader's own words may be echoed ("nothing mentions X")
            dumped = re.sub(rf"\b{re.escape(typed)}\b", "", dumped, flags=re.IGNORECASE)
        assert "SAINTSBURY" not in dumped and "Austenians" not in dumped
    for hit in austen.searcher.search(reader, query, k=10):
        assert book.story_start <= hit.chunk.char_start and hit.chunk.char_end <= limit
