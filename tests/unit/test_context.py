"""The context window: whole turns, each earlier turn reduced to its question and answer; the
window's start moves in blocks so the prompt prefix stays stable."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from folio.agent.context import RecentTurnsStrategy, estimate_tokens, shorten_tool_result
from folio.domain.books import Book, BookFormat, PositionKind, ReadingPosition
from folio.domain.conversations import ChatMessage
from folio.domain.llm import PromptRole, ToolInvocation
from folio.domain.window import ReadingWindow

NOW = datetime(2024, 1, 1, tzinfo=UTC)
PASSAGE = "Victor worked day and night collecting bones from charnel houses. " * 20


def _result(query: str) -> str:
    results = [
        {
            "chunk_id": f"c{i}",
            "chapter": "Chapter 2",
            "pages": str(4 + i),
            "page_start": str(4 + i),
            "page_end": str(4 + i),
            "char_start": 0,
            "char_end": 10,
            "score": 0.1,
            "text": PASSAGE,
        }
        for i in range(3)
    ]
    return json.dumps(
        {"success": True, "data": {"query": query, "reading_limit": "page 4", "results": results}}
    )


def _turn(n: int, *, search: bool = True, answer: str | None = None) -> list[ChatMessage]:
    def msg(seq: int, role: PromptRole, content: str, **kw) -> ChatMessage:
        return ChatMessage.of(f"m{n}-{seq}", "conv", n, seq, role, content, NOW, **kw)

    out = [msg(0, PromptRole.USER, f"question {n}")]
    if search:
        call = ToolInvocation("search_book", f"call-{n}", {"query": f"query {n}"})
        out.append(msg(1, PromptRole.ASSISTANT, "", tool_invocations=(call,)))
        out.append(
            msg(
                2,
                PromptRole.TOOL_RESULT,
                _result(f"query {n}"),
                tool_use_id=f"call-{n}",
                tool_name="search_book",
            )
        )
    text = f"answer {n} (Chapter 2, p. 5)" if answer is None else answer
    out.append(msg(len(out), PromptRole.ASSISTANT, text))
    return out


def _history(turns: int) -> list[ChatMessage]:
    return [m for n in range(1, turns + 1) for m in _turn(n)]


def _questions(window) -> list[str]:
    return [m.content for m in window if m.role is PromptRole.USER]


def test_an_earlier_turn_is_its_question_and_answer_without_its_tool_traffic():
    window = RecentTurnsStrategy().build_context(_turn(1))

    assert [(m.role, m.content) for m in window] == [
        (PromptRole.USER, "question 1"),
        (PromptRole.ASSISTANT, "answer 1 (Chapter 2, p. 5)"),
    ], "the answer keeps its citation; the call and its passages are left out"
    assert "charnel" not in str(window) and not any(m.tool_invocations for m in window)


def test_kept_calls_and_results_sit_between_question_and_answer_and_cost_no_cap():
    strategy = RecentTurnsStrategy(max_messages=4, token_budget=100_000, block_turns=1,
                                   keep_calls=True)  # fmt: skip
    window = strategy.build_context(_history(6))

    assert [m.role for m in window[:4]] == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ], "the search call and what it found are kept for the offline policy"
    assert window[1].tool_invocations[0].arguments == {"query": "query 5"}
    assert "charnel" in window[2].content
    assert window[3].content == "answer 5 (Chapter 2, p. 5)"
    # the same two turns as without the calls: the cap counts questions and answers
    assert _questions(window) == _questions(
        RecentTurnsStrategy(max_messages=4, token_budget=100_000, block_turns=1).build_context(
            _history(6)
        )
    )


def test_an_earlier_answer_that_quotes_the_book_keeps_its_quote():
    quote = '"collecting bones from charnel houses"'
    window = RecentTurnsStrategy().build_context(_turn(1, answer=f"He was {quote} (p. 5)."))
    assert window[-1].content == f"He was {quote} (p. 5)."


def test_an_earlier_turn_costs_a_fraction_of_its_search_results():
    turn = _turn(1)
    stored = sum(len(m.content) for m in turn)
    window = RecentTurnsStrategy().build_context(turn)
    assert sum(len(m.content) for m in window) * 20 < stored


def test_the_window_holds_the_last_whole_turns_within_the_message_cap():
    window = RecentTurnsStrategy(max_messages=4, token_budget=100_000, block_turns=1).build_context(
        _history(6)
    )

    # the cap counts questions and answers: two turns, four messages; a third would exceed it
    assert len(window) == 4
    assert window[0].role is PromptRole.USER and window[0].content == "question 5"
    assert window[-1].content.startswith("answer 6")


def test_the_message_cap_counts_questions_and_answers_of_turns_that_searched():
    window = RecentTurnsStrategy(
        max_messages=10, token_budget=100_000, block_turns=1
    ).build_context(_history(6))

    assert _questions(window) == [f"question {n}" for n in range(2, 7)]


def test_old_turns_leave_the_window_in_blocks_so_its_start_moves_only_every_few_turns():
    strategy = RecentTurnsStrategy(max_messages=20, token_budget=100_000, block_turns=5)
    firsts = []
    for n in range(1, 31):
        window = strategy.build_context(_history(n))
        firsts.append(int(_questions(window)[0].split()[1]))
        assert len(_questions(window)) <= 10
    assert sorted(set(firsts)) == [1, 6, 11, 16, 21], "starts at block boundaries only"
    assert firsts == sorted(firsts)


def test_the_prompt_prefix_is_byte_stable_from_turn_to_turn_within_a_block():
    strategy = RecentTurnsStrategy(max_messages=20, token_budget=100_000, block_turns=5)
    stable = 0
    for n in range(1, 25):
        before, after = strategy.build_context(_history(n)), strategy.build_context(_history(n + 1))
        if _questions(before)[0] == _questions(after)[0]:
            assert after[: len(before)] == before, f"turn {n + 1} rewrote earlier turns"
            stable += 1
    assert stable >= 18


def test_the_window_never_starts_with_a_tool_result_cut_from_its_call():
    for cap in range(1, 13):
        window = RecentTurnsStrategy(max_messages=cap, token_budget=100_000).build_context(
            _history(5)
        )
        assert window[0].role is PromptRole.USER
        call_ids = {i.tool_use_id for m in window for i in m.tool_invocations}
        assert all(m.tool_use_id in call_ids for m in window if m.role is PromptRole.TOOL_RESULT)


def test_the_oldest_turns_are_dropped_in_blocks_to_meet_the_token_budget():
    strategy = RecentTurnsStrategy(max_messages=100, token_budget=60, block_turns=3)

    window = strategy.build_context(_history(8))

    assert estimate_tokens(window) <= 60
    assert window[-1].content.startswith("answer 8")
    questions = _questions(window)
    assert questions == [f"question {n}" for n in range(9 - len(questions), 9)]
    assert len(questions) < 8 and int(questions[0].split()[1]) % 3 == 1


def test_a_last_turn_over_the_budget_is_still_kept_whole():
    window = RecentTurnsStrategy(token_budget=5).build_context(_history(3))

    assert [m.content for m in window] == ["question 3", "answer 3 (Chapter 2, p. 5)"]


def test_an_overlong_stored_message_is_cut():
    long_answer = "word " * 5000
    window = RecentTurnsStrategy(message_chars=100).build_context(_turn(1, answer=long_answer))
    assert len(window[-1].content) == 101 and window[-1].content.endswith("…")


def test_an_unparseable_tool_result_is_clipped():
    assert len(shorten_tool_result("x" * 5000, passage_chars=100)) == 201


def test_an_empty_history_gives_an_empty_window():
    assert RecentTurnsStrategy().build_context([]) == []


def test_a_page_cite_keeps_the_first_passage_on_that_page_not_every_chunk_sharing_it():
    from folio.agent.citations import used_passages
    from folio.domain.passages import decode_passage

    on_page = [
        {"chunk_id": f"c{i}", "page_start": "9", "page_end": "9", "text": f"text {i}"}
        for i in range(3)
    ]
    other = {"chunk_id": "c9", "page_start": "12", "page_end": "13", "text": "the white whale"}
    passages = [decode_passage(p) for p in [*on_page, other]]
    used = used_passages('It says "the white whale" (p. 9).', passages)
    assert [p.chunk_id for p in used] == ["c0", "c9"]
    assert used_passages("No citation here.", passages) == []


def _read_to(offset: int) -> ReadingWindow:
    book = Book("b", "T", None, BookFormat.TXT, "t.txt", "h", 1, 100)
    return ReadingWindow(book.with_position(ReadingPosition(offset, PositionKind.PERCENT, 1.0)))


def test_a_turn_that_saw_text_past_a_position_moved_back_keeps_only_its_question():
    from folio.agent.context import WITHHELD_ANSWER

    history = _history(3)  # every passage of the fixture ends at char 10
    assert RecentTurnsStrategy().build_context(
        history, window=_read_to(10)
    ) == RecentTurnsStrategy().build_context(history), "nothing past a limit at the passages' end"

    window = RecentTurnsStrategy().build_context(history, window=_read_to(5))

    assert [(m.role, m.content) for m in window] == [
        pair
        for n in (1, 2, 3)
        for pair in ((PromptRole.USER, f"question {n}"), (PromptRole.ASSISTANT, WITHHELD_ANSWER))
    ]
    assert not any(m.role is PromptRole.TOOL_RESULT for m in window)
    assert "charnel" not in str(window) and "answer 1" not in str(window)
