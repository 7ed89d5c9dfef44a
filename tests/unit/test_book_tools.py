"""The book tools never let text at or past the reading position out (and the small story library
the agent tests share)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import pairwise

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory_books import InMemoryLibrary
from folio.agent.tools import ToolContext, ToolRegistry, ToolServices, default_registry
from folio.agent.tools.book import (
    CONVERSATION_QUERY_CHARS,
    continues_the_topic,
    conversation_query,
    search_in_conversation,
)
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
    book = Book(
        id=book_id,
        title="The Modern Prometheus",
        author="Mary Shelley",
        format=BookFormat.TXT,
        source_name="story.txt",
        content_hash=f"hash-{book_id}",
        page_count=len(pages),
        char_count=len(text),
        chapters=tuple(chapters),
        pages=tuple(pages),
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    book = book.with_position(book.position_at_page("4"))
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


# --- the conversation as a prior of search_book -------------------------------------------------
def test_a_search_in_a_conversation_ranks_what_the_reader_has_been_asking_about_higher(
    story: StoryLibrary,
) -> None:
    whole = story.book.with_position(ReadingPosition())
    question = "What did Victor do?"
    alone = [h.chunk.id for h in story.searcher.search(whole, question, k=6)]
    asked = ("Tell me about the creature and its yellow eye", question)

    fused = search_in_conversation(story.searcher, whole, question, asked, k=6)

    # page 5 (the creature opens its eye, Victor flees) was 4th for the question alone
    assert alone.index("story-5") == 3
    assert [h.chunk.id for h in fused].index("story-5") == 1
    assert len(fused) == 6 and len({h.chunk.id for h in fused}) == 6
    assert all(a.score >= b.score for a, b in pairwise(fused))


def test_a_first_question_and_a_quotation_are_searched_as_typed(story: StoryLibrary) -> None:
    whole = story.book.with_position(ReadingPosition())
    quote = 'Where does it say "burning passion"?'
    earlier = ("Tell me about the creature and its yellow eye",)
    for query, asked in (
        ("What did Victor do?", ("What did Victor do?",)),
        (quote, (*earlier, quote)),
    ):
        expected = story.searcher.search(whole, query, k=3)
        assert search_in_conversation(story.searcher, whole, query, asked, k=3) == expected


def test_search_book_uses_the_conversation_it_serves(story: StoryLibrary) -> None:
    whole = story.book.with_position(ReadingPosition())
    asked = ("Tell me about the creature and its yellow eye", "What did Victor do?")
    ctx = ToolContext(book=whole, questions=asked)

    result = default_registry().execute(
        "search_book", ctx, story.services(), {"query": "What did Victor do?", "k": 6}
    )

    ids = [p["chunk_id"] for p in result.envelope()["data"]["results"]]
    expected = search_in_conversation(story.searcher, whole, asked[-1], asked, k=6)
    assert ids == [h.chunk.id for h in expected]


class RankedSearcher:
    """Returns a fixed ranking of chunk ids per query."""

    def __init__(self, rankings: dict[str, list[str]]) -> None:
        self.rankings = rankings

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        return [
            SearchHit(Chunk(cid, book.id, i, cid, i, i + 1, 1, 1), 0.0, cid, "1", "1")
            for i, cid in enumerate(self.rankings[query][:k])
        ]


def test_a_question_about_what_the_reader_already_asked_about_leans_on_the_conversation(
    story: StoryLibrary,
) -> None:
    """Asked as typed, a question naming only earlier questions' names continues their topic:
    the conversation's ranking counts double. A new name, or a rewritten query, fuses equally."""
    asked = ("Who is Captain Vane?", "What did he forget?", "What does Vane ask the timing of?")
    new_name = (*asked[:2], "What does Leo ask the timing of?")
    own = ["a", "b", "c", "d", "e", "f", "g", "target"]  # k=10: a 1/11 + 1/16 (equal weights)
    around = ["target", "v", "w", "x", "y", "a"]  # beats target 1/18 + 1/11; not 1/18 + 2/11
    searcher = RankedSearcher(
        {
            asked[-1]: own,
            new_name[-1]: own,
            "Vane's timing": own,
            conversation_query(asked): around,
            conversation_query(new_name): around,
        }
    )

    def fused(query: str, questions: tuple[str, ...]) -> list[str]:
        hits = search_in_conversation(searcher, story.book, query, questions, k=3)
        return [h.chunk.id for h in hits]

    assert continues_the_topic(asked[-1], asked)
    assert fused(asked[-1], asked)[0] == "target"
    for query, questions in ((new_name[-1], new_name), ("Vane's timing", asked)):
        assert not continues_the_topic(query, questions)
        assert fused(query, questions)[0] == "a"
    assert not continues_the_topic("Who was there?", (*asked[:2], "Who was there?"))


def test_the_conversation_prior_is_bounded_and_keeps_the_latest_messages() -> None:
    old = [f"question number {i} " + "x" * 80 for i in range(100)]  # ~10,000 characters
    query = conversation_query([*old, "What now?"])

    assert query is not None and query.startswith("What now? ")
    earlier = query.removeprefix("What now? ")
    assert len(earlier) <= CONVERSATION_QUERY_CHARS
    assert earlier.endswith(old[-1]) and "question number 0 " not in earlier
    assert conversation_query(["What now?"]) is None
