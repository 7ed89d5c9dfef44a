"""The Anthropic adapter against a fake Messages API over HTTP.

The SDK speaks ``httpx2`` (respx only patches ``httpx``), so the fake is an
``httpx2.MockTransport`` handed to the SDK's client: the SDK's own request building, retries and
SSE parsing all run for real, and no request can reach the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from folio.adapters.llm.anthropic import AnthropicProvider
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import (
    PromptMessage,
    StreamEventKind,
    ToolDefinition,
    ToolInvocation,
)

# The SDK warns that the default model is due for retirement; the wire format is what's tested.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
SEARCH = ToolDefinition(
    "search_book",
    "Search the book",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


class FakeAPI:
    """Plays back scripted responses (or raises scripted exceptions) and records the requests."""

    def __init__(self, *replies: httpx2.Response | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


CACHE = {"type": "ephemeral"}


def provider(api: FakeAPI, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("max_retries", 0)
    client = httpx2.Client(transport=httpx2.MockTransport(api))
    return AnthropicProvider(api_key="sk-ant-test", http_client=client, **kwargs)


def message(
    content: list[dict[str, Any]],
    stop_reason: str = "end_turn",
    usage: dict[str, int] | None = None,
) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 120, "output_tokens": 30},
        },
    )


def error(status: int, kind: str, text: str, **headers: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return httpx2.Response(status, json=body, headers=headers)


def sse(*events: dict[str, Any]) -> httpx2.Response:
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return httpx2.Response(
        200, content=text.encode(), headers={"content-type": "text/event-stream"}
    )


# --- requests -------------------------------------------------------------------------------------
def test_request_puts_the_system_prompt_top_level_and_tools_in_anthropic_shape() -> None:
    api = FakeAPI(message([{"type": "text", "text": "Hello"}]))
    provider(api).chat_with_tools(
        [PromptMessage.system("You are folio."), PromptMessage.user("Who is Emma?")], [SEARCH]
    )
    request = api.requests[0]
    assert request.url == "https://api.anthropic.com/v1/messages"
    credentials = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    assert "sk-ant-test" in credentials
    assert "anthropic-version" in request.headers
    assert api.body() == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        # cache breakpoints: tools + system, and the end of the conversation so far
        "system": [{"type": "text", "text": "You are folio.", "cache_control": CACHE}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Who is Emma?", "cache_control": CACHE}],
            }
        ],
        "tools": [
            {
                "name": "search_book",
                "description": "Search the book",
                "input_schema": SEARCH.parameters,
            }
        ],
    }


def test_plain_chat_sends_no_tools_and_no_system_when_there_is_none() -> None:
    api = FakeAPI(message([{"type": "text", "text": "Hello"}]))
    provider(api, model="claude-haiku-4-5", max_tokens=200).chat([PromptMessage.user("Hi")])
    assert api.body() == {
        "model": "claude-haiku-4-5",
        "max_tokens": 200,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": CACHE}]}
        ],
    }


def test_tool_calls_and_consecutive_results_become_tool_use_and_one_tool_result_turn() -> None:
    calls = (
        ToolInvocation("search_book", "toolu_1", {"query": "Emma Woodhouse"}),
        ToolInvocation("list_chapters", "toolu_2", {}),
    )
    history = [
        PromptMessage.system("sys"),
        PromptMessage.user("Who is Emma?"),
        PromptMessage.assistant("Let me look.", calls),
        PromptMessage.tool_result("toolu_1", '{"hits": []}'),
        PromptMessage.tool_result("toolu_2", '{"error": "boom"}', is_error=True),
    ]
    api = FakeAPI(message([{"type": "text", "text": "She is..."}]))
    provider(api).chat_with_tools(history, [SEARCH])
    assert api.body()["messages"] == [
        # the reader's question ends the conversation so far: the cache breakpoint
        {
            "role": "user",
            "content": [{"type": "text", "text": "Who is Emma?", "cache_control": CACHE}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "search_book",
                    "input": {"query": "Emma Woodhouse"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "list_chapters", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"hits": []}',
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": '{"error": "boom"}',
                    "is_error": True,
                },
            ],
        },
    ]


def test_assistant_tool_call_without_text_sends_no_empty_text_block() -> None:
    history = [
        PromptMessage.user("q"),
        PromptMessage.assistant("", (ToolInvocation("search_book", "toolu_1", {"query": "q"}),)),
        PromptMessage.tool_result("toolu_1", "{}"),
        PromptMessage.user("and then?"),
    ]
    api = FakeAPI(message([{"type": "text", "text": "ok"}]))
    provider(api).chat_with_tools(history, [SEARCH])
    turns = api.body()["messages"]
    assert [b["type"] for b in turns[1]["content"]] == ["tool_use"]
    assert turns[2]["content"][0]["type"] == "tool_result"
    assert turns[3] == {
        "role": "user",
        "content": [{"type": "text", "text": "and then?", "cache_control": CACHE}],
    }
    assert all("cache_control" not in str(t) for t in turns[:3]), "one breakpoint: the question"


def test_usage_adds_cache_reads_and_writes_to_the_input_tokens() -> None:
    usage_fields = {
        "input_tokens": 30,
        "output_tokens": 7,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 1500,
    }
    api = FakeAPI(message([{"type": "text", "text": "ok"}], usage=usage_fields))
    response = provider(api).chat([PromptMessage.user("q")])
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (1730, 7)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (1500, 200)
    assert usage.uncached_input_tokens == 30


# --- responses ------------------------------------------------------------------------------------
def test_response_text_blocks_are_joined_and_tool_use_blocks_become_invocations() -> None:
    api = FakeAPI(
        message(
            [
                {"type": "text", "text": "Let me "},
                {"type": "text", "text": "search."},
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "search_book",
                    "input": {"query": "Knightley"},
                },
                {"type": "tool_use", "id": "toolu_10", "name": "no_such_tool", "input": {}},
            ],
            stop_reason="tool_use",
        )
    )
    response = provider(api).chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert response.text == "Let me search."
    assert response.tool_invocations == (
        ToolInvocation("search_book", "toolu_9", {"query": "Knightley"}),
        ToolInvocation("no_such_tool", "toolu_10", {}),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 30)
    assert response.stop_reason == "tool_use"
    assert response.model == "claude-sonnet-4-6"


def test_a_response_with_only_tool_use_has_no_text() -> None:
    api = FakeAPI(message([{"type": "tool_use", "id": "t", "name": "search_book", "input": {}}]))
    assert provider(api).chat_with_tools([PromptMessage.user("q")], [SEARCH]).text is None


# --- streaming ------------------------------------------------------------------------------------
def _stream_events() -> list[dict[str, Any]]:
    """A streamed turn shaped like the API's: text deltas, then a tool_use block whose input
    arrives as ``input_json_delta`` pieces."""
    return json.loads((FIXTURES / "anthropic_stream_tool_use.json").read_text())


def test_streaming_yields_deltas_then_done_with_tool_input_built_from_partial_json() -> None:
    api = FakeAPI(sse(*_stream_events()))
    events = list(provider(api).stream_chat_with_tools([PromptMessage.user("q")], [SEARCH]))
    assert api.body()["stream"] is True
    assert [e.text for e in events if e.kind is StreamEventKind.TEXT_DELTA] == ["Let me", " look."]
    assert events[-1].kind is StreamEventKind.DONE
    done = events[-1].response
    assert done is not None
    assert done.text == "Let me look."
    assert done.tool_invocations == (
        ToolInvocation("search_book", "toolu_s1", {"query": "Emma Woodhouse", "k": 3}),
    )
    assert (done.usage.input_tokens, done.usage.output_tokens) == (85, 42)
    assert done.stop_reason == "tool_use"


def test_streamed_tool_input_that_is_not_json_becomes_a_parse_error() -> None:
    events = [e for e in _stream_events() if e.get("delta", {}).get("type") != "input_json_delta"]
    broken = {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"query": '},
    }
    events.insert(-3, broken)
    api = FakeAPI(sse(*events))
    done = list(provider(api).stream_chat_with_tools([PromptMessage.user("q")], [SEARCH]))[-1]
    assert done.response is not None
    (call,) = done.response.tool_invocations
    assert call.arguments == {}
    assert call.parse_error is not None and "JSON" in call.parse_error


def test_an_overloaded_error_event_mid_stream_is_unavailable() -> None:
    events = [
        *_stream_events()[:4],
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    api = FakeAPI(sse(*events))
    with pytest.raises(LLMError) as caught:
        list(provider(api).stream_chat([PromptMessage.user("q")]))
    assert caught.value.code == LLMErrorCode.UNAVAILABLE
    assert "Overloaded" in caught.value.message


# --- errors ---------------------------------------------------------------------------------------
def test_401_is_an_auth_error_naming_the_key_to_check() -> None:
    api = FakeAPI(error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.AUTH
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert "invalid x-api-key" in caught.value.message


def test_429_is_retried_honouring_retry_after_then_succeeds() -> None:
    api = FakeAPI(
        error(429, "rate_limit_error", "slow down", **{"retry-after": "0.01"}),
        message([{"type": "text", "text": "fine"}]),
    )
    response = provider(api, max_retries=2).chat([PromptMessage.user("q")])
    assert response.text == "fine"
    assert len(api.requests) == 2


def test_429_after_the_retries_are_spent_is_rate_limited() -> None:
    limited = [
        error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1"}) for _ in range(3)
    ]
    api = FakeAPI(*limited)
    with pytest.raises(LLMError) as caught:
        provider(api, max_retries=2).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.RATE_LIMITED
    assert len(api.requests) == 3


def test_500_is_unavailable() -> None:
    api = FakeAPI(error(500, "api_error", "Internal server error"))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE


def test_a_timeout_is_a_timeout_error() -> None:
    api = FakeAPI(httpx2.ReadTimeout("read timed out"))
    with pytest.raises(LLMError) as caught:
        provider(api, timeout=5).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.TIMEOUT


def test_a_refused_connection_is_unavailable() -> None:
    api = FakeAPI(httpx2.ConnectError("connection refused"))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE


def test_a_malformed_body_is_a_bad_response() -> None:
    api = FakeAPI(httpx2.Response(200, json={"unexpected": True}))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE


def test_a_missing_api_key_is_an_auth_error_before_any_request() -> None:
    with pytest.raises(LLMError) as caught:
        AnthropicProvider(api_key=None)
    assert caught.value.code == LLMErrorCode.AUTH
    assert "ANTHROPIC_API_KEY" in caught.value.message


def test_identity_properties() -> None:
    p = provider(FakeAPI())
    assert (p.provider_name, p.model_name, p.supports_tools) == (
        "anthropic",
        "claude-sonnet-4-6",
        True,
    )


def test_a_stream_cut_before_the_model_finished_is_a_bad_response() -> None:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }  # fmt: skip
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Clerval is"},
    }
    stream = provider(FakeAPI(sse(start, block, delta))).stream_chat([PromptMessage.user("Who?")])
    with pytest.raises(LLMError) as caught:
        list(stream)
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE


def test_a_body_that_is_not_a_message_is_a_bad_response() -> None:
    reply = httpx2.Response(200, content=b"{not json", headers={"content-type": "application/json"})
    with pytest.raises(LLMError) as caught:
        provider(FakeAPI(reply)).chat([PromptMessage.user("Who?")])
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE
