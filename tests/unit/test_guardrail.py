"""The out-of-scope guardrail: scores, thresholds, and the messages it must never block."""

from __future__ import annotations

from dataclasses import replace

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider
from folio.agent.guardrail import Guardrail, lexical_overlap
from folio.domain.books import Book, ReadingPosition, SearchHit
from folio.domain.errors import ConfigError
from tests.unit.test_book_tools import StoryLibrary, make_story


class WithoutSimilarity:
    """The story's searcher, as an index that does not compute similarities."""

    def __init__(self, story: StoryLibrary) -> None:
        self.inner = story.searcher

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        return [replace(h, similarity=None) for h in self.inner.search(book, query, k=k)]


class FixedSimilarity:
    def __init__(self, story: StoryLibrary, similarity: float) -> None:
        self.inner, self.similarity = story.searcher, similarity
        self.queries: list[str] = []

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        self.queries.append(query)
        hits = self.inner.search(book, "Victor", k=k)  # not a lexical match of the query
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


def test_follow_ups_and_small_talk_are_never_blocked_or_searched(story):
    searcher = FixedSimilarity(story, 0.0)
    guardrail = Guardrail("retrieval", searcher=searcher)
    history = [("Who is Victor?", "A student of natural philosophy.")]

    for message, past in [("what happened to him?", history), ("thanks!", []), ("hello", [])]:
        verdict = guardrail.check(story.book, message, past)
        assert verdict.allowed and verdict.score is None, message
    assert searcher.queries == []


def test_in_a_conversation_a_question_naming_nothing_asks_about_the_scene(story):
    """'What was the weather like?' at turn 11 is about the story even in a book that never uses
    the word; the reader's own question ('How do I...') is still judged, and so is the same
    question opening a conversation."""
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))
    history = [("Who is Victor?", "A student of natural philosophy.")]
    assert "weather" not in story.text.lower()

    for question in ("What was the weather like?", "Who were pitted against each other?"):
        verdict = guardrail.check(story.book, question, history)
        assert verdict.allowed and verdict.score is None, question
    assert not guardrail.check(story.book, "What was the weather like?", []).allowed
    for mine in ("How do I bake sourdough bread?", "Can you help me with my taxes?"):
        assert not guardrail.check(story.book, mine, history).allowed, mine


def test_a_question_about_the_reader_s_own_life_is_refused_though_it_shares_words(story):
    """'my', 'I' and a word the book never uses: the reader's own business, even when other
    words ('night', 'study') are the book's and would pass the lexical overlap."""
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))
    assert guardrail.check(story.book, "How do we study at night?", []).allowed

    verdict = guardrail.check(story.book, "How do I study for my driving test at night?", [])

    assert not verdict.allowed
    assert "never uses 'driving'" in verdict.reason


@pytest.mark.parametrize(
    "question",
    [
        "I don't get why Victor fled the laboratory",  # a name the book uses
        "Why was I in horror when the creature opened its eye?",  # every word the book's
        "Was my horror like the creature's?",
    ],
)
def test_the_reader_s_own_voice_about_the_book_passes(story, question):
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))

    assert guardrail.check(story.book, question, []).allowed


def test_a_close_passage_makes_a_first_person_question_the_book_s_whatever_its_words(story):
    close = Guardrail("retrieval", searcher=FixedSimilarity(story, 0.45))
    far = Guardrail("retrieval", searcher=FixedSimilarity(story, 0.3))
    question = "Is my view of the monster as a metaphor for technology right?"

    assert close.check(story.book, question, []).allowed
    assert not far.check(story.book, question, []).allowed


def test_questions_about_the_book_itself_pass(story):
    guardrail = Guardrail("retrieval", searcher=FixedSimilarity(story, 0.0))

    assert guardrail.check(story.book, "What is the main theme of this novel?", []).allowed


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

    assert lexical_overlap("Did Clerval like opera?", hits) == pytest.approx(0.5)


def test_a_name_met_only_past_the_position_is_still_about_the_book(story):
    """Scope is the whole book: "Who is Justine?" early in the novel is answered honestly ("not
    yet"), never refused as off-topic; the verdict carries only a score, no text."""
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))
    early = story.book  # read to page 4; Justine appears on page 6
    assert "Justine" not in story.text[: early.position.char_offset]

    verdict = guardrail.check(early, "Who is Justine Moritz?", [])

    assert verdict.allowed and verdict.score == 1.0
    assert not guardrail.check(early, "How do I bake sourdough bread?", []).allowed


def test_a_name_the_book_uses_is_never_refused_whatever_else_is_asked(story):
    guardrail = Guardrail("retrieval", searcher=WithoutSimilarity(story))
    question = "Did Alphonse bake sourdough pastry for the baking contest dinner?"  # 1 of 7

    verdict = guardrail.check(story.book, question, [])

    assert verdict.allowed and verdict.score == 1.0 and "name" in verdict.reason
    whole = story.book.with_position(ReadingPosition())  # a reader of the whole book too
    assert guardrail.check(whole, question, []).allowed
    assert not guardrail.check(story.book, "What did Napoleon bake for dinner?", []).allowed


class EveryWordMatches(FixedSimilarity):
    """An index that matches any word lexically, with passages close to no question."""

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        return [replace(h, lexical_rank=1) for h in super().search(book, query, k=k)]


def test_the_every_word_rule_is_for_short_questions_only(story):
    """A short question in the book's words passes; a long message is judged by its score and
    is not searched word by word (a bounded number of searches)."""
    short = EveryWordMatches(story, 0.0)
    assert Guardrail("retrieval", searcher=short).check(story.book, "zorp blick?", []).allowed
    assert len(short.queries) == 4  # the question, on the whole book, then each word

    searcher = EveryWordMatches(story, 0.0)
    long = " ".join(f"zorp{letter}" for letter in "abcdefghijklmnopqrst")  # 20 words
    assert not Guardrail("retrieval", searcher=searcher).check(story.book, long, []).allowed
    assert len(searcher.queries) == 2  # the question, then on the whole book
