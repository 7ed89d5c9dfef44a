"""The OpenAI(-compatible) adapter against a fake Chat Completions API over HTTP.

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

from folio.adapters.llm.openai import OpenAIProvider
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptMessage, StreamEventKind, ToolDefinition, ToolInvocation

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


def provider(api: FakeAPI, **kwargs: Any) -> OpenAIProvider:
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("api_key", "sk-test")
    client = httpx2.Client(transport=httpx2.MockTransport(api))
    return OpenAIProvider(http_client=client, **kwargs)


def completion(
    content: str | None, tool_calls: list[dict[str, Any]] | None = None, finish: str = "stop"
) -> httpx2.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": "chatcmpl-XY",
        "object": "chat.completion",
        "created": 1763790000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 57, "completion_tokens": 17, "total_tokens": 74},
    }
    return httpx2.Response(200, json=body)


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def error(status: int, text: str, **headers: str) -> httpx2.Response:
    body = {"error": {"message": text, "type": "invalid_request_error", "code": None}}
    return httpx2.Response(status, json=body, headers=headers)


def sse(chunks: list[dict[str, Any]]) -> httpx2.Response:
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    headers = {"content-type": "text/event-stream"}
    return httpx2.Response(200, content=text.encode(), headers=headers)


# --- requests -----------------------------------------------------------------------------------
def test_request_has_the_system_message_first_and_tools_in_function_format() -> None:
    api = FakeAPI(completion("Hello"))
    provider(api).chat_with_tools(
        [PromptMessage.system("You are folio."), PromptMessage.user("Who is Emma?")], [SEARCH]
    )
    request = api.requests[0]
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert api.body() == {
        "model": "gpt-4o-mini",
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


def test_tool_calls_go_back_as_assistant_tool_calls_and_tool_messages_paired_by_id() -> None:
    calls = (
        ToolInvocation("search_book", "call_1", {"query": "Emma"}),
        ToolInvocation("list_chapters", "call_2", {}),
    )
    history = [
        PromptMessage.user("Who is Emma?"),
        PromptMessage.assistant("", calls),
        PromptMessage.tool_result("call_1", '{"hits": []}'),
        PromptMessage.tool_result("call_2", '{"error": "x"}', is_error=True),
    ]
    api = FakeAPI(completion("She is..."))
    provider(api).chat_with_tools(history, [SEARCH])
    assert api.body()["messages"] == [
        {"role": "user", "content": "Who is Emma?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("call_1", "search_book", '{"query": "Emma"}'),
                call("call_2", "list_chapters", "{}"),
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"hits": []}'},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"error": "x"}'},
    ]


def test_base_url_reaches_a_compatible_server_without_a_real_key() -> None:
    api = FakeAPI(completion("hi"))
    p = provider(api, api_key=None, base_url="http://localhost:8000/v1", model="qwen2.5-7b")
    p.chat([PromptMessage.user("Hi")])
    assert api.requests[0].url == "http://localhost:8000/v1/chat/completions"
    assert api.body()["model"] == "qwen2.5-7b"
    assert "tools" not in api.body()


# --- responses ----------------------------------------------------------------------------------
def test_response_text_usage_and_tool_calls_are_read() -> None:
    api = FakeAPI(
        completion(
            None,
            [
                call("call_9", "search_book", '{"query": "Knightley"}'),
                call("call_10", "no_such_tool", "{}"),
            ],
            finish="tool_calls",
        )
    )
    response = provider(api).chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert response.text is None
    assert response.tool_invocations == (
        ToolInvocation("search_book", "call_9", {"query": "Knightley"}),
        ToolInvocation("no_such_tool", "call_10", {}),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (57, 17)
    assert response.stop_reason == "tool_calls"
    assert response.model == "gpt-4o-mini-2024-07-18"


def test_plain_text_answer() -> None:
    response = provider(FakeAPI(completion("Emma is clever."))).chat([PromptMessage.user("q")])
    assert response.text == "Emma is clever."
    assert not response.wants_tools


def test_invalid_json_arguments_become_a_parse_error_not_an_exception() -> None:
    api = FakeAPI(
        completion(None, [call("call_1", "search_book", '{"query": "Emma')], "tool_calls")
    )
    response = provider(api).chat_with_tools([PromptMessage.user("q")], [SEARCH])
    (invocation,) = response.tool_invocations
    assert invocation.tool_name == "search_book"
    assert invocation.tool_use_id == "call_1"
    assert invocation.arguments == {}
    assert invocation.parse_error is not None and "JSON" in invocation.parse_error


def test_arguments_that_are_json_but_not_an_object_are_a_parse_error() -> None:
    api = FakeAPI(completion(None, [call("call_1", "search_book", '["Emma"]')], "tool_calls"))
    (invocation,) = (
        provider(api).chat_with_tools([PromptMessage.user("q")], [SEARCH]).tool_invocations
    )
    assert invocation.arguments == {}
    assert invocation.parse_error is not None


# --- streaming ----------------------------------------------------------------------------------
def test_streaming_yields_text_then_done_with_tool_calls_assembled_by_index() -> None:
    chunks = json.loads((FIXTURES / "openai_stream_tool_calls.json").read_text())
    api = FakeAPI(sse(chunks))
    events = list(provider(api).stream_chat_with_tools([PromptMessage.user("q")], [SEARCH]))
    body = api.body()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [e.text for e in events if e.kind is StreamEventKind.TEXT_DELTA] == ["Let me", " check."]
    assert [e.kind for e in events][-1] is StreamEventKind.DONE
    done = events[-1].response
    assert done is not None
    assert done.text == "Let me check."
    assert done.tool_invocations == (
        ToolInvocation("search_book", "call_Abc1", {"query": "Emma Woodhouse"}),
        ToolInvocation("list_chapters", "call_Def2", {}),
    )
    assert (done.usage.input_tokens, done.usage.output_tokens) == (91, 27)
    assert done.stop_reason == "tool_calls"


def test_streamed_plain_answer_has_no_tool_calls() -> None:
    chunks = json.loads((FIXTURES / "openai_stream_tool_calls.json").read_text())
    text_only = [
        c for c in chunks if not (c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    ]
    events = list(provider(FakeAPI(sse(text_only))).stream_chat([PromptMessage.user("q")]))
    done = events[-1].response
    assert done is not None and done.text == "Let me check." and not done.wants_tools


# --- errors -------------------------------------------------------------------------------------
def test_401_is_an_auth_error_naming_the_key_to_check() -> None:
    api = FakeAPI(error(401, "Incorrect API key provided: sk-test."))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.AUTH
    assert "OPENAI_API_KEY" in caught.value.message
    assert "Incorrect API key" in caught.value.message


def test_429_is_retried_honouring_retry_after_then_succeeds() -> None:
    api = FakeAPI(error(429, "Rate limit reached", **{"retry-after": "0.01"}), completion("ok"))
    assert provider(api, max_retries=2).chat([PromptMessage.user("q")]).text == "ok"
    assert len(api.requests) == 2


def test_429_after_the_retries_are_spent_is_rate_limited() -> None:
    api = FakeAPI(*[error(429, "Rate limit reached", **{"retry-after-ms": "1"}) for _ in range(3)])
    with pytest.raises(LLMError) as caught:
        provider(api, max_retries=2).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.RATE_LIMITED
    assert len(api.requests) == 3


def test_500_is_unavailable() -> None:
    with pytest.raises(LLMError) as caught:
        provider(FakeAPI(error(500, "The server had an error"))).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE


def test_a_timeout_is_a_timeout_error() -> None:
    api = FakeAPI(httpx2.ReadTimeout("read timed out"))
    with pytest.raises(LLMError) as caught:
        provider(api).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.TIMEOUT


def test_a_refused_connection_names_the_server() -> None:
    api = FakeAPI(httpx2.ConnectError("connection refused"))
    with pytest.raises(LLMError) as caught:
        provider(api, base_url="http://localhost:1234/v1").chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.UNAVAILABLE
    assert "localhost:1234" in caught.value.message


def test_a_compatible_server_without_tool_support_is_unsupported_feature() -> None:
    vllm = httpx2.Response(
        400,
        json={
            "object": "error",
            "message": '"auto" tool choice requires --enable-auto-tool-choice to be set',
            "type": "BadRequestError",
            "code": 400,
        },
    )
    p = provider(FakeAPI(vllm))
    with pytest.raises(LLMError) as caught:
        p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert caught.value.code == LLMErrorCode.UNSUPPORTED_FEATURE
    # the adapter only reports: the strategy decides to fall back (tests/unit/test_chat.py)
    assert p.supports_tools is True


def test_a_provider_configured_without_tools_refuses_tool_calls_without_a_request() -> None:
    api = FakeAPI()
    p = provider(api, supports_tools=False)
    assert p.supports_tools is False
    with pytest.raises(LLMError) as caught:
        p.chat_with_tools([PromptMessage.user("q")], [SEARCH])
    assert caught.value.code == LLMErrorCode.UNSUPPORTED_FEATURE
    assert api.requests == []


def test_a_completion_without_choices_is_a_bad_response() -> None:
    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    with pytest.raises(LLMError) as caught:
        provider(FakeAPI(httpx2.Response(200, json=body))).chat([PromptMessage.user("q")])
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE


def test_no_key_and_no_base_url_is_an_auth_error() -> None:
    with pytest.raises(LLMError) as caught:
        OpenAIProvider(api_key=None)
    assert caught.value.code == LLMErrorCode.AUTH


def test_identity_properties() -> None:
    p = provider(FakeAPI())
    assert (p.provider_name, p.model_name, p.supports_tools) == ("openai", "gpt-4o-mini", True)


# --- a broken server: every failure is an LLMError, never a partial answer ---------------------
def _raw_sse(text: str) -> httpx2.Response:
    return httpx2.Response(
        200, content=text.encode(), headers={"content-type": "text/event-stream"}
    )


def _text_chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }


BROKEN_STREAMS = {
    "invalid JSON mid-stream": _raw_sse(
        f"data: {json.dumps(_text_chunk('Clerval is'))}\n\ndata: {{not json\n\ndata: [DONE]\n\n"
    ),
    "no choices at all": sse(
        [{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []}]
    ),
    "cut before finish_reason": _raw_sse(f"data: {json.dumps(_text_chunk('Clerval is'))}\n\n"),
    "done without finish_reason": sse([_text_chunk("Clerval is")]),
}


@pytest.mark.parametrize("case", list(BROKEN_STREAMS))
def test_a_broken_stream_is_a_bad_response_not_a_partial_answer(case: str) -> None:
    stream = provider(FakeAPI(BROKEN_STREAMS[case])).stream_chat([PromptMessage.user("Who?")])
    with pytest.raises(LLMError) as caught:
        list(stream)
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE, caught.value.message
    assert "openai" in caught.value.message.lower()


@pytest.mark.parametrize(
    "reply",
    [
        httpx2.Response(
            200, content=b"<html>gateway</html>", headers={"content-type": "text/html"}
        ),
        httpx2.Response(200, content=b"{not json", headers={"content-type": "application/json"}),
        httpx2.Response(200, json={"id": "x", "object": "chat.completion", "choices": []}),
    ],
    ids=["html", "invalid json", "no choices"],
)
def test_an_unreadable_completion_is_a_bad_response(reply: httpx2.Response) -> None:
    with pytest.raises(LLMError) as caught:
        provider(FakeAPI(reply)).chat([PromptMessage.user("Who?")])
    assert caught.value.code == LLMErrorCode.BAD_RESPONSE, caught.value.message
