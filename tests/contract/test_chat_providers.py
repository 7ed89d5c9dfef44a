"""The ChatProvider contract: one suite that every chat provider passes.

The scripted provider plays the script directly; the three vendor adapters (Anthropic, OpenAI,
Ollama) play it over mocked HTTP in their vendor's documented wire format (``provider_mocks``), so
their own request building, stream parsing and error translation run for real. The offline provider
has no model: its contract is to say so (``UNSUPPORTED_FEATURE``) on every call, never to make up
an answer. The observing wrapper that the composition root puts around every provider passes it too
(around the OpenAI adapter, reporting to the Prometheus telemetry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import respx

from folio.adapters.llm.anthropic import AnthropicProvider
from folio.adapters.llm.observed import ObservedChatProvider
from folio.adapters.llm.offline import OfflineChatProvider
from folio.adapters.llm.ollama import OllamaProvider
from folio.adapters.llm.openai import OpenAIProvider
from folio.adapters.llm.scripted import ScriptedChatProvider, ScriptStep, tool_call
from folio.adapters.observability.metrics import PrometheusTelemetry
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    StreamEvent,
    StreamEventKind,
    ToolDefinition,
)
from folio.domain.ports import ChatProvider
from tests.integration.provider_mocks import (
    OLLAMA_HOST,
    AnthropicAPI,
    Entry,
    Failure,
    OllamaAPI,
    OpenAIAPI,
    call,
    say,
)

SEARCH = ToolDefinition(
    "search_book",
    "Search the book",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
QUESTION = [PromptMessage.system("You are a reading companion."), PromptMessage.user("Who?")]
ANSWER = "Henry Clerval, Victor's friend from Geneva (Chapter 2, p. 12)."
_STATUS_CODES = {
    401: LLMErrorCode.AUTH,
    429: LLMErrorCode.RATE_LIMITED,
    503: LLMErrorCode.UNAVAILABLE,
}
OLLAMA_ROUTER = respx.MockRouter(assert_all_mocked=True, assert_all_called=False)


def _scripted(*script: Entry) -> ChatProvider:
    steps: list[ScriptStep] = []
    for entry in script:
        if isinstance(entry, Failure):
            steps.append(LLMError(entry.message, code=_STATUS_CODES[entry.status]))
        elif entry.calls:
            steps.append(
                [tool_call(c.name, dict(c.object()), tool_use_id=c.id) for c in entry.calls]
            )
        else:
            steps.append(entry.text)
    return ScriptedChatProvider(steps)


def _anthropic(*script: Entry) -> ChatProvider:
    api = AnthropicAPI(*script)
    return AnthropicProvider(api_key="sk-ant-test", max_retries=0, http_client=api.client())


def _openai(*script: Entry) -> ChatProvider:
    api = OpenAIAPI(*script)
    return OpenAIProvider(api_key="sk-test", max_retries=0, http_client=api.client())


def _ollama(*script: Entry) -> ChatProvider:
    api = OllamaAPI(*script)
    OLLAMA_ROUTER.post(f"{OLLAMA_HOST}/api/chat").mock(side_effect=api.httpx_handler)
    return OllamaProvider(host=OLLAMA_HOST, model="llama3.1:8b", max_retries=0)


def _observed_openai(*script: Entry) -> ChatProvider:
    return ObservedChatProvider(_openai(*script), PrometheusTelemetry())


PROVIDERS: dict[str, Callable[..., ChatProvider]] = {
    "scripted": _scripted,
    "anthropic": _anthropic,
    "openai": _openai,
    "ollama": _ollama,
    "observed-openai": _observed_openai,
}


@pytest.fixture(autouse=True)
def no_real_http() -> Iterator[None]:
    with OLLAMA_ROUTER:
        yield
    OLLAMA_ROUTER.routes.clear()


@pytest.fixture(params=list(PROVIDERS))
def make(request: pytest.FixtureRequest) -> Callable[..., ChatProvider]:
    return PROVIDERS[request.param]


def _done(events: Iterator[StreamEvent]) -> tuple[str, ChatResponse]:
    """The streamed text and the final response; exactly one DONE, and it comes last."""
    collected = list(events)
    assert [e.kind for e in collected].count(StreamEventKind.DONE) == 1
    assert collected[-1].kind is StreamEventKind.DONE and collected[-1].response is not None
    text = "".join(e.text for e in collected if e.kind is StreamEventKind.TEXT_DELTA)
    return text, collected[-1].response


# --- identity ------------------------------------------------------------------------------------
def test_a_provider_names_itself_and_its_model(make: Callable[..., ChatProvider]) -> None:
    provider = make()
    assert provider.provider_name in {"scripted", "anthropic", "openai", "ollama"}
    assert isinstance(provider.model_name, str) and provider.model_name
    assert provider.supports_tools is True


# --- answers -------------------------------------------------------------------------------------
def test_chat_returns_the_text_and_no_tool_calls(make: Callable[..., ChatProvider]) -> None:
    response = make(say(ANSWER, usage=(120, 20))).chat(QUESTION)
    assert response.text == ANSWER
    assert response.tool_invocations == () and not response.wants_tools
    assert response.usage.input_tokens >= 0 and response.usage.output_tokens >= 0


def test_chat_with_tools_returns_the_call_with_its_id_and_object_arguments(
    make: Callable[..., ChatProvider],
) -> None:
    response = make(call("search_book", {"query": "Clerval"}, id="call_1")).chat_with_tools(
        QUESTION, [SEARCH]
    )
    (invocation,) = response.tool_invocations
    assert response.wants_tools
    assert invocation.tool_name == "search_book"
    assert dict(invocation.arguments) == {"query": "Clerval"}
    assert isinstance(invocation.tool_use_id, str)
    assert invocation.parse_error is None


def test_a_tool_result_goes_back_and_the_model_answers(make: Callable[..., ChatProvider]) -> None:
    provider = make(call("search_book", {"query": "Clerval"}, id="call_1"), say(ANSWER))
    (invocation,) = provider.chat_with_tools(QUESTION, [SEARCH]).tool_invocations
    follow = [
        *QUESTION,
        PromptMessage.assistant("", (invocation,)),
        PromptMessage.tool_result(
            invocation.tool_use_id, '{"success": true, "data": {"results": []}}'
        ),
    ]
    assert provider.chat_with_tools(follow, [SEARCH]).text == ANSWER


def test_a_stream_yields_deltas_that_make_the_final_text(
    make: Callable[..., ChatProvider],
) -> None:
    text, response = _done(make(say(ANSWER)).stream_chat(QUESTION))
    assert text == response.text == ANSWER


def test_a_streamed_tool_call_arrives_in_the_final_response(
    make: Callable[..., ChatProvider],
) -> None:
    provider = make(call("search_book", {"query": "Clerval"}, id="call_1"))
    _, response = _done(provider.stream_chat_with_tools(QUESTION, [SEARCH]))
    (invocation,) = response.tool_invocations
    assert (invocation.tool_name, dict(invocation.arguments)) == (
        "search_book",
        {"query": "Clerval"},
    )


# --- failures ------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", sorted(_STATUS_CODES))
def test_a_failure_is_an_llm_error_with_its_code_never_a_vendor_exception(
    make: Callable[..., ChatProvider], status: int
) -> None:
    with pytest.raises(LLMError) as caught:
        make(Failure(status, "the vendor says no")).chat(QUESTION)
    assert caught.value.code is _STATUS_CODES[status]


# --- the provider without a model ----------------------------------------------------------------
@pytest.mark.parametrize(
    "use",
    [
        lambda p: p.chat(QUESTION),
        lambda p: p.chat_with_tools(QUESTION, [SEARCH]),
        lambda p: list(p.stream_chat(QUESTION)),
        lambda p: list(p.stream_chat_with_tools(QUESTION, [SEARCH])),
    ],
)
def test_the_offline_provider_never_makes_up_a_reply(use: Callable[[ChatProvider], object]) -> None:
    provider = OfflineChatProvider()
    assert (provider.provider_name, provider.model_name) == ("offline", "extractive")
    assert provider.supports_tools is False  # the composition root runs the extractive strategy
    with pytest.raises(LLMError) as caught:
        use(provider)
    assert caught.value.code is LLMErrorCode.UNSUPPORTED_FEATURE
