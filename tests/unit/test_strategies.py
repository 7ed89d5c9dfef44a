"""Retrieval strategies: when they call the model, when they search, and how they stop."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.agent.strategies import (
    NO_ANSWER,
    AlwaysRetrieveStrategy,
    ToolUseRetrievalStrategy,
    plain_transcript,
)
from folio.domain.llm import PromptMessage, PromptRole, ToolDefinition, ToolInvocation
from folio.domain.ports import ChatProvider, Exchange

TOOLS = [ToolDefinition("search_book", "Search.", {"type": "object", "properties": {}})]
SYSTEM = PromptMessage.system("You are a reading companion.")


class FakeRunner:
    """A ``run_tool`` returning one passage per search."""

    def __init__(self) -> None:
        self.calls: list[ToolInvocation] = []

    def __call__(self, invocation: ToolInvocation) -> PromptMessage:
        self.calls.append(invocation)
        passage = {
            "chunk_id": "c1",
            "chapter": "Chapter 2",
            "pages": "4",
            "page_start": "4",
            "page_end": "4",
            "text": f"Passage about {invocation.arguments.get('query')}.",
        }
        body = {
            "success": True,
            "data": {"query": invocation.arguments.get("query"), "results": [passage]},
        }
        return PromptMessage.tool_result(invocation.tool_use_id, json.dumps(body))


def _messages(*history: PromptMessage, question: str = "Who is Waldman?") -> list[PromptMessage]:
    return [SYSTEM, *history, PromptMessage.user(question)]


def _tool_use(provider, runner, messages=None, **kw):
    strategy = ToolUseRetrievalStrategy(**kw)
    return strategy.execute(provider, messages or _messages(), TOOLS, runner)


# --- tool use ------------------------------------------------------------------------------------
def test_no_search_needed_costs_one_call_with_the_tools_offered():
    provider = ScriptedChatProvider(["You're welcome!"])
    runner = FakeRunner()

    outcome = _tool_use(provider, runner)

    assert outcome.answer == "You're welcome!"
    assert outcome.llm_calls == 1 and runner.calls == []
    assert provider.calls[0].tools == tuple(TOOLS)
    assert [m.role for m in outcome.new_messages] == [PromptRole.ASSISTANT]


def test_one_search_costs_two_calls_and_the_result_goes_back_to_the_model():
    call = tool_call("search_book", {"query": "Professor Waldman"})
    provider = ScriptedChatProvider([call, "Waldman teaches chemistry (Chapter 2, p. 4)."])
    runner = FakeRunner()

    outcome = _tool_use(provider, runner)

    assert outcome.llm_calls == 2
    assert outcome.queries == ("Professor Waldman",)
    second = provider.calls[1].messages
    assert second[-2].tool_invocations == (call,)
    assert second[-1].role is PromptRole.TOOL_RESULT and second[-1].tool_use_id == call.tool_use_id
    assert [m.role for m in outcome.new_messages] == [
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]
    assert outcome.new_messages[-1].content == outcome.answer
    assert outcome.usage.input_tokens > 0 and outcome.stop_reason == "answered"


def test_a_repeated_identical_call_stops_the_loop_and_a_call_without_tools_answers():
    same = {"query": "Waldman"}
    provider = ScriptedChatProvider(
        [
            tool_call("search_book", same),
            tool_call("search_book", dict(same)),
            "From what I found, Waldman teaches chemistry.",
        ]
    )
    runner = FakeRunner()

    outcome = _tool_use(provider, runner)

    assert len(runner.calls) == 1  # the repeat was not run again
    assert outcome.stop_reason == "repeated_call"
    assert [c.method for c in provider.calls] == ["chat_with_tools", "chat_with_tools", "chat"]
    assert outcome.answer == "From what I found, Waldman teaches chemistry."
    repeated = outcome.new_messages[3]
    assert repeated.is_error and json.loads(repeated.content)["error_code"] == "REPEATED_CALL"
    final_request = provider.calls[2].messages
    assert all(
        m.role is not PromptRole.TOOL_RESULT and not m.tool_invocations for m in final_request
    )
    assert any("Passage about Waldman." in m.content for m in final_request)


def test_the_loop_stops_after_max_tool_rounds():
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": f"q{i}"}) for i in range(3)] + ["best effort"]
    )
    runner = FakeRunner()

    outcome = _tool_use(provider, runner, max_tool_rounds=3)

    assert len(runner.calls) == 3
    assert outcome.llm_calls == 4 and outcome.stop_reason == "max_tool_rounds"
    assert provider.calls[-1].method == "chat"
    assert outcome.answer == "best effort"


def test_every_stored_tool_call_has_its_result():
    provider = ScriptedChatProvider(
        [
            [tool_call("search_book", {"query": "a"}), tool_call("search_book", {"query": "b"})],
            "done",
        ]
    )

    outcome = _tool_use(provider, FakeRunner())

    calls = {i.tool_use_id for m in outcome.new_messages for i in m.tool_invocations}
    results = {m.tool_use_id for m in outcome.new_messages if m.role is PromptRole.TOOL_RESULT}
    assert calls == results and len(calls) == 2


def test_an_empty_answer_becomes_a_clear_reply():
    outcome = _tool_use(ScriptedChatProvider([""]), FakeRunner())

    assert outcome.answer == NO_ANSWER


def test_with_a_text_sink_the_answer_is_streamed():
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": "x"}), "Waldman teaches chemistry."]
    )
    pieces: list[str] = []

    outcome = ToolUseRetrievalStrategy().execute(
        provider, _messages(), TOOLS, FakeRunner(), on_text=pieces.append
    )

    assert "".join(pieces) == outcome.answer and len(pieces) > 1
    assert [c.method for c in provider.calls] == ["stream_chat_with_tools"] * 2
    assert outcome.llm_calls == 2


# --- always retrieve ------------------------------------------------------------------------------
class RecordingRewriter:
    def __init__(self, provider: ChatProvider) -> None:
        self.provider = provider

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str:
        response = self.provider.chat([PromptMessage.user(f"rewrite {question}")])
        return response.text or question


def _always(provider, *, question: str = "Who is Waldman?", history=()):
    runner = FakeRunner()
    strategy = AlwaysRetrieveStrategy(rewriter_factory=RecordingRewriter, k=4)
    outcome = strategy.execute(provider, _messages(*history, question=question), [], runner)
    return outcome, runner


def test_always_retrieve_searches_an_opening_question_as_asked_without_a_rewriting_call():
    provider = ScriptedChatProvider(["Waldman teaches chemistry."], supports_tools=False)

    outcome, runner = _always(provider)

    assert [c.arguments for c in runner.calls] == [{"query": "Who is Waldman?", "k": 4}]
    assert outcome.llm_calls == 1
    prompt = provider.calls[0].messages[-1].content
    assert "Passage about Who is Waldman?." in prompt and "Chapter 2, p. 4" in prompt
    assert [m.role for m in outcome.new_messages] == [
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]


def test_always_retrieve_has_the_model_rewrite_in_a_conversation_and_counts_that_call():
    history = (PromptMessage.user("Who is Waldman?"), PromptMessage.assistant("A professor."))
    provider = ScriptedChatProvider(["What did Professor Waldman teach?", "Chemistry."])

    outcome, runner = _always(provider, question="what did he teach?", history=history)

    assert runner.calls[0].arguments["query"] == "What did Professor Waldman teach?"
    assert outcome.queries == ("What did Professor Waldman teach?",)
    assert outcome.llm_calls == 2 and outcome.answer == "Chemistry."


def test_always_retrieve_never_sends_tool_blocks_to_a_provider_without_tools():
    call = ToolInvocation("search_book", "c0", {"query": "Waldman"})
    history = (
        PromptMessage.user("Who is Waldman?"),
        PromptMessage.assistant("", (call,)),
        PromptMessage.tool_result("c0", '{"success": true}'),
        PromptMessage.assistant("A professor."),
    )
    provider = ScriptedChatProvider(["What did Waldman teach?", "Chemistry."], supports_tools=False)

    _always(provider, question="What did Waldman teach?", history=history)

    sent = provider.calls[-1].messages
    assert all(m.role is not PromptRole.TOOL_RESULT and not m.tool_invocations for m in sent)


# --- plain transcript -----------------------------------------------------------------------------
def test_plain_transcript_turns_tool_traffic_into_alternating_text():
    call = ToolInvocation("search_book", "c0", {"query": "Waldman"})
    messages = [
        SYSTEM,
        PromptMessage.user("Who?"),
        PromptMessage.assistant("", (call,)),
        PromptMessage.tool_result("c0", "R1"),
        PromptMessage.tool_result("c0", "R2"),
        PromptMessage.assistant("A professor."),
    ]

    plain = plain_transcript(messages)

    assert [m.role for m in plain] == [
        PromptRole.SYSTEM,
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.USER,
        PromptRole.ASSISTANT,
    ]
    assert 'search_book {"query": "Waldman"}' in plain[2].content
    assert "R1" in plain[3].content and "R2" in plain[3].content


@pytest.mark.parametrize("rounds", [1, 2])
def test_max_tool_rounds_is_configurable(rounds):
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": f"q{i}"}) for i in range(rounds)] + ["ok"]
    )

    outcome = _tool_use(provider, FakeRunner(), max_tool_rounds=rounds)

    assert outcome.llm_calls == rounds + 1 and outcome.answer == "ok"
