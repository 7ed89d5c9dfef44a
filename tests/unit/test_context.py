"""The full-history context window: whole turns, last turn intact, older tool results shortened,
under a token budget."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from folio.agent.context import FullHistoryStrategy, estimate_tokens, shorten_tool_result
from folio.domain.conversations import ChatMessage, MessageRole
from folio.domain.llm import PromptRole, ToolInvocation

NOW = datetime(2024, 1, 1, tzinfo=UTC)
PASSAGE = "Victor worked day and night collecting bones from charnel houses. " * 20


def _result(query: str) -> str:
    results = [
        {
            "chunk_id": f"c{i}",
            "chapter": "Chapter 2",
            "pages": "4",
            "page_start": "4",
            "page_end": "4",
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


def _turn(n: int, *, search: bool = True) -> list[ChatMessage]:
    def msg(seq: int, role: MessageRole, content: str, **kw) -> ChatMessage:
        return ChatMessage(f"m{n}-{seq}", "conv", n, seq, role, content, NOW, **kw)

    out = [msg(0, MessageRole.USER, f"question {n}")]
    if search:
        call = ToolInvocation("search_book", f"call-{n}", {"query": f"query {n}"})
        out.append(msg(1, MessageRole.ASSISTANT, "", tool_invocations=(call,)))
        out.append(
            msg(
                2,
                MessageRole.TOOL_RESULT,
                _result(f"query {n}"),
                tool_use_id=f"call-{n}",
                tool_name="search_book",
            )
        )
    out.append(msg(len(out), MessageRole.ASSISTANT, f"answer {n}"))
    return out


def _history(turns: int) -> list[ChatMessage]:
    return [m for n in range(1, turns + 1) for m in _turn(n)]


def test_the_window_holds_the_last_whole_turns_within_the_message_cap():
    window = FullHistoryStrategy(max_messages=4, token_budget=100_000).build_context(_history(6))

    # the cap counts questions and answers: two turns (four messages of the conversation), each
    # with its tool call and result, so eight prompt messages; a third turn would exceed four
    assert len(window) == 8
    assert window[0].role is PromptRole.USER and window[0].content == "question 5"
    assert window[-1].content == "answer 6"


def test_tool_calls_and_results_do_not_count_against_the_message_cap():
    window = FullHistoryStrategy(max_messages=10, token_budget=100_000).build_context(_history(6))

    assert [m.content for m in window if m.role is PromptRole.USER] == [
        f"question {n}" for n in range(2, 7)
    ]


def test_the_window_never_starts_with_a_tool_result_cut_from_its_call():
    for cap in range(1, 13):
        window = FullHistoryStrategy(max_messages=cap, token_budget=100_000).build_context(
            _history(5)
        )
        assert window[0].role is PromptRole.USER
        call_ids = {i.tool_use_id for m in window for i in m.tool_invocations}
        assert all(m.tool_use_id in call_ids for m in window if m.role is PromptRole.TOOL_RESULT)


def test_stored_messages_become_prompt_messages_with_their_tool_data():
    window = FullHistoryStrategy().build_context(_turn(1))

    assert [m.role for m in window] == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]
    assert window[1].tool_invocations[0].arguments == {"query": "query 1"}
    assert window[2].tool_use_id == "call-1"


def test_the_last_turn_is_kept_whole_and_older_tool_results_are_shortened():
    window = FullHistoryStrategy(token_budget=100_000).build_context(_history(2))

    old, last = window[2], window[6]
    assert last.content == _result("query 2")
    short = json.loads(old.content)["data"]
    assert short["query"] == "query 1" and short["shortened"] is True
    assert all(len(r["text"]) <= 301 and r["text"].endswith("…") for r in short["results"])
    assert [r["pages"] for r in short["results"]] == ["4", "4", "4"]


def test_the_oldest_turns_are_dropped_first_to_meet_the_token_budget():
    strategy = FullHistoryStrategy(max_messages=100, token_budget=2000)

    window = strategy.build_context(_history(8))

    assert estimate_tokens(window) <= 2000
    assert window[-1].content == "answer 8"
    questions = [m.content for m in window if m.role is PromptRole.USER]
    assert questions == [f"question {n}" for n in range(9 - len(questions), 9)]
    assert len(questions) < 8


def test_a_last_turn_over_the_budget_is_kept_with_its_results_shortened():
    window = FullHistoryStrategy(token_budget=50).build_context(_history(3))

    assert [m.content for m in window if m.role is PromptRole.USER] == ["question 3"]
    assert json.loads(window[2].content)["data"]["shortened"] is True


def test_an_unparseable_tool_result_is_clipped():
    assert len(shorten_tool_result("x" * 5000, passage_chars=100)) == 201


def test_an_empty_history_gives_an_empty_window():
    assert FullHistoryStrategy().build_context([]) == []
