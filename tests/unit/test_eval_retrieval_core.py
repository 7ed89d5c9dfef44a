"""The retrieval evaluation's core: hit ranks, recall/MRR arithmetic, the three query modes, gold
history, and reading the evaluation files (evidence mapping, malformed lines, missing books)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.app.evaluation.conversations import (
    EvalConversation,
    EvalDataError,
    EvalTurn,
    EvidenceMapper,
    find_book_file,
    load_conversations,
)
from folio.app.evaluation.retrieval import (
    AgentTurn,
    ModeScore,
    RetrievalEvaluation,
    first_hit_rank,
)
from folio.app.evaluation.sessions import ReplaySession
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book, BookFormat, Chunk, SearchHit
from folio.domain.llm import PromptRole
from tests.unit.test_book_tools import make_story


def hit(start: int, end: int, chunk_id: str | None = None) -> SearchHit:
    chunk = Chunk(chunk_id or f"c{start}", "b", 0, "x" * (end - start), start, end, 1, 1)
    return SearchHit(chunk, 1.0, "", "1", "1")


# --- first_hit_rank ------------------------------------------------------------------------------
def test_a_hit_is_the_first_passage_overlapping_any_evidence_span() -> None:
    hits = [hit(0, 100), hit(100, 200), hit(200, 300)]
    assert first_hit_rank(hits, [(250, 260)]) == 3
    assert first_hit_rank(hits, [(500, 600), (150, 160)]) == 2
    assert first_hit_rank(hits, [(90, 260)]) == 1  # overlaps all three: the first counts


def test_spans_are_end_exclusive_so_touching_is_not_overlapping() -> None:
    hits = [hit(100, 200)]
    assert first_hit_rank(hits, [(200, 210)]) is None
    assert first_hit_rank(hits, [(90, 100)]) is None
    assert first_hit_rank(hits, [(199, 200)]) == 1
    assert first_hit_rank(hits, [(90, 101)]) == 1


def test_no_hit_without_evidence_or_without_passages() -> None:
    assert first_hit_rank([hit(0, 100)], []) is None
    assert first_hit_rank([], [(0, 10)]) is None


# --- ModeScore -----------------------------------------------------------------------------------
def test_recall_and_mrr_are_over_scored_turns_only() -> None:
    score = ModeScore((5, 10))
    for rank in (1, 3, None, 7):
        score.add(rank, searches=1)
    score.add(None, searches=2, scored=False)  # a yes/no turn: in the history, not scored
    summary = score.summary()
    assert summary["turns"] == 5
    assert summary["turns_scored"] == 4
    assert summary["recall@5"] == 0.5  # ranks 1 and 3
    assert summary["recall@10"] == 0.75  # and 7
    assert summary["mrr"] == round((1 + 1 / 3 + 1 / 7) / 4, 4)
    assert summary["searches_per_turn"] == round(6 / 5, 3)


def test_cost_per_turn_counts_every_turn() -> None:
    score = ModeScore((5,))
    score.add(1, searches=1, llm_calls=2, tokens=300)
    score.add(None, searches=0, llm_calls=1, tokens=100, scored=False)
    summary = score.summary()
    assert summary["llm_calls_per_turn"] == 1.5
    assert summary["tokens_per_turn"] == 200.0
    assert summary["searches_per_turn"] == 0.5


def test_an_empty_score_reports_zeros_not_a_division_error() -> None:
    assert ModeScore((5,)).summary()["recall@5"] == 0.0


# --- RetrievalEvaluation -------------------------------------------------------------------------
BOOK = Book("b", "Book", None, BookFormat.TXT, "b.txt", "h", 1, 1000)


@dataclass
class RecordingSearcher:
    """Returns passages chosen by query: ``answers[query]`` -> list of (start, end)."""

    answers: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        self.queries.append(query)
        return [hit(s, e) for s, e in self.answers.get(query, [])][:k]


@dataclass
class FakeSession:
    searches: dict[str, tuple[str, ...]]
    asked: list[str] = field(default_factory=list)
    gold: list[tuple[str, str]] = field(default_factory=list)

    def ask(self, question: str) -> AgentTurn:
        self.asked.append(question)
        return AgentTurn(
            self.searches.get(question, ()), llm_calls=2, input_tokens=10, output_tokens=5
        )

    def add_gold_exchange(self, question: str, answer: str) -> None:
        self.gold.append((question, answer))


def conversation(*turns: tuple[str, list[tuple[int, int]]]) -> EvalConversation:
    return EvalConversation(
        "conv",
        "b.txt",
        tuple(EvalTurn(q, (f"answer to {q}",), tuple(ev)) for q, ev in turns),
    )


def identity_mapper() -> EvidenceMapper:
    return EvidenceMapper("same", "same")


def test_history_mode_appends_the_earlier_questions_to_the_question() -> None:
    searcher = RecordingSearcher()
    evaluation = RetrievalEvaluation(BOOK, searcher, identity_mapper(), modes=("history",))
    evaluation.run(
        conversation(
            ("Who is Anne?", [(0, 5)]), ("Where did she go?", [(0, 5)]), ("Why?", [(0, 5)])
        )
    )
    assert searcher.queries == [
        "Who is Anne?",
        "Where did she go? Who is Anne?",
        "Why? Who is Anne? Where did she go?",
    ]


def test_question_mode_searches_the_question_alone_and_scores_its_rank() -> None:
    searcher = RecordingSearcher({"Who is Anne?": [(0, 10), (10, 20)]})
    evaluation = RetrievalEvaluation(BOOK, searcher, identity_mapper(), modes=("question",))
    evaluation.run(conversation(("Who is Anne?", [(12, 14)]), ("And Bob?", [(12, 14)])))
    summary = evaluation.report()["question"]
    assert searcher.queries == ["Who is Anne?", "And Bob?"]
    assert summary["mrr"] == 0.25  # rank 2, then no hit
    assert summary["recall@5"] == 0.5


def test_a_turn_without_evidence_is_replayed_but_not_searched_or_scored() -> None:
    searcher = RecordingSearcher()
    evaluation = RetrievalEvaluation(BOOK, searcher, identity_mapper(), modes=("question",))
    evaluation.run(conversation(("Was she glad?", []), ("Who is Anne?", [(0, 5)])))
    summary = evaluation.report()["question"]
    assert searcher.queries == ["Who is Anne?"]
    assert (summary["turns"], summary["turns_scored"]) == (2, 1)


def test_agent_mode_ranks_the_merged_results_of_every_search_the_turn_made() -> None:
    searcher = RecordingSearcher({"Anne": [(0, 10), (10, 20)], "Anne home": [(10, 20), (30, 40)]})
    session = FakeSession({"Where did she go?": ("Anne", "Anne home")})
    evaluation = RetrievalEvaluation(
        BOOK, searcher, identity_mapper(), modes=("agent",), new_session=lambda: session
    )
    evaluation.run(conversation(("Where did she go?", [(35, 36)])))
    summary = evaluation.report()["agent"]
    # the latest search first: (10,20), (30,40), then (0,10); the duplicate is dropped
    assert summary["mrr"] == 0.5
    assert summary["searches_per_turn"] == 2.0
    assert summary["llm_calls_per_turn"] == 2.0


def test_gold_history_gives_the_session_each_reference_exchange_after_its_turn() -> None:
    session = FakeSession({})
    evaluation = RetrievalEvaluation(
        BOOK,
        RecordingSearcher(),
        identity_mapper(),
        modes=("agent",),
        new_session=lambda: session,
        gold_history=True,
    )
    evaluation.run(conversation(("Q1", [(0, 1)]), ("Q2", [(0, 1)])))
    assert session.asked == ["Q1", "Q2"]
    assert session.gold == [("Q1", "answer to Q1"), ("Q2", "answer to Q2")]


def test_without_gold_history_the_session_keeps_its_own_answers() -> None:
    session = FakeSession({})
    evaluation = RetrievalEvaluation(
        BOOK, RecordingSearcher(), identity_mapper(), modes=("agent",), new_session=lambda: session
    )
    evaluation.run(conversation(("Q1", [(0, 1)]), ("Q2", [(0, 1)])))
    assert session.gold == []


# --- ReplaySession (the real chat pipeline, in-memory stores, scripted model) -------------------
def _session(provider: ScriptedChatProvider, *, gold_history: bool) -> ReplaySession:
    story = make_story()
    store = InMemoryConversationStore()
    container = Container(
        load_settings(env={}, guardrail="none"),
        provider=provider,
        uow=store.unit_of_work,
        library=story.library,
        searcher=story.searcher,
    )
    chat = container.chat()
    conversations = container.conversations
    return ReplaySession(
        chat, conversations, store.unit_of_work, story.book.id, gold_history=gold_history
    )


def _user_and_assistant_texts(provider: ScriptedChatProvider) -> list[str]:
    last = provider.calls[-1].messages
    return [m.content for m in last if m.role in (PromptRole.USER, PromptRole.ASSISTANT)]


def test_a_gold_history_session_asks_each_question_after_the_reference_exchanges() -> None:
    provider = ScriptedChatProvider(["system answer one", "system answer two"])
    session = _session(provider, gold_history=True)
    session.ask("Who is Victor?")
    session.add_gold_exchange("Who is Victor?", "A Genevan student.")
    turn = session.ask("Where did he study?")
    assert _user_and_assistant_texts(provider) == [
        "Who is Victor?",
        "A Genevan student.",
        "Where did he study?",
    ]
    assert turn.llm_calls == 1


def test_a_plain_session_continues_one_conversation_with_its_own_answers() -> None:
    provider = ScriptedChatProvider(["system answer one", "system answer two"])
    session = _session(provider, gold_history=False)
    session.ask("Who is Victor?")
    session.ask("Where did he study?")
    assert _user_and_assistant_texts(provider) == [
        "Who is Victor?",
        "system answer one",
        "Where did he study?",
    ]


def test_a_session_reports_the_searches_of_the_turn() -> None:
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": "Victor laboratory"}), "He worked at night."]
    )
    turn = _session(provider, gold_history=False).ask("Where did he work?")
    assert turn.searches == ("Victor laboratory",)
    assert turn.llm_calls == 2


# --- reading the files ---------------------------------------------------------------------------
def test_evidence_maps_onto_text_whose_boilerplate_and_line_ends_were_normalised() -> None:
    raw = "PROJECT HEADER\r\n\r\nCHAPTER 1.\r\nAnne went home. Later, Anne went home again.\r\n"
    extracted = "CHAPTER 1.\nAnne went home. Later, Anne went home again.\n"
    start = raw.index("Anne went home again")
    mapper = EvidenceMapper(raw, extracted)
    begin, end = mapper.map(start, start + len("Anne went home"))  # type: ignore[misc]
    assert extracted[begin:end] == "Anne went home"
    assert begin == extracted.index("Anne went home again")  # the context picks the right one


def test_evidence_that_is_identical_text_maps_to_itself() -> None:
    assert EvidenceMapper("abc def", "abc def").map(4, 7) == (4, 7)


def test_evidence_that_is_blank_or_gone_from_the_text_maps_to_nothing() -> None:
    mapper = EvidenceMapper("HEADER\n\nAnne went home.", "Anne went home.")
    assert mapper.map(6, 8) is None  # only white space
    assert mapper.map(0, 6) is None  # the header was dropped by the parser


def test_a_malformed_line_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "set.conversations.jsonl"
    good = '{"id": "1", "book": "b.txt", "turns": [{"question": "Q?", "evidence": [[0, 3]]}]}'
    path.write_text(good + "\n\n" + '{"id": "2", "book": "b.txt"}\n', encoding="utf-8")
    with pytest.raises(EvalDataError, match=r"set\.conversations\.jsonl:3"):
        load_conversations(path)
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match=r"set\.conversations\.jsonl:2"):
        load_conversations(path)


def test_a_well_formed_file_loads_every_conversation(tmp_path: Path) -> None:
    path = tmp_path / "set.conversations.jsonl"
    path.write_text(
        '{"id": "1", "book": "b.txt", "turns": [{"question": "Q?", "answers": ["A"], '
        '"evidence": [[0, 3]]}, {"question": "Yes?", "answers": ["yes"], "evidence": []}]}\n',
        encoding="utf-8",
    )
    [loaded] = load_conversations(path)
    assert loaded.book == "b.txt"
    assert loaded.turns[0] == EvalTurn("Q?", ("A",), ((0, 3),))
    assert loaded.turns[1].evidence == ()


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.conversations.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="no conversations"):
        load_conversations(path)


def test_a_missing_book_is_a_clear_error_saying_where_it_looked(tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    with pytest.raises(EvalDataError) as info:
        find_book_file("missing.txt", beside=tmp_path, books_dir=books)
    message = str(info.value)
    assert "missing.txt" in message
    assert str(tmp_path / "missing.txt") in message and str(books / "missing.txt") in message
    assert "--books-dir" in message


def test_a_book_is_found_beside_the_file_or_in_the_books_dir(tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "b.txt").write_text("text", encoding="utf-8")
    assert find_book_file("b.txt", beside=tmp_path, books_dir=books) == books / "b.txt"
    (tmp_path / "b.txt").write_text("text", encoding="utf-8")
    assert find_book_file("b.txt", beside=tmp_path, books_dir=books) == tmp_path / "b.txt"
