"""The scripted chat provider plays its script back in order and records every call."""

from __future__ import annotations

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider, ScriptExhaustedError, tool_call
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import ChatResponse, PromptMessage, StreamEventKind, ToolDefinition

MESSAGES = [PromptMessage.system("be brief"), PromptMessage.user("Who is Victor?")]
TOOLS = [ToolDefinition("search_book", "Search.", {"type": "object", "properties": {}})]


def test_it_plays_back_text_and_tool_calls_in_order_and_records_each_call():
    call = tool_call("search_book", {"query": "Victor"})
    provider = ScriptedChatProvider([call, "Victor is a student."])

    first = provider.chat_with_tools(MESSAGES, TOOLS)
    second = provider.chat(MESSAGES)

    assert first.text is None and first.tool_invocations == (call,)
    assert second.text == "Victor is a student." and not second.wants_tools
    assert [(c.method, c.tools) for c in provider.calls] == [
        ("chat_with_tools", tuple(TOOLS)),
        ("chat", None),
    ]
    assert provider.calls[0].messages == tuple(MESSAGES)
    assert second.usage.input_tokens > 0 and second.usage.output_tokens > 0


def test_tool_calls_get_distinct_ids():
    assert tool_call("a").tool_use_id != tool_call("a").tool_use_id


def test_streaming_splits_the_text_into_deltas_then_one_done_event():
    provider = ScriptedChatProvider(["It was a dreary night of November."])

    events = list(provider.stream_chat(MESSAGES))

    deltas = [e.text for e in events if e.kind is StreamEventKind.TEXT_DELTA]
    assert len(deltas) > 3
    assert "".join(deltas) == "It was a dreary night of November."
    assert events[-1].kind is StreamEventKind.DONE
    assert events[-1].response.text == "It was a dreary night of November."


def test_streaming_with_tools_carries_the_tool_calls_in_the_done_event():
    call = tool_call("search_book", {"query": "x"})
    provider = ScriptedChatProvider([call])

    events = list(provider.stream_chat_with_tools(MESSAGES, TOOLS))

    assert [e.kind for e in events] == [StreamEventKind.DONE]
    assert events[0].response.tool_invocations == (call,)


def test_running_out_of_script_is_a_clear_error():
    provider = ScriptedChatProvider(["only one"])
    provider.chat(MESSAGES)

    with pytest.raises(ScriptExhaustedError, match=r"1 step\(s\) and call 2 \(chat\)") as error:
        provider.chat(MESSAGES)
    assert isinstance(error.value, LLMError)


def test_a_provider_without_tools_refuses_tool_calls_without_using_a_step():
    provider = ScriptedChatProvider(["answer"], supports_tools=False)

    with pytest.raises(LLMError) as error:
        provider.chat_with_tools(MESSAGES, TOOLS)
    assert error.value.code == LLMErrorCode.UNSUPPORTED_FEATURE
    assert provider.chat(MESSAGES).text == "answer"


def test_exception_steps_are_raised_and_callable_steps_see_the_request():
    outage = LLMError("down", code=LLMErrorCode.UNAVAILABLE)
    provider = ScriptedChatProvider(
        [outage, lambda messages, tools: f"{len(messages)} messages, tools={tools is not None}"]
    )

    with pytest.raises(LLMError, match="down"):
        provider.chat(MESSAGES)
    assert provider.chat_with_tools(MESSAGES, TOOLS).text == "2 messages, tools=True"


def test_chat_responses_are_returned_as_given_and_steps_can_be_added():
    response = ChatResponse("hi", model="m")
    provider = ScriptedChatProvider([response])
    provider.extend(["later"])

    assert provider.chat(MESSAGES) is response
    assert provider.remaining == 1
    assert provider.chat(MESSAGES).text == "later"


def test_the_prompt_cache_reads_a_prefix_sent_before_up_to_a_breakpoint() -> None:
    from folio.domain.llm import PromptMessage

    provider = ScriptedChatProvider(["a", "b", "c"], prompt_cache=True)
    system, question = PromptMessage.system("You are folio. " * 50), PromptMessage.user("Who?")
    first = provider.chat([system, question]).usage
    assert (first.cache_read_tokens, first.cache_write_tokens) == (0, first.input_tokens)

    second = provider.chat(
        [system, question, PromptMessage.assistant("a"), PromptMessage.user("Why?")]
    )
    read = second.usage.cache_read_tokens
    assert 0 < read < second.usage.input_tokens
    assert read + second.usage.cache_write_tokens == second.usage.input_tokens

    other = provider.chat([PromptMessage.system("Another book."), question]).usage
    assert other.cache_read_tokens == 0, "a different system prompt shares no prefix"
