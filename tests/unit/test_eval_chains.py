"""Conversations that change subject for the retrieval evaluation: chaining conversations into one
session, quote turns, and the buckets they are scored in (fake searcher and session)."""

from __future__ import annotations

from folio.app.evaluation.chains import (
    QUOTE_TEMPLATE,
    chain_conversations,
    join,
    quote_of,
    quote_turns,
)
from folio.app.evaluation.conversations import EvalConversation, EvalTurn
from folio.app.evaluation.haystack import build_haystack
from folio.app.evaluation.retrieval import RetrievalEvaluation, turn_buckets
from folio.domain.search import quoted_phrases
from tests.unit.test_eval_retrieval_core import (
    BOOK,
    FakeSession,
    RecordingSearcher,
    conversation,
    identity_mapper,
)


def story(name: str, questions: int, *, book: str = "b.txt") -> EvalConversation:
    turns = tuple(EvalTurn(f"{name} q{i}", (), ((0, 5),)) for i in range(1, questions + 1))
    return EvalConversation(name, book, turns)


# --- chaining ------------------------------------------------------------------------------------
def test_chaining_joins_consecutive_conversations_of_a_book_and_marks_each_switch() -> None:
    items = [story("a1", 2), story("b1", 1, book="other.txt"), story("a2", 3), story("a3", 2)]
    chained = chain_conversations(items, 2)
    assert [c.id for c in chained] == ["a1+a2", "a3", "b1"]
    first = chained[0]
    assert [t.question for t in first.turns] == ["a1 q1", "a1 q2", "a2 q1", "a2 q2", "a2 q3"]
    assert first.switches == (2,)  # the turn that starts the second story
    assert chained[1].switches == chained[2].switches == ()
    assert {c.book for c in chained[:2]} == {"b.txt"}


def test_a_chain_of_one_changes_nothing() -> None:
    items = [story("a1", 2), story("a2", 3)]
    assert chain_conversations(items, 1) == items


def test_every_turn_is_kept_in_order_and_three_parts_switch_twice() -> None:
    items = [story("a1", 2), story("a2", 3), story("a3", 4), story("a4", 1)]
    [three, one] = chain_conversations(items, 3)
    assert three.switches == (2, 5)
    assert [t for c in items for t in c.turns] == [*three.turns, *one.turns]


def test_joining_sessions_that_already_switch_keeps_their_switches() -> None:
    joined = join([join([story("a", 2), story("b", 2)]), join([story("c", 3), story("d", 1)])])
    assert joined.switches == (2, 4, 7)


# --- scoring a session that changes subject ------------------------------------------------------
def test_the_history_of_a_chained_session_carries_the_other_storys_questions() -> None:
    searcher = RecordingSearcher()
    evaluation = RetrievalEvaluation(BOOK, searcher, identity_mapper(), modes=("history",))
    [session] = chain_conversations([story("a", 1), story("b", 2)], 2)
    evaluation.run(session)
    assert searcher.queries == ["a q1", "b q1 a q1", "b q2 a q1 b q1"]


def test_the_agent_answers_a_chained_session_as_one_conversation() -> None:
    sessions: list[FakeSession] = []

    def new_session() -> FakeSession:
        sessions.append(FakeSession({}))
        return sessions[-1]

    evaluation = RetrievalEvaluation(
        BOOK, RecordingSearcher(), identity_mapper(), modes=("agent",), new_session=new_session
    )
    evaluation.run(chain_conversations([story("a", 2), story("b", 2)], 2)[0])
    assert len(sessions) == 1
    assert sessions[0].asked == ["a q1", "a q2", "b q1", "b q2"]


def test_the_first_turns_after_a_switch_are_scored_apart_and_depth_counts_the_session() -> None:
    # the question alone finds the evidence only for the first story's questions
    first = {f"a q{i}": [(0, 10)] for i in range(1, 6)}
    evaluation = RetrievalEvaluation(
        BOOK, RecordingSearcher(first), identity_mapper(), modes=("question",)
    )
    evaluation.run(chain_conversations([story("a", 5), story("b", 5)], 2)[0])
    report = evaluation.report()
    assert report["question"]["turns_scored"] == 10
    assert report["question"]["recall@5"] == 0.5
    assert report["question after switch 1-3"]["turns_scored"] == 3
    assert report["question after switch 1-3"]["recall@5"] == 0.0
    assert report["question after switch 4+"]["turns_scored"] == 2
    assert report["question turns 1-3"]["recall@5"] == 1.0
    assert report["question turns 4-9"]["turns_scored"] == 6  # turns 4-5 of a, 1-4 of b
    assert report["question turns 10+"]["turns_scored"] == 1
    assert "question quotes" not in report


def test_turn_buckets_name_depth_switch_and_quotes() -> None:
    quoted = EvalTurn('Where does it say "x y z"?', (), ((0, 1),), quoted=True)
    session = EvalConversation("s", "b.txt", (*story("a", 1).turns, quoted), switches=(1,))
    assert turn_buckets(session) == [("turns 1-3",), ("turns 1-3", "after switch 1-3", "quotes")]
    assert turn_buckets(story("a", 2)) == [("turns 1-3",), ("turns 1-3",)]


def test_the_agents_latest_search_ranks_first_as_the_search_it_settled_on() -> None:
    # ten passages from the search with the conversation, then the new subject's own search
    searcher = RecordingSearcher(
        {"with history": [(i * 10, i * 10 + 10) for i in range(10)], "alone": [(500, 510)]}
    )
    session = FakeSession({"Who is Bob?": ("with history", "alone")})
    evaluation = RetrievalEvaluation(
        BOOK, searcher, identity_mapper(), modes=("agent",), new_session=lambda: session
    )
    evaluation.run(conversation(("Who is Bob?", [(505, 506)])))
    assert evaluation.report()["agent"]["mrr"] == 1.0


# --- quote turns ---------------------------------------------------------------------------------
TEXT = 'He said, "I had worked hard for nearly two years," and then he slept soundly. Yes.'


def span(words: str) -> tuple[int, int]:
    start = TEXT.index(words)
    return start, start + len(words)


def test_a_quote_is_the_exact_words_of_the_evidence_without_quotation_marks() -> None:
    words = quote_of(TEXT, [span('"I had worked hard for nearly two years,"')])
    assert words == "I had worked hard for nearly two years"
    question = QUOTE_TEMPLATE.format(words)
    assert quoted_phrases(question) == [words]  # what the agent reads as a quote


def test_a_quote_leaves_out_a_word_the_span_cuts_and_keeps_at_most_twelve_words() -> None:
    start, end = span("then he slept soundly")
    assert quote_of(TEXT, [(start + 1, end)]) == "he slept soundly"
    assert quote_of(TEXT, [(start - 4, end - 2)]) == "and then he slept"
    long = " ".join(f"w{i}" for i in range(30))
    assert quote_of(long, [(0, len(long))]) == " ".join(f"w{i}" for i in range(12))


def test_evidence_too_short_to_quote_gives_no_quote() -> None:
    assert quote_of(TEXT, [span("Yes.")]) is None
    assert quote_of(TEXT, [span("Yes."), span("he slept soundly")]) == "he slept soundly"
    assert quote_of(TEXT, []) is None


def sessions_to_quote() -> list[EvalConversation]:
    evidence = (span("I had worked hard"), span("he slept soundly"), span("Yes."))
    return [
        EvalConversation(
            f"c{n}",
            "b.txt",
            tuple(EvalTurn(f"q{i}", ("a",), (e,)) for i, e in enumerate(evidence * 4)),
        )
        for n in range(6)
    ]


def test_every_turn_with_enough_evidence_is_quoted_at_share_one_and_none_at_zero() -> None:
    items = sessions_to_quote()
    assert quote_turns(items, TEXT, 0.0) == items
    turns = [t for c in quote_turns(items, TEXT, 1.0) for t in c.turns]
    assert [t.quoted for t in turns[:3]] == [True, True, False]  # "Yes." is too short
    assert turns[0].question == 'Where does it say "I had worked hard"?'
    before = [t for c in items for t in c.turns]
    assert [t.evidence for t in turns] == [t.evidence for t in before]


def test_the_quoted_turns_are_chosen_by_the_seed_and_not_by_the_other_conversations() -> None:
    items = sessions_to_quote()
    once = quote_turns(items, TEXT, 0.5, seed=1)
    assert once == quote_turns(items, TEXT, 0.5, seed=1)
    assert once != quote_turns(items, TEXT, 0.5, seed=2)
    assert quote_turns(items[3:], TEXT, 0.5, seed=1) == once[3:]
    quoted = sum(t.quoted for c in once for t in c.turns)
    assert 0 < quoted < sum(1 for c in items for t in c.turns if t.evidence[0] != span("Yes."))


# --- whole-book scale ----------------------------------------------------------------------------
def test_a_chained_session_spliced_into_a_novel_keeps_its_switches_and_evidence() -> None:
    anthology = (
        "CHAPTER 1. One\n\nAnne walked to the mill.\n\nCHAPTER 2. Two\n\nBob sailed at dawn.\n"
    )
    novel = "\n\n".join(f"Paragraph {i} of the novel." for i in range(40))

    def about(name: str, words: str) -> EvalConversation:
        start = anthology.index(words)
        return EvalConversation(name, "a.txt", (EvalTurn("q", (), ((start, start + len(words)),)),))

    [session] = chain_conversations(
        [about("a", "Anne walked"), about("b", "Bob sailed at dawn")], 2
    )
    quoted = quote_turns([session], anthology, 1.0)[0]
    hay = build_haystack(anthology, [quoted], novel, seed=4)
    [moved] = hay.conversations
    assert moved.switches == (1,)
    assert [t.quoted for t in moved.turns] == [False, True]  # "Anne walked": two words only
    assert [hay.text[s:e] for t in moved.turns for s, e in t.evidence] == [
        "Anne walked",
        "Bob sailed at dawn",
    ]
