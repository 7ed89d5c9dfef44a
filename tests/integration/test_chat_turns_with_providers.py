"""Whole chat turns through ``ChatWithBook`` with each real provider adapter over mocked HTTP.

The book (the bundled Frankenstein) is imported into a SQLite library in a temporary FOLIO_HOME with
the hashing embedder, the chat is wired as ``Container.chat`` wires it, and the model is a fake
vendor API (``provider_mocks``) answering in the vendor's documented wire format. So the real agent
loop, tool registry, search, context window and unit of work run against the real adapters, and the
tests read what actually went over the wire: tool calls paired with their results, the history of
earlier turns, streaming, and errors in the middle of a turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import respx

from folio.adapters.llm.anthropic import AnthropicProvider
from folio.adapters.llm.ollama import OllamaProvider
from folio.adapters.llm.openai import OpenAIProvider
from folio.agent.tools import default_registry
from folio.app.chat import AnswerDelta, ChatEvent, ChatWithBook, ToolCallFinished, ToolCallStarted
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.conversations import ConversationDetail
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import PromptRole
from folio.domain.ports import ChatProvider
from tests.integration.provider_mocks import (
    OLLAMA_HOST,
    AnthropicAPI,
    Entry,
    Failure,
    FakeChatAPI,
    OllamaAPI,
    OpenAIAPI,
    Reply,
    ToolCall,
    call,
    say,
)

# The SDK warns that the default model is due for retirement; the wire format is what's tested.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

BOOK = Path(__file__).resolve().parents[2] / "src" / "folio" / "data" / "frankenstein.txt"
QUESTION = "Who is Victor Frankenstein?"
QUERY = "Victor Frankenstein family childhood Geneva"
FOLLOW_UP = "What happens to him?"
FOLLOW_QUERY = "Victor Frankenstein death pursuing the creature in the Arctic"
PLACEHOLDER = "New conversation"


# --- the library, once per module ---------------------------------------------------------------
@dataclass(frozen=True)
class Library:
    container: Container
    book: Book
    text: str
    page: str  # the page of the best passage for QUERY: what the fake model cites
    follow_page: str

    def chat(self, provider: ChatProvider) -> ChatWithBook:
        """The chat use case exactly as ``Container.chat`` wires it, with ``provider``."""
        return self.container.overridden(provider=provider).chat()

    def new_conversation(self) -> str:
        return self.container.conversations.create(self.book.id).id

    def top_page(self, query: str) -> str:
        hits = self.container.searcher.search(self.book, query, k=self.container.settings.search_k)
        return hits[0].page_label_start


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    home = tmp_path_factory.mktemp("provider-turns-home")
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    book = container.ingest.execute(BOOK).book
    text = container.books.get_text(book.id)
    lib = Library(container, book, text, "", "")
    return Library(container, book, text, lib.top_page(QUERY), lib.top_page(FOLLOW_QUERY))


def answer_one(library: Library) -> str:
    return (
        "Victor Frankenstein is a young scientist from Geneva who tells his story to Walton "
        f"(Chapter 1, p. {library.page})."
    )


def answer_two(library: Library) -> str:
    return f"He dies on Walton's ship after chasing the creature north (p. {library.follow_page})."


# --- the vendors --------------------------------------------------------------------------------
@dataclass
class Vendor:
    """How to build one real adapter talking to its fake API."""

    name: str
    provider_name: str
    fake: Callable[..., FakeChatAPI]
    build: Callable[[FakeChatAPI, int], ChatProvider]
    pairs_by_id: bool = True

    def tool_id(self, n: int) -> str:
        prefix = {"anthropic": "toolu_01Fake", "ollama": ""}.get(self.provider_name, "call_Fake")
        return f"{prefix}{n:04d}" if prefix else ""

    def start(self, *script: Entry, max_retries: int = 0) -> tuple[FakeChatAPI, ChatProvider]:
        api = self.fake(*script)
        return api, self.build(api, max_retries)


def _anthropic(api: FakeChatAPI, retries: int) -> ChatProvider:
    return AnthropicProvider(api_key="sk-ant-test", max_retries=retries, http_client=api.client())


def _openai(api: FakeChatAPI, retries: int) -> ChatProvider:
    return OpenAIProvider(api_key="sk-test", max_retries=retries, http_client=api.client())


def _compatible(api: FakeChatAPI, retries: int) -> ChatProvider:
    api.model = "qwen2.5-7b-instruct"  # LM Studio / vLLM report the model they serve
    return OpenAIProvider(
        base_url="http://localhost:1234/v1",
        model="qwen2.5-7b-instruct",
        max_retries=retries,
        http_client=api.client(),
    )


# respx patches httpx only (Ollama's client); the SDKs' httpx2 clients have their own mock.
OLLAMA_ROUTER = respx.MockRouter(assert_all_mocked=True, assert_all_called=False)


def _ollama(api: FakeChatAPI, retries: int) -> ChatProvider:
    OLLAMA_ROUTER.post(f"{OLLAMA_HOST}/api/chat").mock(side_effect=api.httpx_handler)
    return OllamaProvider(host=OLLAMA_HOST, model="llama3.1:8b", max_retries=retries)


VENDORS = {
    "anthropic": Vendor("anthropic", "anthropic", AnthropicAPI, _anthropic),
    "openai": Vendor("openai", "openai", OpenAIAPI, _openai),
    "openai_compatible": Vendor("openai_compatible", "openai", OpenAIAPI, _compatible),
    "ollama": Vendor("ollama", "ollama", OllamaAPI, _ollama, pairs_by_id=False),
}


@pytest.fixture(autouse=True)
def no_real_http() -> Iterator[None]:
    with OLLAMA_ROUTER:
        yield
    OLLAMA_ROUTER.routes.clear()


@pytest.fixture(params=list(VENDORS))
def vendor(request: pytest.FixtureRequest) -> Vendor:
    return VENDORS[request.param]


def turn_one_script(vendor: Vendor, library: Library) -> list[Entry]:
    return [
        call("search_book", {"query": QUERY}, id=vendor.tool_id(1), usage=(1200, 40)),
        say(answer_one(library), usage=(2600, 85)),
    ]


def stored(library: Library, conversation_id: str) -> ConversationDetail:
    return library.container.conversations.get(conversation_id)


# --- 1. one turn with a search ------------------------------------------------------------------
def test_a_turn_pairs_the_tool_call_with_its_result_and_is_stored_whole(
    vendor: Vendor, library: Library
) -> None:
    api, provider = vendor.start(*turn_one_script(vendor, library))
    conversation_id = library.new_conversation()

    result = library.chat(provider).execute(conversation_id, QUESTION)

    # what went over the wire
    assert len(api.bodies) == 2
    assert library.book.title in api.system_prompt(0)
    # the tools that can work for this book: it has chapters and is read, but has no highlights
    assert api.tool_names(0) == [n for n in default_registry().names if n != "search_highlights"]
    assert api.conversation(0) == [{"role": "user", "content": QUESTION}]
    (exchange,) = api.tool_exchanges(1)
    assert exchange.call_key == exchange.result_key
    assert (exchange.name, exchange.arguments) == ("search_book", {"query": QUERY})
    assert exchange.result["success"] is True
    passages = exchange.result["data"]["results"]
    # each passage's text, or each part of it a model is sent ("…" where text is left out)
    book_words = " ".join(library.text.split())
    parts = [" ".join(part.split()) for p in passages for part in p["text"].split("…")]
    assert passages and all(part in book_words for part in parts)
    assert library.page in {p["page_start"] for p in passages}
    assert api.conversation(1)[0] == {"role": "user", "content": QUESTION}

    # what the turn reports
    assert result.turn_number == 1
    assert result.answer == answer_one(library)
    assert result.citations and all(
        int(c.page_start) <= int(library.page) <= int(c.page_end) for c in result.citations
    )
    assert result.searches == (QUERY,)
    assert result.llm_calls == 2
    assert (result.input_tokens, result.output_tokens) == (1200 + 2600, 40 + 85)
    assert (result.provider, result.model) == (vendor.provider_name, api.model)
    assert result.strategy == "tool_use"

    # what was stored
    detail = stored(library, conversation_id)
    roles = [m.role for m in detail.messages]
    assert roles == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]
    user, calling, tool_result, answer = detail.messages
    assert user.content == QUESTION
    (invocation,) = calling.tool_invocations
    assert invocation.tool_use_id == tool_result.tool_use_id
    assert (invocation.tool_name, dict(invocation.arguments)) == ("search_book", {"query": QUERY})
    assert tool_result.tool_name == "search_book"
    assert json.loads(tool_result.content) == exchange.result
    assert answer.content == result.answer
    (turn,) = detail.turns
    assert (turn.provider, turn.model, turn.strategy) == (
        vendor.provider_name,
        api.model,
        "tool_use",
    )
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 3800, 125)
    assert turn.queries == (QUERY,)
    assert turn.sources == result.citations
    assert detail.conversation.title == QUESTION


def _anthropic_shapes(api: FakeChatAPI) -> None:
    body = api.bodies[1]
    (system,) = body["system"]
    assert system["type"] == "text" and system["cache_control"] == {"type": "ephemeral"}
    assert all(m["role"] in ("user", "assistant") for m in body["messages"])
    # prompt caching: tools + system, and the reader's question (the end of the conversation so
    # far); the turn's own tool traffic is not written to the cache
    assert api.cache_breakpoints(0) == ["system", "message 0"]
    assert api.cache_breakpoints(1) == ["system", "message 0"]
    assert all(set(t) == {"name", "description", "input_schema"} for t in body["tools"])
    user, assistant, results = api.conversation(1)
    assert user == {"role": "user", "content": QUESTION}
    assert assistant == {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01Fake0001",
                "name": "search_book",
                "input": {"query": QUERY},
            }
        ],
    }
    (block,) = results["content"]
    assert results["role"] == "user"
    assert (block["type"], block["tool_use_id"], block["is_error"]) == (
        "tool_result",
        "toolu_01Fake0001",
        False,
    )
    assert isinstance(block["content"], str)


def _function_tools(body: dict[str, object]) -> None:
    tools = body["tools"]
    assert isinstance(tools, list)
    assert all(t["type"] == "function" for t in tools)
    assert all(set(t["function"]) == {"name", "description", "parameters"} for t in tools)


def _openai_shapes(api: FakeChatAPI) -> None:
    body = api.bodies[1]
    _function_tools(body)
    system, user, assistant, tool = body["messages"]
    assert system["role"] == "system"
    assert user == {"role": "user", "content": QUESTION}
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_Fake0001",
                "type": "function",
                "function": {"name": "search_book", "arguments": json.dumps({"query": QUERY})},
            }
        ],
    }
    assert set(tool) == {"role", "tool_call_id", "content"}
    assert (tool["role"], tool["tool_call_id"]) == ("tool", "call_Fake0001")


def _ollama_shapes(api: FakeChatAPI) -> None:
    body = api.bodies[1]
    assert body["stream"] is False
    _function_tools(body)
    system, user, assistant, tool = body["messages"]
    assert system["role"] == "system"
    assert user == {"role": "user", "content": QUESTION}
    assert assistant == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "search_book", "arguments": {"query": QUERY}}}],
    }
    assert set(tool) == {"role", "content", "tool_name"}
    assert (tool["role"], tool["tool_name"]) == ("tool", "search_book")


SHAPES = {
    "anthropic": (_anthropic_shapes, "https://api.anthropic.com/v1/messages"),
    "openai": (_openai_shapes, "https://api.openai.com/v1/chat/completions"),
    "openai_compatible": (_openai_shapes, "http://localhost:1234/v1/chat/completions"),
    "ollama": (_ollama_shapes, f"{OLLAMA_HOST}/api/chat"),
}


def test_the_second_request_has_the_vendors_exact_tool_call_and_result_format(
    vendor: Vendor, library: Library
) -> None:
    api, provider = vendor.start(*turn_one_script(vendor, library))
    library.chat(provider).execute(library.new_conversation(), QUESTION)
    check, url = SHAPES[vendor.name]
    assert api.urls == [url, url]
    check(api)


def test_the_compatible_server_gets_no_real_key_and_the_official_api_gets_the_key(
    library: Library,
) -> None:
    for name, expected in (
        ("openai", "Bearer sk-test"),
        ("openai_compatible", "Bearer not-needed"),
    ):
        vendor = VENDORS[name]
        api, provider = vendor.start(*turn_one_script(vendor, library))
        library.chat(provider).execute(library.new_conversation(), QUESTION)
        assert {h["authorization"] for h in api.headers} == {expected}


# --- 2. a follow-up turn carries the first turn -------------------------------------------------
def test_a_follow_up_sends_the_first_turn_as_its_question_and_answer_and_pairs_its_own_call(
    vendor: Vendor, library: Library
) -> None:
    api, provider = vendor.start(
        *turn_one_script(vendor, library),
        call("search_book", {"query": FOLLOW_QUERY}, id=vendor.tool_id(2), usage=(3000, 30)),
        say(answer_two(library), usage=(4000, 50)),
    )
    chat = library.chat(provider)
    conversation_id = library.new_conversation()
    chat.execute(conversation_id, QUESTION)

    second = chat.execute(conversation_id, FOLLOW_UP)

    assert len(api.bodies) == 4
    # the earlier turn is its question and its answer (which cites its pages); its tool call and
    # results are not sent again
    assert api.conversation(2) == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": answer_one(library)},
        {"role": "user", "content": FOLLOW_UP},
    ]
    assert f"p. {library.page}" in answer_one(library)
    assert api.tool_exchanges(2) == []
    assert api.conversation(3)[:3] == api.conversation(2), "the second call repeats the history"
    (new,) = api.tool_exchanges(3)
    assert new.call_key == new.result_key
    assert new.arguments == {"query": FOLLOW_QUERY}
    assert new.result["data"]["query"] == FOLLOW_QUERY
    (first,) = api.tool_exchanges(1)
    if vendor.pairs_by_id:
        assert first.call_key != new.call_key

    assert (second.turn_number, second.answer) == (2, answer_two(library))
    assert second.searches == (FOLLOW_QUERY,)
    assert second.llm_calls == 2
    assert (second.input_tokens, second.output_tokens) == (7000, 80)
    detail = stored(library, conversation_id)
    assert [m.turn_number for m in detail.messages] == [1, 1, 1, 1, 2, 2, 2, 2]
    ids = [m.tool_use_id for m in detail.messages if m.role is PromptRole.TOOL_RESULT]
    assert len(set(ids)) == 2  # Ollama's generated ids differ between turns too
    assert [t.turn_number for t in detail.turns] == [1, 2]


# --- 3. streaming -------------------------------------------------------------------------------
def test_a_streamed_turn_sends_answer_deltas_that_make_up_the_answer(
    vendor: Vendor, library: Library
) -> None:
    api, provider = vendor.start(*turn_one_script(vendor, library))
    events: list[ChatEvent] = []
    conversation_id = library.new_conversation()

    result = library.chat(provider).execute(conversation_id, QUESTION, on_event=events.append)

    assert [b["stream"] for b in api.bodies] == [True, True]
    if vendor.provider_name == "openai":
        assert all(b["stream_options"] == {"include_usage": True} for b in api.bodies)
    deltas = [e.text for e in events if isinstance(e, AnswerDelta)]
    assert len(deltas) > 5
    assert "".join(deltas) == result.answer == answer_one(library)
    kinds = [type(e) for e in events]
    assert kinds[:2] == [ToolCallStarted, ToolCallFinished]
    assert set(kinds[2:]) == {AnswerDelta}
    started = events[0]
    assert isinstance(started, ToolCallStarted)
    assert (started.name, dict(started.arguments)) == ("search_book", {"query": QUERY})
    assert result.searches == (QUERY,)
    assert result.citations
    assert (result.llm_calls, result.input_tokens, result.output_tokens) == (2, 3800, 125)
    detail = stored(library, conversation_id)
    assert detail.messages[-1].content == result.answer
    assert detail.messages[1].tool_invocations[0].tool_use_id == detail.messages[2].tool_use_id


# --- 4. errors inside the loop ------------------------------------------------------------------
def test_invalid_json_arguments_get_an_invalid_arguments_result_and_the_model_answers(
    library: Library,
) -> None:
    vendor = VENDORS["openai"]
    api, provider = vendor.start(
        call("search_book", '{"query": "Victor Franken', id="call_Bad1", usage=(1000, 20)),
        say("I could not search, but Victor is the narrator of the tale.", usage=(1100, 15)),
    )
    conversation_id = library.new_conversation()

    result = library.chat(provider).execute(conversation_id, QUESTION)

    tool_message = api.bodies[1]["messages"][-1]
    assert (tool_message["role"], tool_message["tool_call_id"]) == ("tool", "call_Bad1")
    error = json.loads(tool_message["content"])
    assert error["success"] is False
    assert error["error_code"] == "INVALID_ARGUMENTS"
    assert result.answer == "I could not search, but Victor is the narrator of the tale."
    (record,) = result.tool_calls
    assert (record.success, record.error_code) == (False, "INVALID_ARGUMENTS")
    assert result.searches == ()
    assert result.llm_calls == 2
    detail = stored(library, conversation_id)
    assert [m.is_error for m in detail.messages] == [False, False, True, False]
    assert detail.turns[0].extra["tool_calls"][0]["error_code"] == "INVALID_ARGUMENTS"


def test_a_429_with_retry_after_mid_turn_is_retried_and_the_turn_completes(
    vendor: Vendor, library: Library
) -> None:
    first, last = turn_one_script(vendor, library)
    limited = Failure(429, "Rate limit reached", {"retry-after": "0.01"})
    api, provider = vendor.start(first, limited, last, max_retries=2)
    conversation_id = library.new_conversation()

    result = library.chat(provider).execute(conversation_id, QUESTION)

    assert len(api.bodies) == 3
    assert api.bodies[1] == api.bodies[2]  # the same request, sent again
    assert result.answer == answer_one(library)
    assert result.llm_calls == 2
    assert (result.input_tokens, result.output_tokens) == (3800, 125)
    assert len(stored(library, conversation_id).turns) == 1


def test_a_401_mid_turn_is_an_auth_error_and_nothing_of_the_turn_is_stored(
    vendor: Vendor, library: Library
) -> None:
    first, _ = turn_one_script(vendor, library)
    api, provider = vendor.start(first, Failure(401, "invalid x-api-key"), max_retries=2)
    conversation_id = library.new_conversation()

    with pytest.raises(LLMError) as caught:
        library.chat(provider).execute(conversation_id, QUESTION)

    assert caught.value.code == LLMErrorCode.AUTH
    assert len(api.bodies) == 2  # the search ran, then the answer was refused; no retry
    detail = stored(library, conversation_id)
    assert detail.messages == ()
    assert detail.turns == ()
    assert detail.conversation.title == PLACEHOLDER


NO_TOOLS = {
    "ollama": "registry.ollama.ai/library/gemma2:2b does not support tools",
    "openai_compatible": '"auto" tool choice requires --enable-auto-tool-choice to be set',
}


@pytest.mark.parametrize("name", list(NO_TOOLS))
def test_a_model_without_tools_falls_back_to_always_retrieve_for_this_and_later_turns(
    name: str, library: Library
) -> None:
    """Ollama's 400 "does not support tools" (and vLLM's without a tool parser)."""
    vendor = VENDORS[name]
    no_tools = Failure(400, NO_TOOLS[name])
    rewritten = "What happens to Victor Frankenstein in the end?"
    api, provider = vendor.start(
        no_tools,
        say(answer_one(library), usage=(900, 60)),
        say(rewritten, usage=(300, 12)),
        say(answer_two(library), usage=(950, 40)),
    )
    chat = library.chat(provider)
    conversation_id = library.new_conversation()
    first = chat.execute(conversation_id, QUESTION)
    second = chat.execute(conversation_id, FOLLOW_UP)

    assert "tools" in api.bodies[0]
    assert all("tools" not in body for body in api.bodies[1:])
    assert all(
        m["role"] in ("system", "user", "assistant") for b in api.bodies for m in b["messages"]
    )
    # folio searched the question itself and put the passages in the prompt
    prompt = api.bodies[1]["messages"][-1]["content"]
    assert first.strategy == "always_retrieve"
    assert first.searches == (QUESTION,)
    passages = json.loads(stored(library, conversation_id).messages[2].content)["data"]["results"]
    assert passages and all(p["text"][:80] in prompt for p in passages)
    assert first.answer == answer_one(library)
    assert first.citations
    assert (first.llm_calls, first.input_tokens, first.output_tokens) == (1, 900, 60)

    # the next turn goes straight to the fallback: rewrite the follow-up, search, answer
    assert FOLLOW_UP in json.dumps(api.bodies[2]["messages"])
    assert answer_one(library) in json.dumps(api.bodies[3]["messages"])
    assert second.strategy == "always_retrieve"
    assert second.searches == (rewritten,)
    assert (second.llm_calls, second.input_tokens, second.output_tokens) == (2, 1250, 52)

    detail = stored(library, conversation_id)
    assert [t.strategy for t in detail.turns] == ["always_retrieve", "always_retrieve"]
    assert any("fell back" in step for step in detail.turns[0].reasoning_steps)
    assert [m.role for m in detail.messages[:4]] == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]
    assert detail.messages[1].tool_invocations[0].tool_use_id == detail.messages[2].tool_use_id


def test_a_streamed_fallback_answers_in_deltas(library: Library) -> None:
    vendor = VENDORS["ollama"]
    api, provider = vendor.start(
        Failure(400, NO_TOOLS["ollama"]), say(answer_one(library), usage=(900, 60))
    )
    events: list[ChatEvent] = []

    result = library.chat(provider).execute(
        library.new_conversation(), QUESTION, on_event=events.append
    )

    assert [b["stream"] for b in api.bodies] == [True, True]
    assert result.strategy == "always_retrieve"
    deltas = [e.text for e in events if isinstance(e, AnswerDelta)]
    assert len(deltas) > 5 and "".join(deltas) == result.answer == answer_one(library)


def test_text_streamed_before_a_tool_call_is_kept_with_the_call_not_in_the_answer(
    library: Library,
) -> None:
    """Claude often says what it is about to do before a ``tool_use`` block. That text streams
    to ``on_event`` as it comes (the caller cannot know yet that a tool call follows), is stored
    as the text of the tool-call message, and goes back to the API in the same assistant turn as
    the ``tool_use`` block; the answer is only the final reply."""
    preamble = "Let me look that up in the book."
    opening = Reply(
        text=preamble,
        calls=(ToolCall("search_book", {"query": QUERY}, "toolu_01Pre"),),
        input_tokens=1200,
        output_tokens=40,
    )
    api, provider = VENDORS["anthropic"].start(
        opening,
        say(answer_one(library), usage=(2600, 85)),
        say(answer_two(library), usage=(4000, 50)),
    )
    chat = library.chat(provider)
    conversation_id = library.new_conversation()
    events: list[ChatEvent] = []

    result = chat.execute(conversation_id, QUESTION, on_event=events.append)
    chat.execute(conversation_id, FOLLOW_UP)

    streamed = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert streamed == preamble + result.answer
    assert result.answer == answer_one(library)
    calling = stored(library, conversation_id).messages[1]
    assert (calling.content, calling.tool_invocations[0].tool_use_id) == (preamble, "toolu_01Pre")
    replayed = api.conversation(1)[1]  # the turn's second call
    assert [b["type"] for b in replayed["content"]] == ["text", "tool_use"]
    assert replayed["content"][0]["text"] == preamble
    assert preamble not in str(api.conversation(2)), "a later turn gets the answer alone"
