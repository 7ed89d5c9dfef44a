"""The offline policy's second ranking stage: passages ordered by the sentences that answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.agent.offline.ranking import SentenceRanking
from folio.agent.offline.strategy import last_ranked
from folio.app.evaluation.conversations import EvalConversation, EvalTurn, EvidenceMapper
from folio.app.evaluation.retrieval import AgentTurn, RetrievalEvaluation
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import StoredSentences
from folio.domain.llm import PromptMessage, PromptRole, ToolInvocation
from folio.domain.passages import (
    READ_PASSAGE,
    SEARCH_BOOK,
    Passage,
    PassageText,
    SearchResults,
    ToolOutcome,
    decode_tool_result,
)
from folio.domain.sentences import split_sentences
from tests.unit.test_book_tools import make_story
from tests.unit.test_eval_retrieval_core import BOOK, RecordingSearcher


@dataclass
class KeywordEmbedder:
    """A text's vector says whether it holds ``word``: the query and the one sentence that
    answers it point the same way, everything else away."""

    word: str = "hair"
    seen: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "keyword"

    @property
    def dimensions(self) -> int:
        return 2

    @property
    def relevance_floor(self) -> float:
        return 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.asarray(
            [[1.0, 0.0] if self.word in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32
        )


def passage(n: int, text: str) -> Passage:
    return Passage(f"c{n}", "Chapter 1", "1", "1", n * 100, n * 100 + 90, text)


FILLER = "The carriage stopped at the inn. Everyone went inside for supper."
PASSAGES = [passage(n, f"{FILLER} Passage {n} tells of the road.") for n in range(1, 6)]
ANSWER = passage(6, "They met in the lane. Her hair was red as autumn. She laughed.")


def test_the_passage_whose_sentence_answers_rises_into_the_first_five() -> None:
    ranked = SentenceRanking(KeywordEmbedder()).rank("What was her hair like?", [*PASSAGES, ANSWER])

    assert ANSWER in ranked[:5]
    assert ranked[0] == PASSAGES[0]  # the search's first stays first: both orders count
    assert sorted(p.chunk_id or "" for p in ranked) == sorted(
        p.chunk_id or "" for p in [*PASSAGES, ANSWER]
    )


def test_the_passages_beside_where_the_turn_before_answered_from_rise() -> None:
    """The anchor and its neighbours (within half its length) count as ranked first; a passage
    further on does not, nor one of another volume at the same offsets."""
    far = [passage(n, f"{FILLER} Passage {n} tells of the road.") for n in range(1, 10)]
    anchor = passage(8, "The last answer came from here.")
    other = replace(far[6], book_id="earlier")

    ranked = SentenceRanking(KeywordEmbedder()).rank(
        "Where did they go?", [*far[:6], other, far[7], far[8]], near=anchor
    )

    # c8 (the anchor itself) and c9 beside it, ranked eighth and ninth, come first; c7 of
    # another volume stays where the search put it, after c1-c6
    assert ranked[:3] == (far[7], far[8], far[0])
    assert ranked[-1] == other


@dataclass
class Kept:
    """Sentence vectors kept at import, by chunk id: ``SentenceVectorSource``."""

    kept: dict[str, StoredSentences]
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]:
        self.asked.append((book_id, tuple(chunk_ids)))
        return {i: self.kept[i] for i in chunk_ids if i in self.kept}


def kept_for(p: Passage, embedder: KeywordEmbedder, *, end: int | None = None) -> StoredSentences:
    vectors = embedder.embed(split_sentences(p.text))
    embedder.seen.clear()
    return StoredSentences(p.char_end if end is None else end, vectors)


def test_sentences_kept_at_import_are_not_embedded_again() -> None:
    embedder = KeywordEmbedder()
    answer = replace(ANSWER, chunk_id="book-1:6")
    first = replace(PASSAGES[0], chunk_id="book-1:1")
    source = Kept({"book-1:6": kept_for(answer, embedder), "book-1:1": kept_for(first, embedder)})

    others = [replace(p, chunk_id=f"book-1:{n}") for n, p in enumerate(PASSAGES[1:], 2)]

    ranked = SentenceRanking(embedder, source).rank(
        "What was her hair like?", [first, *others, answer]
    )

    assert ranked[0] == first and answer in ranked[:5]  # its kept sentence answered
    ids = tuple(f"book-1:{n}" for n in range(1, 7))
    assert source.asked == [("book-1", ids)]  # one read for the book
    # the question and the passages with nothing kept (c2-c5), never the kept ones
    assert embedder.seen == [
        "What was her hair like?",
        *(sentence for p in others for sentence in split_sentences(p.text)),
    ]


def test_a_passage_cut_at_the_reader_s_position_is_embedded_as_read() -> None:
    """Kept vectors are of the whole chunk: a cut passage's sentences are embedded as the reader
    sees them (its first split sentence may hold unread words in the chunk's: a dialogue tag
    cut short is not joined to its speech); a kept matrix of other text, or of another
    embedder's width, is not used."""
    embedder = KeywordEmbedder()
    whole = replace(ANSWER, chunk_id="b:6", text='"Where is it?" Bill asked her. Her hair was red.')
    cut = replace(whole, text='"Where is it?" Bill ask', char_end=whole.char_start + 23)
    other = replace(PASSAGES[0], chunk_id="b:1")
    wide = replace(PASSAGES[1], chunk_id="b:2")
    source = Kept(
        {
            "b:6": kept_for(whole, embedder),  # '"Where is it?" Bill asked her.' is one
            "b:1": StoredSentences(other.char_end, np.zeros((5, 2), dtype=np.float32)),
            "b:2": StoredSentences(wide.char_end, np.zeros((3, 7), dtype=np.float32)),
        }
    )

    SentenceRanking(embedder, source).rank("her hair", [cut, other, wide])

    assert embedder.seen == [
        "her hair",
        *split_sentences(cut.text),  # two: the speech, and "Bill ask"
        *split_sentences(other.text),
        *split_sentences(wide.text),
    ]
    assert len(split_sentences(cut.text)) == 2 and len(split_sentences(whole.text)) == 2


def test_the_turn_before_answered_from_the_first_passage_of_its_last_search() -> None:
    first = passage(3, "They rode on. Her hair was red as autumn. Nobody spoke.")
    other = passage(4, "Nothing to see here.")

    def searched(n: int, *found: Passage) -> list[PromptMessage]:
        call = ToolInvocation(SEARCH_BOOK, f"t{n}", {"query": "her hair"})
        outcome = ToolOutcome(True, SearchResults("her hair", "Chapter 1", found))
        return [
            PromptMessage.assistant("", (call,)),
            PromptMessage.tool_result(f"t{n}", outcome.to_json()),
        ]

    head = [
        PromptMessage.user("What was her hair like?"),
        *searched(1, other),  # a search recorded before the one answered from
        *searched(2, first, other),
        # read around the passage after: a wider span, not where the answer came from first
        PromptMessage.assistant("", (ToolInvocation(READ_PASSAGE, "t3", {"chunk_id": "c3"}),)),
        PromptMessage.tool_result(
            "t3",
            ToolOutcome(True, PassageText(replace(first, char_start=0), "Chapter 1")).to_json(),
        ),
        PromptMessage.assistant("Her hair was red as autumn."),
        PromptMessage.user("Hello!"),
        PromptMessage.assistant("Hello! Ask me about the book."),
    ]

    assert last_ranked(head) == first  # small talk passed over
    assert last_ranked(head[:1]) is None


def test_an_offline_turn_reports_the_order_it_answered_from() -> None:
    story = make_story()
    container = Container(
        load_settings(env={}, guardrail="none"),
        library=story.library,
        searcher=story.searcher,
        uow=InMemoryConversationStore().unit_of_work,
    )
    conversation = container.conversations.create(story.book.id, "ranking")
    result = container.chat(provider="offline").execute(conversation.id, "Where did Victor study?")

    found = dict(result.found)
    assert result.searches and result.searches[-1] in found
    answered = found[result.searches[-1]]
    assert 0 < len(answered) <= 5
    pool = story.searcher.search(story.book, result.searches[-1], k=10)
    assert {p.chunk_id for p in answered} <= {h.chunk.id for h in pool}
    # its search is kept in that order: the next turn starts from its first passage
    kept = container.conversations.get(conversation.id).messages
    results = [m for m in kept if m.role is PromptRole.TOOL_RESULT]
    order = decode_tool_result(results[-1].content).passages
    assert [p.chunk_id for p in order[: len(answered)]] == [p.chunk_id for p in answered]


def test_the_agent_is_scored_on_the_order_its_search_returned() -> None:
    """A turn whose ranking put the evidence first is scored rank 1, though the query searched
    again ranks it third; what the query finds beyond the turn's passages comes after them."""
    searcher = RecordingSearcher({"her hair": [(0, 10), (10, 20), (20, 30), (40, 50)]})

    class Ranked:
        def ask(self, question: str) -> AgentTurn:
            return AgentTurn(
                ("her hair",), 0, 0, 0, found={"her hair": ((20, 30), (0, 10), (10, 20))}
            )

        def add_gold_exchange(self, question: str, answer: str) -> None:
            pass

    def score(evidence: tuple[int, int]) -> float:
        evaluation = RetrievalEvaluation(
            BOOK,
            searcher,
            EvidenceMapper("same", "same"),
            modes=("agent",),
            new_session=Ranked,
        )
        turn = EvalTurn("What was her hair like?", ("red",), (evidence,))
        evaluation.run(EvalConversation("c", "b.txt", (turn,)))
        return float(evaluation.report()["agent"]["mrr"])

    assert score((22, 24)) == 1.0
    assert score((42, 44)) == 0.25  # after the turn's three passages


def test_a_wired_offline_turn_reads_the_sentence_vectors_its_import_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The composition root gives the offline policy the library: a turn reads each passage's
    kept sentence vectors (one read for the book) and finds them all, none embedded again."""
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, guardrail="none"))
    path = tmp_path / "story.txt"
    path.write_text(
        "Chapter 1\n\n"
        + " ".join(
            f"The keeper climbed the tower on night {n}. His lamp burned red." for n in range(80)
        )
        + "\n\nChapter 2\n\nHer hair was red as autumn. She rowed out to the wreck alone.\n",
        encoding="utf-8",
    )
    book = container.ingest.execute(path).book
    library = container.books
    asked: list[tuple[str, int]] = []
    read = library.sentence_vectors

    def recording(book_id: str, chunk_ids: Sequence[str]) -> dict[str, StoredSentences]:
        found = read(book_id, chunk_ids)
        asked.append((book_id, len(found)))
        assert len(found) == len(chunk_ids)  # every passage's kept at import
        return found

    monkeypatch.setattr(library, "sentence_vectors", recording)
    conversation = container.conversations.create(book.id, "wired")
    container.chat(provider="offline").execute(conversation.id, "What did the keeper carry?")

    assert asked and all(book_id == book.id and n > 1 for book_id, n in asked)
