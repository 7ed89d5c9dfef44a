"""The book tools never let text at or past the reading position out (and the small story library
the agent tests share)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.agent.tools import ToolContext, ToolRegistry, ToolServices, default_registry
from folio.app.search import SearchBook
from folio.domain.books import (
    Book,
    BookFormat,
    Chapter,
    Chunk,
    Page,
    PositionKind,
    ReadingPosition,
    SearchHit,
)
from folio.domain.passages import SearchResults

# Six pages, three chapters; chapter 3 (pages 5-6) is past the default reading position.
PAGES = [
    "Chapter 1. Victor Frankenstein grew up in Geneva with his adopted sister Elizabeth Lavenza. "
    "His father Alphonse was a respected magistrate of the republic.",
    "Victor's friend Henry Clerval loved poetry and tales of chivalry, while Victor read the old "
    "alchemists Agrippa and Paracelsus with a burning passion.",
    "Chapter 2. At the university of Ingolstadt Victor studied chemistry under Professor "
    "Waldman, who praised the modern masters of science.",
    "Victor worked day and night collecting bones from charnel houses, pale with study, hoping to "
    "bestow animation upon lifeless matter.",
    "Chapter 3. On a dreary night of November the creature opened its dull yellow eye; Victor fled "
    "the laboratory in horror.",
    "William was found murdered near Plainpalais and the servant Justine Moritz was accused of the "
    "crime and condemned.",
]
SECRET_WORDS = ("yellow", "laboratory", "William", "Justine", "Plainpalais")


@dataclass
class StoryLibrary:
    library: InMemoryLibrary
    searcher: SearchBook
    book: Book
    text: str

    def services(self) -> ToolServices:
        return ToolServices(self.searcher, self.library, self.library)

    def at(self, position: ReadingPosition) -> Book:
        return self.library.set_position(self.book.id, position)


def make_story(book_id: str = "story") -> StoryLibrary:
    text, pages, chunks, chapters = "", [], [], []
    for number, body in enumerate(PAGES, start=1):
        start = len(text)
        text += body + "\n\n"
        pages.append(Page(number, str(number), start, len(text)))
        if body.startswith("Chapter"):
            chapters.append(Chapter(len(chapters) + 1, body.split(".")[0], start))
        chunks.append(
            Chunk(
                id=f"{book_id}-{number}",
                book_id=book_id,
                ordinal=number - 1,
                text=body,
                char_start=start,
                char_end=start + len(body),
                page_start=number,
                page_end=number,
                chapter=chapters[-1].title,
                chapter_index=chapters[-1].index,
            )
        )
    book = _book(book_id, "The Modern Prometheus", text, chapters, pages)
    return _stored(book.with_position(book.position_at_page("4")), text, chunks)


def _book(book_id: str, title: str, text: str, chapters: list[Chapter], pages: list[Page]) -> Book:
    return Book(
        id=book_id,
        title=title,
        author="Mary Shelley",
        format=BookFormat.TXT,
        source_name=f"{book_id}.txt",
        content_hash=f"hash-{book_id}",
        page_count=len(pages),
        char_count=len(text),
        chapters=tuple(chapters),
        pages=tuple(pages),
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


def _stored(book: Book, text: str, chunks: list[Chunk]) -> StoryLibrary:
    """``book`` in an in-memory library with its chunks embedded, searched as folio does."""
    embedder = HashingEmbedder()
    library = InMemoryLibrary()
    library.add(book, text, chunks, embedder.embed([c.text for c in chunks]))
    return StoryLibrary(library, SearchBook(library, embedder), book, text)


@pytest.fixture
def story() -> StoryLibrary:
    return make_story()


def run(story: StoryLibrary, name: str, book: Book | None = None, **arguments: object):
    registry: ToolRegistry = default_registry()
    ctx = ToolContext(book=book or story.book)
    return registry.execute(name, ctx, story.services(), arguments)


def _assert_nothing_past(text: str) -> None:
    for word in SECRET_WORDS:
        assert word not in text


def test_search_book_returns_contract_shaped_results_before_the_position(story: StoryLibrary):
    result = run(story, "search_book", query="Victor creature laboratory yellow eye", k=10)

    assert result.success
    data = result.envelope()["data"]
    assert data["reading_limit"] == "through p. 4 of 6 (Chapter 2, 71%)"
    assert data["results"], "the visible pages mention Victor"
    limit = story.book.position.char_offset
    for passage in data["results"]:
        assert set(passage) >= {
            "chunk_id",
            "chapter",
            "pages",
            "page_start",
            "page_end",
            "char_start",
            "char_end",
            "score",
            "text",
        }
        assert passage["char_end"] <= limit
        _assert_nothing_past(passage["text"])
    assert isinstance(result.data, SearchResults)
    assert [p.chunk_id for p in result.data.passages] == [r["chunk_id"] for r in data["results"]]


def test_search_book_cuts_a_passage_that_straddles_the_position(story: StoryLibrary):
    page5 = story.book.pages[4]
    middle = page5.char_start + 30  # inside the chunk of page 5
    book = story.at(ReadingPosition(middle, PositionKind.PERCENT, 70.0))

    result = run(story, "search_book", book=book, query="dreary night November creature", k=10)

    cut = [p for p in result.envelope()["data"]["results"] if p["chunk_id"] == "story-5"]
    assert cut, "the first part of page 5 is visible"
    assert cut[0]["char_end"] == middle
    assert cut[0]["text"] == story.text[page5.char_start : middle]
    _assert_nothing_past(cut[0]["text"])


class LeakySearcher:
    """A faulty searcher that ignores the reading position."""

    def __init__(self, story: StoryLibrary) -> None:
        self.story = story

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        chunks = self.story.library.chunks[book.id]
        return [SearchHit(c, 1.0, c.text, str(c.page_start), str(c.page_end)) for c in chunks]


def test_search_book_drops_what_a_faulty_searcher_returns_past_the_position(story: StoryLibrary):
    services = replace(story.services(), searcher=LeakySearcher(story))
    result = default_registry().execute(
        "search_book", ToolContext(book=story.book), services, {"query": "anything"}
    )

    assert [p["chunk_id"] for p in result.envelope()["data"]["results"]] == [
        f"story-{n}" for n in (1, 2, 3, 4)
    ]
    _assert_nothing_past(result.to_json())


def test_read_passage_refuses_pages_past_the_position(story: StoryLibrary):
    result = run(story, "read_passage", page_start="5", page_end="6")

    assert not result.success
    assert result.error_code == "NOT_ALLOWED"
    assert "past the reader's position" in result.error
    _assert_nothing_past(result.to_json())


def test_read_passage_cuts_a_page_range_at_the_position(story: StoryLibrary):
    result = run(story, "read_passage", page_start=3, page_end=6)

    assert result.success
    assert result.envelope()["data"]["text"].startswith("Chapter 2.")
    assert result.envelope()["data"]["char_end"] == story.book.position.char_offset
    assert result.envelope()["data"]["truncated"] is True
    _assert_nothing_past(result.envelope()["data"]["text"])


def test_read_passage_around_a_chunk_stays_before_the_position(story: StoryLibrary):
    result = run(story, "read_passage", chunk_id="story-4")

    assert result.success
    assert "charnel houses" in result.envelope()["data"]["text"]
    assert result.envelope()["data"]["char_end"] <= story.book.position.char_offset
    _assert_nothing_past(result.envelope()["data"]["text"])


def test_read_passage_does_not_find_a_chunk_past_the_position(story: StoryLibrary):
    result = run(story, "read_passage", chunk_id="story-5")

    assert not result.success and result.error_code == "NOT_FOUND"


def test_read_passage_needs_a_chunk_or_a_page(story: StoryLibrary):
    result = run(story, "read_passage")

    assert not result.success and result.error_code == "INVALID_ARGUMENTS"


def test_read_passage_reports_an_unknown_page(story: StoryLibrary):
    result = run(story, "read_passage", page_start="99")

    assert not result.success and "no page 99" in result.error


def test_list_chapters_lists_only_chapters_started_before_the_position(story: StoryLibrary):
    result = run(story, "list_chapters")

    assert [c["title"] for c in result.envelope()["data"]["chapters"]] == ["Chapter 1", "Chapter 2"]
    assert [c["page"] for c in result.envelope()["data"]["chapters"]] == ["1", "3"]


def test_list_chapters_lists_all_chapters_when_the_whole_book_is_read(story: StoryLibrary):
    book = story.at(ReadingPosition())

    result = run(story, "list_chapters", book=book)

    assert len(result.envelope()["data"]["chapters"]) == 3
    assert result.envelope()["data"]["reading_limit"] == "the whole book"


# --- the query as written ----------------------------------------------------------------------
class RecordingSearcher:
    """A ``BookSearcher`` that remembers every query it gets and returns nothing."""

    def __init__(self) -> None:
        self.queries: list[tuple[str, int]] = []

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        self.queries.append((query, k))
        return []


def test_search_book_searches_the_query_exactly_as_written_once(story: StoryLibrary) -> None:
    recording = RecordingSearcher()
    services = replace(story.services(), searcher=recording)
    query = "  what did HE do next, after Ingolstadt?  "

    result = default_registry().execute(
        "search_book", ToolContext(book=story.book), services, {"query": query, "k": 4}
    )

    assert result.success
    assert recording.queries == [(query, 4)]
    assert "No passage read so far" in result.envelope()["data"]["note"]


def _voyage(limit: int | None = None) -> tuple[StoryLibrary, Chunk]:
    """One chapter of forty sentences and a chunk of three in its middle."""
    sentences = [f"Sentence {n} tells of the long voyage to the north." for n in range(40)]
    text = "Chapter 1. " + " ".join(sentences)
    start = text.index("Sentence 20 ")
    end = text.index("Sentence 23 ") - 1
    chunk = Chunk("voyage-1", "voyage", 0, text[start:end], start, end, 1, 1, "Chapter 1", 1)
    book = _book(
        "voyage", "Voyage", text, [Chapter(1, "Chapter 1", 0)], [Page(1, "1", 0, len(text))]
    )
    position = ReadingPosition(limit if limit is not None else len(text))
    return _stored(book.with_position(position), text, [chunk]), chunk


def test_read_passage_around_a_chunk_begins_and_ends_on_whole_sentences() -> None:
    """600 characters each side of a chunk cut sentences in two; the text read is widened to
    whole ones (a quote from it is a sentence, not "... in his own pay,")."""
    story, chunk = _voyage()
    data = run(story, "read_passage", chunk_id=chunk.id).envelope()["data"]
    text = data["text"]
    assert chunk.text in text
    assert text.startswith("Sentence ") and text.endswith("north."), text
    assert data["char_start"] < chunk.char_start - 600 or data["char_start"] == 0
    # never past the reader's position, though the sentence there goes on
    limit = story.text.index("Sentence 33 ") + len("Sentence 33 tells")
    near, chunk = _voyage(limit)
    data = run(near, "read_passage", chunk_id=chunk.id).envelope()["data"]
    assert data["char_end"] <= limit and "Sentence 34" not in data["text"]
