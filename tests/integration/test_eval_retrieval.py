"""The retrieval evaluation on the real CoQA dev book, through a real ``Container`` (SQLite in a
temporary FOLIO_HOME, the hashing embedder, the offline provider): evidence maps onto the imported
text, the modes behave as documented, and gold-history sessions are stored like any turn."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from folio.app.evaluation.conversations import (
    EvalConversation,
    EvidenceMapper,
    load_conversations,
)
from folio.app.evaluation.retrieval import RetrievalEvaluation
from folio.app.evaluation.sessions import ReplaySession
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.llm import PromptRole

pytestmark = pytest.mark.data


class World:
    def __init__(self, home: Path, eval_dir: Path) -> None:
        self.raw_path = eval_dir / "coqa_anthology_dev.txt"
        self.conversations = load_conversations(eval_dir / "coqa_anthology_dev.conversations.jsonl")
        settings = load_settings(
            env={"FOLIO_HOME": str(home)}, embedding_model="hashing", conversation_store="sqlite"
        )
        self.container = Container(settings)
        self.book: Book = self.container.ingest.execute(self.raw_path).book
        self.text = self.container.books.get_text(self.book.id)
        self.raw = self.raw_path.read_text(encoding="utf-8")
        self.mapper = EvidenceMapper(self.raw, self.text)

    def session(self, *, gold_history: bool) -> ReplaySession:
        c = self.container
        return ReplaySession(
            c.chat(provider="offline"),
            c.conversations,
            c.conversation_uow,
            self.book.id,
            gold_history=gold_history,
        )

    def evaluation(
        self, *, modes: tuple[str, ...], gold_history: bool = False
    ) -> RetrievalEvaluation:
        return RetrievalEvaluation(
            self.book,
            self.container.searcher,
            self.mapper,
            modes=modes,
            new_session=lambda: self.session(gold_history=gold_history),
            gold_history=gold_history,
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> World:
    return World(tmp_path_factory.mktemp("eval-home"), shared_data / "eval")


def test_the_book_is_imported_from_its_file(world: World) -> None:
    digest = hashlib.sha256(world.raw_path.read_bytes()).hexdigest()
    assert world.container.books.find_by_hash(digest) == world.book
    assert world.book.page_count > 10


def test_every_evidence_span_maps_onto_the_same_words_of_the_imported_text(world: World) -> None:
    spans = [span for c in world.conversations for t in c.turns for span in t.evidence]
    assert len(spans) > 700
    for start, end in spans:
        mapped = world.mapper.map(start, end)
        assert mapped is not None, (start, end, world.raw[start:end])
        a, b = mapped
        assert world.text[a:b].split() == world.raw[start:end].split()


def _first(world: World, n: int) -> list[EvalConversation]:
    return world.conversations[:n]


def test_earlier_turns_help_follow_ups_and_cost_nothing_in_the_plain_modes(world: World) -> None:
    evaluation = world.evaluation(modes=("question", "history"))
    for conversation in _first(world, 5):
        evaluation.run(conversation)
    report = evaluation.report()
    turns = sum(len(c.turns) for c in _first(world, 5))
    assert report["question"]["turns"] == report["history"]["turns"] == turns
    assert report["history"]["recall@10"] > report["question"]["recall@10"]
    assert report["question"]["llm_calls_per_turn"] == 0


def test_the_offline_agent_searches_better_than_the_question_alone(world: World) -> None:
    evaluation = world.evaluation(modes=("agent", "question"))
    for conversation in _first(world, 3):
        evaluation.run(conversation)
    report = evaluation.report()
    agent = report["agent"]
    assert agent["recall@10"] > report["question"]["recall@10"]
    assert agent["llm_calls_per_turn"] == 0  # offline: no model
    assert agent["tokens_per_turn"] > 0


def test_gold_history_asks_each_question_in_a_fresh_conversation_holding_the_reference(
    world: World,
) -> None:
    conversation = _first(world, 1)[0]
    turns = conversation.turns[:3]
    short = EvalConversation(conversation.id, conversation.book, turns)
    before = {s.conversation.id for s in world.container.conversations.summaries()}
    world.evaluation(modes=("agent",), gold_history=True).run(short)
    created = [
        s.conversation
        for s in world.container.conversations.summaries()
        if s.conversation.id not in before
    ]
    assert len(created) == len(turns)
    with world.container.conversation_uow() as uow:
        stored = [uow.messages.get_by_conversation(c.id) for c in created]
    last = max(stored, key=len)
    users = [m.content for m in last if m.role is PromptRole.USER]
    answers = [m.content for m in last if m.role is PromptRole.ASSISTANT and m.turn_number < 3]
    assert users == [t.question for t in turns]
    assert answers == [t.answers[0] for t in turns[:2]]
