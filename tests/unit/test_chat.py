"""ChatWithBook with the scripted provider: what each turn costs, what it sends, what it stores, and
that a failed turn stores nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from folio.adapters.llm.offline import OfflineChatProvider
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.adapters.storage.memory.conversations import (
    InMemoryConversationStore,
    InMemoryUnitOfWork,
)
from folio.agent.context import RecentTurnsStrategy
from folio.agent.guardrail import Guardrail
from folio.agent.strategies import NO_ANSWER
from folio.agent.tools import BaseTool, ToolRegistry, ToolResult, book_tools
from folio.app.chat import (
    STORE_ATTEMPTS,
    AnswerDelta,
    ChatWithBook,
    ToolCallFinished,
    ToolCallStarted,
)
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import ReadingPosition
from folio.domain.conversations import Conversation, Turn
from folio.domain.errors import (
    ConversationError,
    ConversationErrorCode,
    LLMError,
    LLMErrorCode,
)
from folio.domain.llm import ChatResponse, PromptRole, TokenUsage, ToolInvocation
from tests.unit.test_book_tools import SECRET_WORDS, StoryLibrary, make_story
from tests.unit.test_guardrail import WithoutSimilarity

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
ANSWER_1 = (
    'Victor studied chemistry under "Professor Waldman, who praised the modern masters of '
    'science" (Chapter 2, p. 3).'
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class World:
    def __init__(self, *, conversation_title: str | None = None) -> None:
        """``conversation_title``: a title the reader gave (None: titled by the first question)."""
        self.story: StoryLibrary = make_story()
        self.store = InMemoryConversationStore()
        self.clock = Clock()
        with self.store.unit_of_work() as uow:
            uow.conversations.save(
                Conversation(
                    "c1",
                    self.story.book.id,
                    conversation_title or "New conversation",
                    T0,
                    T0,
                    auto_title=conversation_title is None,
                )
            )
            uow.commit()

    def chat(
        self,
        provider: ScriptedChatProvider,
        *,
        uow: Any = None,
        tools: ToolRegistry | None = None,
        guardrail: Guardrail | None = None,
        sleep: Any = None,
    ) -> ChatWithBook:
        container = Container(
            load_settings(env={}, guardrail="none"),
            provider=provider,
            uow=uow or self.store.unit_of_work,
            library=self.story.library,
            searcher=self.story.searcher,
            tools=tools,
            guardrail=guardrail,
            clock=self.clock,
            sleep=sleep,
        )
        return container.chat()

    def messages(self):
        with self.store.unit_of_work() as uow:
            return uow.messages.get_by_conversation("c1")

    def turns(self):
        with self.store.unit_of_work() as uow:
            return uow.turns.get_by_conversation("c1")

    def conversation(self) -> Conversation:
        with self.store.unit_of_work() as uow:
            return uow.conversations.get("c1")


@pytest.fixture
def world() -> World:
    return World()


def _first_turn(world: World):
    search = tool_call("search_book", {"query": "Victor Frankenstein studies Ingolstadt"})
    provider = ScriptedChatProvider([search, ANSWER_1])
    result = world.chat(provider).execute("c1", "Who did Victor study with?")
    return provider, search, result


def _tool_results(messages) -> list[Mapping[str, Any]]:
    return [json.loads(m.content) for m in messages if m.role is PromptRole.TOOL_RESULT]


# --- a turn and what it stores -------------------------------------------------------------------
def test_a_turn_that_searches_answers_and_stores_the_whole_turn(world):
    _, search, result = _first_turn(world)

    assert result.answer == ANSWER_1
    assert (result.turn_number, result.llm_calls, result.strategy) == (1, 2, "tool_use")
    assert result.searches == ("Victor Frankenstein studies Ingolstadt",)
    assert [(c.name, c.success) for c in result.tool_calls] == [("search_book", True)]
    assert (result.provider, result.model) == ("scripted", "scripted-1")
    assert result.input_tokens > 0 and result.output_tokens > 0 and result.latency_ms > 0
    assert result.citations[0].chunk_id == "story-3"
    assert result.citations[0].quote.startswith("Professor Waldman, who praised")
    assert (result.citations[0].chapter, result.citations[0].page_start) == ("Chapter 2", "3")

    stored = world.messages()
    assert [m.role for m in stored] == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]
    assert [m.seq for m in stored] == [0, 1, 2, 3] and {m.turn_number for m in stored} == {1}
    assert stored[1].tool_invocations == (search,)
    assert (stored[2].tool_use_id, stored[2].tool_name) == (search.tool_use_id, "search_book")
    assert stored[3].content == ANSWER_1


def test_the_turn_metadata_is_stored(world):
    _, _, result = _first_turn(world)

    (turn,) = world.turns()
    assert turn.turn_number == 1
    assert turn.queries == result.searches
    assert turn.retrieval_attempts == 1
    assert turn.sources == result.citations
    assert (turn.provider, turn.model, turn.strategy, turn.llm_calls) == (
        "scripted",
        "scripted-1",
        "tool_use",
        2,
    )
    assert turn.input_tokens == result.input_tokens and turn.latency_ms == result.latency_ms
    assert any("search_book" in step for step in turn.reasoning_steps)
    assert turn.extra["tool_calls"][0]["name"] == "search_book"


def test_the_first_message_titles_the_conversation_and_bumps_its_activity(world):
    _first_turn(world)

    conversation = world.conversation()
    assert conversation.title == "Who did Victor study with?"
    assert conversation.updated_at > T0


def test_a_title_the_reader_chose_is_kept():
    world = World(conversation_title="My notes on Victor")
    _first_turn(world)

    assert world.conversation().title == "My notes on Victor"


@pytest.mark.parametrize("title", ["Untitled", "New conversation", "untitled"])
def test_a_title_the_reader_chose_is_kept_whatever_it_says(title: str) -> None:
    world = World(conversation_title=title)
    _first_turn(world)
    world.chat(ScriptedChatProvider(["Yes."])).execute("c1", "thanks")

    assert world.conversation().title == title


def test_a_follow_up_is_sent_the_previous_turn_as_its_question_and_answer(world):
    _first_turn(world)
    provider = ScriptedChatProvider(["He worked day and night collecting bones (Chapter 2, p. 4)."])

    # A new use case instance: history comes from storage, not from memory of the last call.
    result = world.chat(provider).execute("c1", "what happened to him?")

    sent = provider.calls[0].messages
    assert [(m.role, m.content) for m in sent[1:]] == [
        (PromptRole.USER, "Who did Victor study with?"),
        (PromptRole.ASSISTANT, ANSWER_1),
        (PromptRole.USER, "what happened to him?"),
    ], "the stored tool call and its passages stay in storage; the answer cites its page"
    assert sent[0].role is PromptRole.SYSTEM
    turn_one = [m.role for m in world.messages() if m.turn_number == 1]
    assert PromptRole.TOOL_RESULT in turn_one, "the first turn is stored whole"
    assert result.turn_number == 2
    assert [t.turn_number for t in world.turns()] == [1, 2]


def test_thanks_costs_one_call_and_no_search(world):
    _first_turn(world)
    provider = ScriptedChatProvider(["You're welcome! Enjoy the book."])

    result = world.chat(provider).execute("c1", "thanks!")

    assert result.llm_calls == 1 and len(provider.calls) == 1
    assert result.searches == () and result.tool_calls == () and result.citations == ()
    assert world.turns()[-1].retrieval_attempts == 0


def test_the_system_prompt_names_the_book_and_the_reading_position(world):
    provider, _, _ = _first_turn(world)

    system = provider.calls[0].messages[0].content
    assert "The Modern Prometheus" in system and "Mary Shelley" in system
    assert "through p. 4 of 6" in system


# --- the loop's limits and tool errors -----------------------------------------------------------
def test_a_provider_looping_on_the_same_call_is_stopped_with_a_clear_reply(world):
    def looping(messages, tools):
        return tool_call("search_book", {"query": "Victor"}) if tools is not None else ""

    provider = ScriptedChatProvider([looping] * 10)

    result = world.chat(provider).execute("c1", "Who is Victor?")

    assert result.answer == NO_ANSWER
    assert result.llm_calls == 3 and len(result.tool_calls) == 1
    stored = world.messages()
    calls = {i.tool_use_id for m in stored for i in m.tool_invocations}
    assert calls == {m.tool_use_id for m in stored if m.role is PromptRole.TOOL_RESULT}
    assert world.turns()[0].extra["stop_reason"] == "repeated_call"


class Boom(BaseTool):
    name = "boom"
    description = "Fails."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def execute(self, ctx, services, **kwargs: Any) -> ToolResult:
        raise RuntimeError("kaboom")


def test_tool_failures_go_back_to_the_model_and_the_turn_completes(world):
    bad_json = ToolInvocation("search_book", "call_bad", {}, parse_error="Unterminated string")
    calls = [
        tool_call("boom"),
        tool_call("teleport", {"to": "Geneva"}),
        tool_call("search_book", {"k": "many"}),
        bad_json,
    ]
    provider = ScriptedChatProvider([calls, "Sorry, I could not search the book just now."])
    registry = ToolRegistry([*book_tools(), Boom()])

    result = world.chat(provider, tools=registry).execute("c1", "Who is Victor?")

    results = _tool_results(provider.calls[1].messages)
    assert [r["error_code"] for r in results] == [
        "EXCEPTION",
        "UNKNOWN_TOOL",
        "INVALID_ARGUMENTS",
        "INVALID_ARGUMENTS",
    ]
    assert all(m.is_error for m in provider.calls[1].messages if m.role is PromptRole.TOOL_RESULT)
    assert result.answer == "Sorry, I could not search the book just now."
    assert [c.success for c in result.tool_calls] == [False] * 4
    assert len(world.messages()) == 7  # user, call message, four results, answer


def test_search_results_never_pass_the_reading_position(world):
    calls = [
        tool_call(
            "search_book", {"query": "creature yellow eye laboratory Justine William", "k": 10}
        ),
        tool_call("read_passage", {"page_start": "5"}),
        tool_call("list_chapters"),
    ]
    provider = ScriptedChatProvider([calls, "That part lies beyond where you have read."])

    world.chat(provider).execute("c1", "What did the creature look like?")

    search, read, chapters = _tool_results(provider.calls[1].messages)
    shown = json.dumps([search["data"]["results"], read, chapters])  # all but the echoed query
    for word in SECRET_WORDS:
        assert word not in shown
    assert search["success"] and search["data"]["results"]
    assert read["error_code"] == "NOT_ALLOWED"
    assert [c["title"] for c in chapters["data"]["chapters"]] == ["Chapter 1", "Chapter 2"]


# --- fallback for providers without tools --------------------------------------------------------
def test_unsupported_tool_use_falls_back_to_always_retrieve(world):
    unsupported = LLMError("no tools here", code=LLMErrorCode.UNSUPPORTED_FEATURE)
    provider = ScriptedChatProvider(
        [unsupported, "Waldman taught him chemistry (Chapter 2, p. 3)."]
    )

    result = world.chat(provider).execute("c1", "Who taught Victor chemistry?")

    assert result.strategy == "always_retrieve"
    assert result.searches == ("Who taught Victor chemistry?",)
    assert [c.method for c in provider.calls] == ["chat_with_tools", "chat"]
    assert "Professor Waldman" in provider.calls[1].messages[-1].content  # passages in the prompt
    assert result.citations and result.citations[0].page_start == "3"
    assert any("fell back" in s for s in world.turns()[0].reasoning_steps)
    assert [m.role for m in world.messages()] == [
        PromptRole.USER,
        PromptRole.ASSISTANT,
        PromptRole.TOOL_RESULT,
        PromptRole.ASSISTANT,
    ]


def test_after_a_refusal_of_tools_later_turns_go_straight_to_always_retrieve(world):
    unsupported = LLMError("no tools here", code=LLMErrorCode.UNSUPPORTED_FEATURE)
    provider = ScriptedChatProvider(
        [unsupported, "Waldman.", "What did Victor study at Ingolstadt?", "Chemistry."]
    )
    chat = world.chat(provider)

    chat.execute("c1", "Who taught Victor chemistry?")
    second = chat.execute("c1", "What did he study at Ingolstadt?")

    # in a conversation the model rewrites the query (one call), then answers (one call)
    assert second.strategy == "always_retrieve" and second.llm_calls == 2
    assert second.searches == ("What did Victor study at Ingolstadt?",)
    assert [c.method for c in provider.calls] == ["chat_with_tools", "chat", "chat", "chat"]
    assert provider.supports_tools  # the adapter reported; the strategy decided


def test_a_provider_known_to_lack_tools_goes_straight_to_always_retrieve(world):
    provider = ScriptedChatProvider(["Chemistry."], supports_tools=False)

    result = world.chat(provider).execute("c1", "What did Victor study?")

    assert result.strategy == "always_retrieve" and result.llm_calls == 1
    assert [c.method for c in provider.calls] == ["chat"]


# --- events and streaming ------------------------------------------------------------------------
def test_events_report_tool_calls_and_stream_the_answer(world):
    provider = ScriptedChatProvider([tool_call("search_book", {"query": "Waldman"}), ANSWER_1])
    events: list[Any] = []

    result = world.chat(provider).execute("c1", "Who is Waldman?", on_event=events.append)

    started, finished, *deltas = events
    assert started == ToolCallStarted("search_book", {"query": "Waldman"})
    assert isinstance(finished, ToolCallFinished) and finished.success
    assert finished.summary.startswith("1 passage") or "passage" in finished.summary
    assert all(isinstance(d, AnswerDelta) for d in deltas) and len(deltas) > 1
    assert "".join(d.text for d in deltas) == result.answer
    assert [c.method for c in provider.calls] == ["stream_chat_with_tools"] * 2


# --- guardrail -----------------------------------------------------------------------------------
def test_an_out_of_scope_question_gets_a_redirect_without_a_model_call(world):
    lexical_only = WithoutSimilarity(world.story)  # the turn's searcher serves the guardrail
    world.story = replace(world.story, searcher=lexical_only)
    guardrail = Guardrail("retrieval", searcher=lexical_only)
    provider = ScriptedChatProvider([])  # any call would exhaust the script

    result = world.chat(provider, guardrail=guardrail).execute(
        "c1", "How do I bake sourdough bread?"
    )

    assert result.blocked and result.llm_calls == 0 and provider.calls == []
    assert result.answer.startswith("I can only help with questions about The Modern Prometheus")
    assert result.guardrail_score == 0.0
    (turn,) = world.turns()
    assert turn.guardrail_score == 0.0 and turn.strategy == "guardrail"
    assert [m.role for m in world.messages()] == [PromptRole.USER, PromptRole.ASSISTANT]


def test_an_in_scope_question_passes_the_guardrail_and_its_score_is_stored(world):
    lexical_only = WithoutSimilarity(world.story)  # the turn's searcher serves the guardrail
    world.story = replace(world.story, searcher=lexical_only)
    guardrail = Guardrail("retrieval", searcher=lexical_only)
    provider = ScriptedChatProvider(["Victor's friend, who loved poetry (Chapter 1, p. 2)."])

    result = world.chat(provider, guardrail=guardrail).execute("c1", "Who is Henry Clerval?")

    assert not result.blocked and result.guardrail_score == 1.0
    assert world.turns()[0].guardrail_score == 1.0


class CountingSearcher:
    def __init__(self, inner) -> None:
        self.inner, self.queries = inner, []

    def search(self, book, query, *, k=5, window=None):
        self.queries.append((query, k))
        return self.inner.search(book, query, k=k, window=window)


def test_the_guardrail_and_the_agent_share_one_search_of_the_question():
    world = World()
    counting = CountingSearcher(world.story.searcher)
    world.story = replace(world.story, searcher=counting)
    question = "Who is Henry Clerval?"
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": question}), "Victor's friend (Chapter 1, p. 2)."]
    )
    guardrail = Guardrail("retrieval", searcher=counting)

    result = world.chat(provider, guardrail=guardrail).execute("c1", question)

    assert not result.blocked and result.searches == (question,)
    # one search reached the index for both
    assert counting.queries == [(question, 5)]
    assert json.loads(world.messages()[2].content)["data"]["results"]

    provider.extend([tool_call("search_book", {"query": question}), "Again (Chapter 1, p. 2)."])
    world.chat(provider, guardrail=guardrail).execute("c1", question)
    # a new turn remembers no earlier search, and its search is the model's query alone
    assert counting.queries[1:] == [(question, 5)]


# --- failures leave no trace ---------------------------------------------------------------------
class BrokenUnitOfWork(InMemoryUnitOfWork):
    def __init__(self, store: InMemoryConversationStore, fail: str) -> None:
        super().__init__(store)
        self.fail = fail

    def __enter__(self) -> BrokenUnitOfWork:
        super().__enter__()
        if self.fail == "save_batch":
            self.messages.save_batch = self._raise  # type: ignore[method-assign]
        if self.fail == "turns":
            self.turns.save = self._raise  # type: ignore[method-assign]
        return self

    def commit(self) -> None:
        if self.fail == "commit":
            self._raise()
        super().commit()

    def _raise(self, *args: Any) -> None:
        raise ConversationError("disk full", code=ConversationErrorCode.CONFLICT)


@pytest.mark.parametrize("fail", ["save_batch", "turns", "commit"])
def test_a_failure_while_storing_the_turn_leaves_no_trace(world, fail):
    provider = ScriptedChatProvider([tool_call("search_book", {"query": "Victor"}), ANSWER_1])
    pauses: list[float] = []
    chat = world.chat(
        provider, uow=lambda **_: BrokenUnitOfWork(world.store, fail), sleep=pauses.append
    )

    with pytest.raises(ConversationError, match="disk full"):
        chat.execute("c1", "Who is Victor?")

    assert len(pauses) == STORE_ATTEMPTS - 1, "a conflict is retried, with a pause before each"
    assert pauses[-1] > pauses[0] > 0, "later attempts wait longer"
    assert world.messages() == [] and world.turns() == []
    assert world.conversation().title == "New conversation"


def test_a_provider_failure_leaves_no_trace(world):
    outage = LLMError("overloaded", code=LLMErrorCode.UNAVAILABLE)
    provider = ScriptedChatProvider([tool_call("search_book", {"query": "Victor"}), outage])

    with pytest.raises(LLMError):
        world.chat(provider).execute("c1", "Who is Victor?")

    assert world.messages() == [] and world.turns() == []


def test_an_unknown_conversation_is_not_found(world):
    with pytest.raises(ConversationError) as error:
        world.chat(ScriptedChatProvider([])).execute("nope", "hello")
    assert error.value.code == ConversationErrorCode.NOT_FOUND


def test_an_empty_message_is_refused(world):
    with pytest.raises(ConversationError) as error:
        world.chat(ScriptedChatProvider([])).execute("c1", "   ")
    assert error.value.code == ConversationErrorCode.INVALID_INPUT


def test_the_turn_number_is_taken_when_the_turn_is_stored(world):
    def answer_while_another_turn_lands(messages, tools):
        # Another client stores turn 1 while this turn waits for the model.
        with world.store.unit_of_work() as uow:
            uow.turns.save(Turn("c1", 1, T0))
            uow.commit()
        return "Victor is a student."

    result = world.chat(ScriptedChatProvider([answer_while_another_turn_lands])).execute(
        "c1", "Who is Victor?"
    )

    assert result.turn_number == 2
    assert [t.turn_number for t in world.turns()] == [1, 2]


def test_without_quotes_or_pages_the_top_results_are_cited(world):
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": "Victor", "k": 5}), "He is a student."]
    )

    result = world.chat(provider).execute("c1", "Who is Victor?")

    returned = json.loads(world.messages()[2].content)["data"]["results"]
    assert [c.chunk_id for c in result.citations] == [r["chunk_id"] for r in returned[:3]]


def test_an_offline_answer_cites_what_it_quotes_and_nothing_when_nothing_answers(world):
    chat = world.chat(OfflineChatProvider())

    found = chat.execute("c1", "What did Victor study at Ingolstadt?")
    missing = chat.execute("c1", "Who is Justine Moritz?")  # on page 6; the reader is at 4

    assert found.citations and all(c.quote and c.quote in found.answer for c in found.citations)
    assert missing.answer.startswith("Nothing up to")
    assert missing.citations == ()  # the lexicon says: not met, and nothing close is quoted


def test_the_llm_guardrail_call_is_counted_once(world):
    provider = ScriptedChatProvider([ChatResponse("0.05", usage=TokenUsage(100, 2))])

    result = world.chat(provider, guardrail=Guardrail("llm")).execute(
        "c1", "Recommend a good laptop"
    )

    assert result.blocked and result.llm_calls == 1
    assert (result.input_tokens, result.output_tokens) == (100, 2)
    assert world.turns()[0].input_tokens == 100


def test_citations_follow_the_order_in_which_the_answer_quotes_the_passages():
    from folio.agent.citations import select_citations
    from folio.domain.passages import decode_passage

    passages = [
        {
            "chunk_id": "a",
            "chapter": "Chapter 7",
            "page_start": "55",
            "page_end": "55",
            "char_start": 100,
            "char_end": 200,
            "text": "Tears also gushed from the eyes of Clerval.",
        },
        {
            "chunk_id": "b",
            "chapter": "Chapter 21",
            "page_start": "164",
            "page_end": "165",
            "char_start": 900,
            "char_end": 1000,
            "text": "Clerval, my friend, had fallen a victim.",
        },
    ]
    answer = (
        '- "Clerval, my friend, had fallen a victim." (p. 164)\n'
        '- "Tears also gushed from the eyes of Clerval." (p. 55)'
    )

    cited = select_citations(answer, [decode_passage(p) for p in passages])

    assert [c.chunk_id for c in cited] == ["b", "a"]


# --- prompt caching ------------------------------------------------------------------------------
def test_each_call_reads_the_prefix_the_previous_call_sent_and_the_turn_stores_cache_tokens(world):
    search = tool_call("search_book", {"query": "Victor Frankenstein studies Ingolstadt"})
    follow = tool_call("search_book", {"query": "Professor Waldman chemistry lecture"})
    provider = ScriptedChatProvider(
        [search, ANSWER_1, follow, "Waldman praised modern chemistry (Chapter 2, p. 3)."],
        prompt_cache=True,
    )
    chat = world.chat(provider)
    first = chat.execute("c1", "Who did Victor study with?")
    second = chat.execute("c1", "What did he teach?")

    assert len(provider.calls) == 4
    assert first.cache_read_tokens > 0, "the turn's second call reads its first call's prefix"
    assert second.cache_read_tokens > first.cache_read_tokens, "the history is read, not resent"
    assert second.cache_write_tokens < second.input_tokens
    turns = world.turns()
    assert [(t.cache_read_tokens, t.cache_write_tokens) for t in turns] == [
        (first.cache_read_tokens, first.cache_write_tokens),
        (second.cache_read_tokens, second.cache_write_tokens),
    ]
    assert all(t.cache_read_tokens + t.cache_write_tokens <= t.input_tokens for t in turns)


def test_after_the_reader_moves_back_no_earlier_passage_or_answer_past_it_is_sent(world):
    everything = world.story.at(ReadingPosition())  # the whole book, for the first turn
    assert everything.position.is_unlimited
    search = tool_call("search_book", {"query": "Victor William Justine Plainpalais yellow"})
    provider = ScriptedChatProvider([search, "William died at Plainpalais (Chapter 3, p. 5)."])
    world.chat(provider).execute("c1", "What happened next?")
    assert any(w in world.messages()[2].content for w in SECRET_WORDS)

    world.story.at(world.story.book.position_at_percent(20))  # moved back, before chapter 3
    follow = ScriptedChatProvider(["I can't say yet."])
    world.chat(follow).execute("c1", "Tell me more.")

    sent = " ".join(m.content for m in follow.calls[0].messages)
    assert not any(w in sent for w in SECRET_WORDS), sent
    assert "What happened next?" in sent and "withheld" in sent


def test_a_message_over_the_bound_is_refused_naming_the_bound_and_nothing_is_stored(world):
    provider = ScriptedChatProvider([])
    chat = world.chat(provider)
    with pytest.raises(ConversationError) as caught:
        chat.execute("c1", "why " * 5000)
    assert caught.value.code == ConversationErrorCode.INVALID_INPUT
    assert "at most 8000 characters" in caught.value.message
    assert world.messages() == [] and provider.calls == []


def test_an_oversized_stored_message_reaches_the_model_cut_to_the_bound():
    from folio.domain.conversations import ChatMessage

    huge = ChatMessage.of("m", "c", 1, 0, PromptRole.USER, "Who? " * 100_000, T0)
    answer = ChatMessage.of("a", "c", 1, 1, PromptRole.ASSISTANT, "Victor.", T0)
    window = RecentTurnsStrategy(message_chars=1000).build_context([huge, answer])
    assert len(window[0].content) == 1001 and window[1].content == "Victor."
