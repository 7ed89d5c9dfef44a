"""ChatWithBook: one turn of a conversation about a book.

Load the conversation and its history (always from storage), choose the context window, build the
system prompt, check the guardrail, run the retrieval strategy (tool use, or always-retrieve for
providers without tools), then store the whole turn in ONE unit of work: the user message, every
assistant tool-call message, every tool result, the answer, and the ``Turn`` metadata.

Invariant: a turn is stored whole or not at all. Any failure (provider, tool bookkeeping, storage)
leaves storage as it was and the error propagates; the turn number is computed inside the unit of
work that stores it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from folio.agent.citations import select_citations, sources_of
from folio.agent.context import estimate_tokens
from folio.agent.guardrail import Guardrail, GuardrailVerdict
from folio.agent.prompt_builder import conversation_system_prompt
from folio.agent.strategies import exchanges
from folio.agent.tools import ToolContext, ToolRegistry, ToolServices
from folio.agent.tools.highlights import marked_sources
from folio.app.library import reading_window
from folio.app.search import WindowSearcher
from folio.app.turn_log import GUARDRAIL, TurnObserver
from folio.app.writes import WRITE_ATTEMPTS, write
from folio.domain.books import Book, SearchHit
from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import (
    PromptMessage,
    TokenUsage,
    ToolInvocation,
    ToolResultMessage,
)
from folio.domain.passages import SEARCH_BOOK, FoundBy, Passage, SearchResults
from folio.domain.ports import (
    BookSearcher,
    ChatProvider,
    ConversationContextStrategy,
    ConversationUnitOfWork,
    RetrievalOutcome,
    RetrievalStrategy,
    UnitOfWorkFactory,
)
from folio.domain.telemetry import NoTelemetry, Telemetry, TurnScope
from folio.domain.window import ReadingWindow

_UNRECORDED = datetime.fromtimestamp(0, UTC)  # a turn's time is set when it is recorded


# --- events and results ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    name: str
    success: bool
    summary: str


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    text: str


ChatEvent = ToolCallStarted | ToolCallFinished | AnswerDelta
EventSink = Callable[[ChatEvent], None]


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    name: str
    arguments: Mapping[str, Any]
    success: bool
    summary: str
    error_code: str | None = None


@dataclass(frozen=True, slots=True)
class TurnResult:
    """A stored turn as its caller sees it: the ``Turn`` record, the answer, and the tool calls
    made (the rest reads through to the turn)."""

    turn: Turn
    answer: str
    tool_calls: tuple[ToolCallRecord, ...] = ()
    position_set: bool = True  # False: the reader never said how far they have read
    # what each search_book call of the turn returned, by its query, in the order it gave them
    found: FoundBy = ()

    @property
    def conversation_id(self) -> str:
        return self.turn.conversation_id

    @property
    def turn_number(self) -> int:
        return self.turn.turn_number

    @property
    def citations(self) -> tuple[Source, ...]:
        return self.turn.sources

    @property
    def searches(self) -> tuple[str, ...]:
        return self.turn.queries

    @property
    def llm_calls(self) -> int:
        return self.turn.llm_calls

    @property
    def provider(self) -> str:
        return self.turn.provider

    @property
    def model(self) -> str:
        return self.turn.model

    @property
    def input_tokens(self) -> int:
        return self.turn.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.turn.output_tokens

    @property
    def cache_read_tokens(self) -> int:
        return self.turn.cache_read_tokens

    @property
    def cache_write_tokens(self) -> int:
        return self.turn.cache_write_tokens

    @property
    def latency_ms(self) -> float:
        return self.turn.latency_ms

    @property
    def guardrail_score(self) -> float | None:
        return self.turn.guardrail_score

    @property
    def strategy(self) -> str:
        return self.turn.strategy

    @property
    def reasoning_steps(self) -> tuple[str, ...]:
        return self.turn.reasoning_steps

    @property
    def blocked(self) -> bool:
        """The guardrail answered instead of the model."""
        return self.turn.strategy == GUARDRAIL


# --- tool runner -------------------------------------------------------------------------------
@dataclass
class _ToolRunner:
    """The ``run_tool`` of one turn: runs calls through the registry with a fresh read-only
    context each time, reports them to ``on_event`` and remembers them for the turn's record."""

    registry: ToolRegistry
    context: ToolContext
    services: ToolServices
    on_event: EventSink | None = None
    records: list[ToolCallRecord] = field(default_factory=list)
    returned: list[object] = field(default_factory=list)  # the data of successful calls
    found: list[tuple[str, tuple[Passage, ...]]] = field(default_factory=list)  # by search

    def __call__(self, invocation: ToolInvocation) -> ToolResultMessage:
        self._emit(ToolCallStarted(invocation.tool_name, dict(invocation.arguments)))
        result = self.registry.run(invocation, self.context, self.services)
        self.records.append(
            ToolCallRecord(
                invocation.tool_name,
                dict(invocation.arguments),
                result.success,
                result.summary,
                result.error_code,
            )
        )
        if result.success:
            self.returned.append(result.data)
            if isinstance(result.data, SearchResults):
                self.found.append((result.data.query, result.data.passages))
        self._emit(ToolCallFinished(invocation.tool_name, result.success, result.summary))
        outcome = result.outcome()
        return PromptMessage.tool_result(
            invocation.tool_use_id,
            outcome.to_json(),
            is_error=not result.success,
            tool_name=invocation.tool_name,
            outcome=outcome,
        )

    def _emit(self, event: ChatEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


STORE_ATTEMPTS = WRITE_ATTEMPTS
RETRYABLE = frozenset({ConversationErrorCode.CONFLICT})  # besides BUSY, which every write retries


# --- searches of one turn ----------------------------------------------------------------------
class TurnSearches:
    """The ``BookSearcher`` of one turn: a search asked again in the same turn (the guardrail's
    check of the question, then the agent's search for it) runs once. Every search fetches at
    least ``min_k`` passages, so a later, larger ``k`` of the same query is served too (a search's
    first k results do not depend on k). Lives for one turn only: nothing goes stale."""

    def __init__(self, inner: BookSearcher, *, min_k: int = 5) -> None:
        self._inner = inner
        self._min_k = min_k
        self._done: dict[
            tuple[str, int | None, tuple[str, ...], str], tuple[list[SearchHit], int]
        ] = {}
        self.searches = 0  # searches that reached the index

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]:
        volumes = tuple(b.id for b in window.earlier) if window is not None else ()
        whole = window is not None and window.whole  # the guardrail's whole-book window
        limit = None if whole else book.position.char_offset
        key = (book.id, limit, volumes, " ".join(query.split()))
        hits, fetched = self._done.get(key, ([], 0))
        if fetched < k:
            fetched = max(k, self._min_k)
            hits = (
                self._inner.search(book, query, k=fetched, window=window)
                if volumes or whole
                else self._inner.search(book, query, k=fetched)
            )
            self._done[key] = (hits, fetched)
            self.searches += 1
        return hits[:k]


# --- the use case ------------------------------------------------------------------------------
def _utcnow() -> datetime:
    return datetime.now(UTC)


class ChatWithBook:
    """Answers one message in a conversation and stores the turn."""

    def __init__(
        self,
        *,
        uow: UnitOfWorkFactory,
        services: ToolServices,
        provider: ChatProvider,
        tools: ToolRegistry,
        context: ConversationContextStrategy,
        retrieval: RetrievalStrategy,
        guardrail: Guardrail | None = None,
        clock: Callable[[], datetime] = _utcnow,
        sleep: Callable[[float], None] = time.sleep,
        user: str | None = None,
        max_message_chars: int = 8000,
        telemetry: Telemetry | None = None,
        log_message_text: bool = False,
    ) -> None:
        """``retrieval`` runs the turn (it decides itself what to do when the provider has no
        tool use); the composition root chooses it. Each turn is logged and reported to
        ``telemetry`` (see ``turn_log``; the texts only with ``log_message_text``)."""
        self._uow = uow
        self._services = services
        self._books = services.books
        self._provider = provider
        self._tools = tools
        self._context = context
        self._retrieval = retrieval
        self._guardrail = guardrail
        self._clock = clock
        self._sleep = sleep  # between attempts to store a turn (tests pass one that records)
        self._user = user
        self._max_message_chars = max_message_chars
        self._telemetry = telemetry or NoTelemetry()
        self._observer = TurnObserver(
            self._telemetry, provider.provider_name, provider.model_name, log_message_text
        )

    def execute(
        self, conversation_id: str, message: str, *, on_event: EventSink | None = None
    ) -> TurnResult:
        """Answer ``message`` in conversation ``conversation_id`` and store the turn.

        Raises ``ConversationError(NOT_FOUND)`` for an unknown conversation, ``BookError`` when its
        book is gone, ``LLMError`` when the provider fails; nothing is stored then."""
        started = time.perf_counter()
        text = self._checked(message)
        scope = TurnScope(conversation_id, self._user)
        with self._telemetry.turn(scope):
            try:
                result = self._answer(conversation_id, text, on_event, started)
            except BaseException as e:
                self._observer.failed(scope, e, time.perf_counter() - started)
                raise
            self._observer.answered(scope, result, time.perf_counter() - started, text)
            return result

    def _checked(self, message: str) -> str:
        text = message.replace("\x00", "").strip()  # a NUL means nothing (and no store keeps it)
        if not text:
            raise ConversationError(
                "A message cannot be empty", code=ConversationErrorCode.INVALID_INPUT
            )
        if len(text) > self._max_message_chars:
            raise ConversationError(
                f"A message has at most {self._max_message_chars} characters (got {len(text)};"
                " setting max_message_chars, FOLIO_MAX_MESSAGE_CHARS)",
                code=ConversationErrorCode.INVALID_INPUT,
            )
        return text

    def _answer(
        self, conversation_id: str, text: str, on_event: EventSink | None, started: float
    ) -> TurnResult:
        conversation, history = self._load(conversation_id)
        book = self._books.get(conversation.book_id)
        reading = reading_window(self._books, book)
        window = self._context.build_context(history, window=reading)
        messages = [
            PromptMessage.system(conversation_system_prompt(book, reading.earlier)),
            *window,
            PromptMessage.user(text),
        ]
        turn_searcher = TurnSearches(
            WindowSearcher(self._services.searcher, reading), min_k=self._services.search_k
        )
        services = replace(self._services, searcher=turn_searcher)
        verdict = self._check(book, text, window, services.searcher)
        runner = self._runner(reading, conversation, services, on_event)
        if verdict is not None and not verdict.allowed:
            outcome = self._redirect(book, verdict, on_event)
        else:
            outcome = self._run(messages, runner, on_event)
        latency_ms = (time.perf_counter() - started) * 1000
        return self._store(book, conversation_id, text, outcome, runner, verdict, latency_ms)

    # --- steps ----------------------------------------------------------------------------------
    def _load(self, conversation_id: str) -> tuple[Conversation, list[ChatMessage]]:
        with self._uow(read_only=True) as uow:
            conversation = uow.conversations.get(conversation_id)
            return conversation, uow.messages.get_by_conversation(conversation_id)

    def _check(
        self, book: Book, text: str, window: Sequence[PromptMessage], searcher: BookSearcher
    ) -> GuardrailVerdict | None:
        if self._guardrail is None:
            return None
        return self._guardrail.check(
            book, text, exchanges(window), self._provider, searcher=searcher
        )

    def _runner(
        self,
        reading: ReadingWindow,
        conversation: Conversation,
        services: ToolServices,
        on_event: EventSink | None,
    ) -> _ToolRunner:
        context = ToolContext.of(reading, conversation=conversation, user=self._user)
        return _ToolRunner(self._tools, context, services, on_event)

    def _redirect(
        self, book: Book, verdict: GuardrailVerdict, on_event: EventSink | None
    ) -> RetrievalOutcome:
        assert self._guardrail is not None
        answer = self._guardrail.redirect(book)
        if on_event is not None:
            on_event(AnswerDelta(answer))
        return RetrievalOutcome(
            answer,
            (PromptMessage.assistant(answer),),
            llm_calls=verdict.llm_calls,
            usage=verdict.usage,
            strategy=GUARDRAIL,
            stop_reason="out_of_scope",
        )

    def _run(
        self, messages: list[PromptMessage], runner: _ToolRunner, on_event: EventSink | None
    ) -> RetrievalOutcome:
        on_text = None if on_event is None else (lambda t: on_event(AnswerDelta(t)))
        # A model sees only the tools that can work now; a policy without one (offline) sees all.
        offer = self._provider.supports_tools
        tools = self._tools.definitions(*((runner.context, runner.services) if offer else ()))
        return self._retrieval.execute(self._provider, messages, tools, runner, on_text=on_text)

    def _store(
        self,
        book: Book,
        conversation_id: str,
        text: str,
        outcome: RetrievalOutcome,
        runner: _ToolRunner,
        verdict: GuardrailVerdict | None,
        latency_ms: float,
    ) -> TurnResult:
        facts = self._facts(book, conversation_id, text, outcome, runner, verdict, latency_ms)

        def record(uow: ConversationUnitOfWork) -> TurnResult:
            # The turn number is read here, in the unit of work that stores the turn: another
            # writer that took it first makes this a CONFLICT, and the whole unit runs again.
            recorded = uow.conversations.get(conversation_id).record_turn(
                last_turn_number=uow.messages.last_turn_number(conversation_id),
                question=text,
                replies=outcome.new_messages,
                facts=facts,
                now=self._clock(),
                new_id=lambda: uuid.uuid4().hex,
            )
            uow.messages.save_batch(list(recorded.messages))
            uow.turns.save(recorded.turn)
            uow.conversations.save(recorded.conversation)
            uow.commit()
            return TurnResult(
                recorded.turn,
                outcome.answer,
                tuple(runner.records),
                position_set=book.position.is_set,
                found=tuple({**dict(runner.found), **dict(outcome.evidence)}.items()),
            )

        return write(self._uow, record, also_retry=RETRYABLE, sleep=self._sleep)

    def _facts(
        self,
        book: Book,
        conversation_id: str,
        text: str,
        outcome: RetrievalOutcome,
        runner: _ToolRunner,
        verdict: GuardrailVerdict | None,
        latency_ms: float,
    ) -> Turn:
        """What the turn did and cost (its number and time are set when it is recorded)."""
        guard_usage, guard_calls = TokenUsage(), 0
        if verdict is not None and verdict.allowed:  # a blocked turn's outcome already has them
            guard_usage, guard_calls = verdict.usage, verdict.llm_calls
        usage = outcome.usage + guard_usage
        blocked = outcome.strategy == GUARDRAIL
        # An extractive answer quotes all it uses: "Nothing up to Chapter 5 mentions William"
        # cites nothing; a model's answer that neither quotes nor cites pages gets the top results.
        citations = (
            ()
            if blocked
            else select_citations(
                outcome.answer,
                sources_of(runner.returned),
                quotes_only=outcome.quotes_only,
            )
        )
        citations = marked_sources(citations, runner.context, runner.services)
        stored = (PromptMessage.user(text), *outcome.new_messages)
        return Turn(
            conversation_id=conversation_id,
            turn_number=0,
            created_at=_UNRECORDED,
            queries=outcome.queries,
            retrieval_attempts=sum(r.name == SEARCH_BOOK for r in runner.records),
            sources=citations,
            reasoning_steps=_steps(verdict, outcome),
            guardrail_score=verdict.score if verdict else None,
            provider=self._provider.provider_name,
            model=outcome.model or self._provider.model_name,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            llm_calls=outcome.llm_calls + guard_calls,
            latency_ms=round(latency_ms, 2),
            strategy=outcome.strategy,
            extra=_extra(outcome, runner, messages_tokens=estimate_tokens(stored)),
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )


# --- helpers -----------------------------------------------------------------------------------
def _steps(verdict: GuardrailVerdict | None, outcome: RetrievalOutcome) -> tuple[str, ...]:
    head = (f"guardrail: {verdict.reason}",) if verdict else ()
    return (*head, *outcome.reasoning_steps)


def _extra(
    outcome: RetrievalOutcome, runner: _ToolRunner, *, messages_tokens: int
) -> dict[str, Any]:
    return {
        "stop_reason": outcome.stop_reason,
        "stored_tokens": messages_tokens,
        "tool_calls": [
            {
                "name": r.name,
                "arguments": dict(r.arguments),
                "success": r.success,
                "summary": r.summary,
                "error_code": r.error_code,
            }
            for r in runner.records
        ],
    }
