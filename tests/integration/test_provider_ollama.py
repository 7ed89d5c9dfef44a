"""The Ollama adapter against a fake ``/api/chat`` over HTTP (respx: nothing leaves the process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from folio.adapters.llm.ollama import OllamaProvider, retry_delay
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, StreamEventKind, ToolDefinition, ToolInvocation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
HOST = "http://ollama.test:11434"
CHAT = f"{HOST}/api/chat"
SEARCH = ToolDefinition(
    "search_book",
    "Search the book",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router


def provider(**kwargs: Any) -> OllamaProvider:
    kwargs.setdefault("max_retries", 0)
    return OllamaProvider(host=HOST, **kwargs)


def reply(content: str, tool_calls: list[dict[str, Any]] | None = None) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "model": "llama3.1",
        "created_at": "2026-11-22T06:40:00.0Z",
        "message": message,
        "done_reason": "stop",
        "done": True,
        "total_duration": 885095291,
        "prompt_eval_count": 122,
        "eval_count": 33,
    }
    return httpx.Response(200, json=body)


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    return json.loads(route.calls[index].request.content)


# --- requests -----------------------------------------------------------------------------------
def test_request_sends_roles_tools_and_stream_false_to_api_chat(api: respx.MockRouter) -> None:
    route = api.post(CHAT).mock(return_value=reply("Hello"))
    provider().chat_with_tools(
        [PromptMessage.system("You are folio."), PromptMessage.user("Who is Emma?")], [SEARCH]
    )
    assert sent(route) == {
        "model": "llama3.1",
        "stream": False,
        "messages": [
            {"role": "system", "content": "You are folio."},
            {"role": "user", "content": "Who is Emma?"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "search_book",
                    "description": "Search the book",
                    "parameters": SEARCH.parameters,
                },
            }
        ],
    }


def test_tool_calls_go_back_with_object_arguments_and_results_name_their_tool(
    api: respx.MockRouter,
) -> None:
    calls = (
        ToolInvocation("search_book", "call_a", {"query": "Emma"}),
        ToolInvocation("list_chapters", "call_b", {}),
    )
    history = [
        PromptMessage.user("Who is Emma?"),
        PromptMessage.assistant("", calls),
        PromptMessage.tool_result("call_a", '{"hits": []}'),
        PromptMessage.tool_result("call_b", '{"chapters": []}'),
    ]
    route = api.post(CHAT).mock(return_value=reply("She is..."))
    provider(model="qwen2.5").chat_with_tools(history, [SEARCH])
    body = sent(route)
    assert body["model"] == "qwen2.5"
    assert body["messages"] == [
        {"role": "user", "content": "Who is Emma?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "search_book", "arguments": {"query": "Emma"}}},
                {"function": {"name": "list_chapters", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": '{"hits": []}', "tool_name": "search_book"},
        {"role": "tool", "content": '{"chapters": []}', "tool_name": "list_chapters"},
    ]


def test_plain_chat_sends_no_tools(api: respx.MockRouter) -> None:
    route = api.post(CHAT).mock(return_value=reply("Hi"))
    assert provider().chat([PromptMessage.user("Hi")]).text == "Hi"
    assert "tools" not in sent(route)


def test_a_bare_host_gets_a_scheme() -> None:
    assert OllamaProvider(host="localhost:11434").host == "http://localhost:11434"
    assert OllamaProvider().host == "http://localhost:11434"


# --- responses ----------------------------------------------------------------------------------
def test_response_tool_calls_get_generated_ids_that_are_stable_per_request(
    api: respx.MockRouter,
) -> None:
    tool_calls = [
        {"function": {"name": "search_book", "arguments": {"query": "Knightley"}}},
        {"function": {"name": "no_such_tool", "arguments": {}}},
    ]
    api.post(CHAT).mock(return_value=reply("", tool_calls))
    p = provider()
    first = p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    again = p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    other = p.chat_with_tools([PromptMessage.user("another question")], [SEARCH])

    assert first.text is None
    assert [(c.tool_name, dict(c.arguments)) for c in first.tool_invocations] == [
        ("search_book", {"query": "Knightley"}),
        ("no_such_tool", {}),
    ]
    ids = [c.tool_use_id for c in first.tool_invocations]
    assert len(set(ids)) == 2 and all(ids)
    assert [c.tool_use_id for c in again.tool_invocations] == ids
    assert not set(ids) & {c.tool_use_id for c in other.tool_invocations}
    assert (first.usage.input_tokens, first.usage.output_tokens) == (122, 33)
    assert first.stop_reason == "stop"


def test_string_arguments_that_are_not_json_become_a_parse_error(api: respx.MockRouter) -> None:
    bad = [{"function": {"name": "search_book", "arguments": '{"query": '}}]
    api.post(CHAT).mock(return_value=reply("", bad))
    (call,) = provider().chat_with_tools([PromptMessage.user("q")], [SEARCH]).tool_invocations
    assert call.arguments == {}
    assert call.parse_error is not None


# --- streaming ----------------------------------------------------------------------------------
def test_streaming_reads_ndjson_text_then_done_with_tool_calls_and_counts(
    api: respx.MockRouter,
) -> None:
    ndjson = (FIXTURES / "ollama_stream_tool_call.ndjson").read_bytes()
    route = api.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=ndjson, headers={"content-type": "application/x-ndjson"}
        )
    )
    events = list(provider().stream_chat_with_tools([PromptMessage.user("q")], [SEARCH]))
    assert sent(route)["stream"] is True
    assert [e.text for e in events if e.kind is StreamEventKind.TEXT_DELTA] == [
        "Let me",
        " search.",
    ]
    done = events[-1].response
    assert events[-1].kind is StreamEventKind.DONE and done is not None
    assert done.text == "Let me search."
    assert [(c.tool_name, dict(c.arguments)) for c in done.tool_invocations] == [
        ("search_book", {"query": "Emma Woodhouse"})
    ]
    assert (done.usage.input_tokens, done.usage.output_tokens) == (133, 21)


def test_a_stream_cut_before_its_final_chunk_is_a_bad_response(api: respx.MockRouter) -> None:
    first_line = (FIXTURES / "ollama_stream_tool_call.ndjson").read_text().splitlines()[0]
    api.post(CHAT).mock(return_value=httpx.Response(200, content=first_line + "\n"))
    with pytest.raises(LLMError) as caught:
        list(provider().stream_chat([PromptMessage.user("q")]))
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE


# --- errors -------------------------------------------------------------------------------------
def test_a_model_without_tools_is_unsupported_feature(
    api: respx.MockRouter,
) -> None:
    route = api.post(CHAT).mock(
        return_value=httpx.Response(
            400, json={"error": "registry.ollama.ai/library/gemma:2b does not support tools"}
        )
    )
    p = provider(model="gemma:2b")
    with pytest.raises(LLMError) as caught:
        p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert caught.value.code == LLMErrorCode.UNSUPPORTED_FEATURE
    # the adapter only reports: the strategy decides to fall back (tests/unit/test_chat.py)
    assert p.supports_tools is True
    with pytest.raises(LLMError) as again:
        p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert again.value.code == LLMErrorCode.UNSUPPORTED_FEATURE
    assert route.call_count == 2  # the same request, the same answer: no hidden state


def test_connection_refused_names_the_host_and_says_ollama_must_run(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(side_effect=httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE
    assert HOST in caught.value.message
    assert "running" in caught.value.message


def test_a_timeout_is_a_timeout_error(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(side_effect=httpx.ReadTimeout("timed out"))
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.TIMEOUT


def test_429_is_retried_honouring_retry_after_then_succeeds(api: respx.MockRouter) -> None:
    route = api.post(CHAT).mock(
        side_effect=[
            httpx.Response(429, json={"error": "busy"}, headers={"retry-after": "0"}),
            reply("ok"),
        ]
    )
    assert provider(max_retries=2).chat([PromptMessage.user("q")]).text == "ok"
    assert route.call_count == 2


def test_retry_delay_follows_retry_after_in_seconds_or_as_a_date_else_backs_off() -> None:
    assert retry_delay("0", 1) == 0.0
    assert retry_delay("7", 1) == 7.0
    assert retry_delay("100000", 1) == 60.0
    assert retry_delay("Thu, 01 Jan 1970 00:00:00 GMT", 1) == 0.0
    assert [retry_delay(None, n) for n in (1, 2, 3, 6)] == [0.5, 1.0, 2.0, 8.0]


def test_429_after_the_retries_are_spent_is_rate_limited(api: respx.MockRouter) -> None:
    limited = httpx.Response(429, json={"error": "busy"}, headers={"retry-after": "0"})
    route = api.post(CHAT).mock(side_effect=[limited] * 3)
    with pytest.raises(LLMError) as caught:
        provider(max_retries=2).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.RATE_LIMITED
    assert route.call_count == 3


def test_500_is_unavailable(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(500, json={"error": "llama runner crashed"}))
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE
    assert "llama runner crashed" in caught.value.message


def test_401_is_an_auth_error(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(401, json={"error": "unauthorized"}))
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.AUTH
    assert "OLLAMA_HOST" in caught.value.message


def test_a_missing_model_says_how_to_pull_it(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(
        return_value=httpx.Response(
            404, json={"error": "model 'llama3.1' not found, try pulling it first"}
        )
    )
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE
    assert "ollama pull llama3.1" in caught.value.message


def test_a_body_that_is_not_json_is_a_bad_response(api: respx.MockRouter) -> None:
    api.post(CHAT).mock(return_value=httpx.Response(200, content=b"<html>proxy</html>"))
    with pytest.raises(LLMError) as caught:
        provider().chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE


def test_identity_properties() -> None:
    p = OllamaProvider()
    assert (p.provider_name, p.model_name, p.supports_tools) == ("ollama", "llama3.1", True)
