"""The optional out-of-scope guardrail: scores and thresholds of an opening message."""

from __future__ import annotations

from dataclasses import replace

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider
from folio.agent.guardrail import Guardrail, lexical_overlap
from folio.domain.books import Book, SearchHit
from folio.domain.errors import ConfigError
from folio.domain.window import ReadingWindow
from tests.unit.test_book_tools import StoryLibrary, make_story


class WithoutSimilarity:
    """The story's searcher, as an index that does not compute similarities."""

    def __init__(self, story: StoryLibrary) -> None:
        self.inner = story.searcher

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]:
        hits = self.inner.search(book, query, k=k, window=window)
        return [replace(h, similarity=None) for h in hits]


class FixedSimilarity:
    def __init__(self, story: StoryLibrary, similarity: float) -> None:
        self.inner, self.similarity = story.searcher, similarity
        self.queries: list[str] = []

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]:
        self.queries.append(query)
        hits = self.inner.search(book, "Victor", k=k, window=window)  # no lexical match
        return [replace(h, similarity=self.similarity, lexical_rank=None) for h in hits]


@pytest.fixture(scope="module")
def story() -> StoryLibrary:
    return make_story()


def test_mode_none_lets_everything_through_unscored(story):
    verdict = Guardrail("none").check(story.book, "How do I bake sourdough bread?", [])

    assert verdict.allowed and verdict.score is None


@pytest.mark.parametrize(
    "question", ["How do I bake sourdough bread?", "Write a python function that sorts a list"]
)
def test_a_question_with_nothing_in_common_with_the_book_is_blocked(story, question):
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))

    verdict = guardrail.check(story.book, question, [])

    assert not verdict.allowed
    assert verdict.score == 0.0


def test_a_question_about_the_books_people_and_places_passes(story):
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))

    verdict = guardrail.check(story.book, "What did Victor study at Ingolstadt?", [])

    assert verdict.allowed and verdict.score == 1.0  # victor, study, ingolstadt


def test_the_best_similarity_is_the_score_when_the_index_computes_it(story):
    low = Guardrail("retrieval", searcher=FixedSimilarity(story, 0.05), threshold=0.3)
    high = Guardrail("retrieval", searcher=FixedSimilarity(story, 0.6), threshold=0.3)

    assert low.check(story.book, "bake sourdough bread", []).allowed is False
    verdict = high.check(story.book, "bake sourdough bread", [])
    assert verdict.allowed and verdict.score == 0.6


def test_in_a_conversation_nothing_is_judged_or_searched(story):
    """A later message takes its topic from the conversation: no word rule reads it."""
    searcher = FixedSimilarity(story, 0.0)
    guardrail = Guardrail("retrieval", searcher=searcher)
    history = [("Who is Victor?", "A student of natural philosophy.")]

    for message in ("what happened to him?", "thanks!", "What was the weather like?"):
        verdict = guardrail.check(story.book, message, history)
        assert verdict.allowed and verdict.score is None, message
    assert searcher.queries == []
    assert not guardrail.check(story.book, "What was the weather like?", []).allowed


def test_the_llm_mode_uses_the_providers_rating(story):
    provider = ScriptedChatProvider(["0.1", "Relevance: 0.9", "no idea"])
    guardrail = Guardrail("llm")

    low = guardrail.check(story.book, "bake sourdough bread", [], provider)
    high = guardrail.check(story.book, "Alchemists Agrippa and Paracelsus", [], provider)
    unreadable = guardrail.check(story.book, "bake a cake", [], provider)

    assert (low.allowed, low.score, low.llm_calls) == (False, 0.1, 1)
    assert (high.allowed, high.score) == (True, 0.9)
    assert unreadable.allowed and unreadable.score is None
    assert "The Modern Prometheus" in provider.calls[0].messages[0].content


def test_the_redirect_names_the_book(story):
    assert (
        Guardrail("none")
        .redirect(story.book)
        .startswith("I can only help with questions about The Modern Prometheus")
    )


def test_the_retrieval_mode_needs_a_searcher():
    with pytest.raises(ConfigError):
        Guardrail("retrieval")


def test_lexical_overlap_is_the_share_of_content_words_found(story):
    hits = story.searcher.search(story.book, "Clerval poetry", k=2)

    # of clerval, like and opera (stopwords do not count) only clerval is found
    assert lexical_overlap("Did Clerval like opera?", hits) == pytest.approx(1 / 3)


def test_a_name_met_only_past_the_position_is_still_about_the_book(story):
    """Scope is the whole book: "Who is Justine?" early in the novel is answered honestly ("not
    yet"), never refused as off-topic; the verdict carries only a score, no text."""
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))
    early = story.book  # read to page 4; Justine appears on page 6
    assert "Justine" not in story.text[: early.position.char_offset]

    verdict = guardrail.check(early, "Who is Justine Moritz?", [])

    assert verdict.allowed and verdict.score == 1.0
    assert not guardrail.check(early, "How do I bake sourdough bread?", []).allowed
