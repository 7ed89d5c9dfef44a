"""Retrieval strategies: how one turn decides what to look up in the book and produces its answer.

- ``ToolUseRetrievalStrategy``: the model decides. It gets the book tools, its calls run through the
  registry (``run_tool``), results go back to it, until it answers in text. One model call when no
  search is needed, two when one search is. At most ``max_tool_rounds`` rounds of tool calls, and it
  stops early when the model repeats a call it already made in the turn; then one last call without
  tools makes it answer from what it has.
- ``AlwaysRetrieveStrategy``: for providers without tool use. In a conversation the model first
  rewrites the message as a self-contained query (one call; the question alone opens a
  conversation); it searches through the same ``search_book`` tool and answers with ``chat``,
  passages in the prompt.

Neither runs a hand-written rule on the reader's words: the model does the language.

Invariant: every tool call a strategy stores is followed by its tool_result, and the final answer is
always the last message of ``RetrievalOutcome.new_messages``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from folio.agent.prompt_builder import PromptBuilder
from folio.agent.reformulation import LLMQueryRewriter
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    PromptRole,
    StreamEvent,
    StreamEventKind,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
    ToolResultMessage,
)
from folio.domain.passages import SEARCH_BOOK, ToolOutcome, decode_tool_result
from folio.domain.ports import (
    ChatProvider,
    Exchange,
    ProviderWrapper,
    QueryRewriter,
    RetrievalOutcome,
    RetrievalStrategy,
    TextSink,
    ToolRunner,
)

REPEATED_CALL = "REPEATED_CALL"
NO_ANSWER = "I couldn't find a clear answer to that in the part of the book you have read."


class MeteredProvider(ProviderWrapper):
    """A ``ChatProvider`` wrapper counting calls and tokens, so a strategy (and the query rewriter
    it lends the provider to) reports what the turn cost."""

    def __init__(self, inner: ChatProvider) -> None:
        super().__init__(inner)
        self.calls = 0
        self.usage = TokenUsage()
        self.model: str | None = None

    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self.respond(messages, None)

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        return self.respond(messages, tools)

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        self.calls += 1
        return self._metered(self.inner.stream_chat(messages))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        self.calls += 1
        return self._metered(self.inner.stream_chat_with_tools(messages, tools))

    def respond(
        self,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition] | None,
        on_text: TextSink | None = None,
    ) -> ChatResponse:
        """One model call (with tools when ``tools`` is not None), streamed to ``on_text`` if
        given."""
        if on_text is None:
            self.calls += 1
            response = (
                self.inner.chat(messages)
                if tools is None
                else self.inner.chat_with_tools(messages, tools)
            )
            self._count(response)
            return response
        events = (
            self.stream_chat(messages)
            if tools is None
            else self.stream_chat_with_tools(messages, tools)
        )
        return _collect(events, on_text)

    def _metered(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        for event in events:
            if event.kind is StreamEventKind.DONE and event.response is not None:
                self._count(event.response)
            yield event

    def _count(self, response: ChatResponse) -> None:
        self.usage = self.usage + response.usage
        self.model = response.model or self.model


def _collect(events: Iterator[StreamEvent], on_text: TextSink) -> ChatResponse:
    for event in events:
        if event.kind is StreamEventKind.TEXT_DELTA and event.text:
            on_text(event.text)
        elif event.kind is StreamEventKind.DONE and event.response is not None:
            return event.response
    raise LLMError(
        "The model's stream ended without a final response", code=LLMErrorCode.BAD_RESPONSE
    )


def plain_transcript(messages: Sequence[PromptMessage]) -> list[PromptMessage]:
    """The conversation as plain text turns, for a call without tools: tool calls become a line of
    the assistant's text, tool results become user-side text, consecutive same-role messages
    merge. (Vendor APIs reject tool blocks in a request that offers no tools.)"""
    out: list[PromptMessage] = []
    for m in messages:
        if m.role is PromptRole.TOOL_RESULT:
            m = PromptMessage.user(f"[Tool result]\n{m.content}")
        elif m.tool_invocations:
            calls = "; ".join(_describe_call(i) for i in m.tool_invocations)
            m = PromptMessage.assistant(f"{m.content}\n[{calls}]".strip())
        if not m.content.strip():
            continue
        if out and out[-1].role is m.role and m.role is not PromptRole.SYSTEM:
            m = PromptMessage.of(m.role, f"{out.pop().content}\n\n{m.content}")
        out.append(m)
    return out


def _describe_call(invocation: ToolInvocation) -> str:
    arguments = json.dumps(dict(invocation.arguments), ensure_ascii=False, default=str)
    return f"called {invocation.tool_name} {arguments}"


def _call_key(invocation: ToolInvocation) -> str:
    arguments = json.dumps(dict(invocation.arguments), sort_keys=True, default=str)
    return f"{invocation.tool_name}:{arguments}:{invocation.parse_error}"


def _search_query(invocation: ToolInvocation) -> str | None:
    query = invocation.arguments.get("query")
    if invocation.tool_name == SEARCH_BOOK and isinstance(query, str):
        return query
    return None


def _repeated_result(invocation: ToolInvocation) -> PromptMessage:
    body = {
        "success": False,
        "error": "This exact call was already made in this turn; its result is above. "
        "Answer from the results you have.",
        "error_code": REPEATED_CALL,
    }
    return PromptMessage.tool_result(invocation.tool_use_id, json.dumps(body), is_error=True)


class ToolUseRetrievalStrategy:
    """Implements ``RetrievalStrategy`` with the provider's native tool use.

    With a ``fallback`` strategy, this strategy decides when tool use is not possible: a provider
    that says it has none (``supports_tools``), or that refuses tools on its first call of a turn
    (``LLMError(UNSUPPORTED_FEATURE)``), gets the fallback's turn instead, and every later turn of
    this strategy goes straight to the fallback. Adapters only report; they never change their
    own capabilities as a side effect."""

    name = "tool_use"

    def __init__(
        self, *, max_tool_rounds: int = 3, fallback: RetrievalStrategy | None = None
    ) -> None:
        self.max_tool_rounds = max_tool_rounds
        self.fallback = fallback
        self._provider_refused_tools = False

    def execute(
        self,
        chat_provider: ChatProvider,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition],
        run_tool: ToolRunner,
        *,
        on_text: TextSink | None = None,
    ) -> RetrievalOutcome:
        fallback = self.fallback
        if fallback is not None and (
            self._provider_refused_tools or not chat_provider.supports_tools
        ):
            return fallback.execute(chat_provider, messages, tools, run_tool, on_text=on_text)
        ran: list[ToolInvocation] = []

        def counted(invocation: ToolInvocation) -> PromptMessage:
            ran.append(invocation)
            return run_tool(invocation)

        try:
            return self._with_tools(chat_provider, messages, tools, counted, on_text)
        except LLMError as e:
            if e.code is not LLMErrorCode.UNSUPPORTED_FEATURE or fallback is None or ran:
                raise
        self._provider_refused_tools = True
        outcome = fallback.execute(chat_provider, messages, tools, run_tool, on_text=on_text)
        steps = ("provider has no tool use: fell back to always-retrieve", *outcome.reasoning_steps)
        return replace(outcome, reasoning_steps=steps)

    def _with_tools(
        self,
        chat_provider: ChatProvider,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition],
        run_tool: ToolRunner,
        on_text: TextSink | None,
    ) -> RetrievalOutcome:
        provider = MeteredProvider(chat_provider)
        convo, new = list(messages), []
        queries: list[str] = []
        steps: list[str] = []
        seen: set[str] = set()
        rounds, stop = 0, "answered"
        while True:
            response = provider.respond(convo, tools, on_text)
            if not response.tool_invocations:
                answer = (response.text or "").strip()
                break
            rounds += 1
            round_messages, repeated = self._run_round(response, run_tool, seen, queries)
            convo += round_messages
            new += round_messages
            steps.append(
                f"round {rounds}: "
                + ", ".join(_describe_call(i) for i in response.tool_invocations)
            )
            if repeated or rounds >= self.max_tool_rounds:
                stop = "repeated_call" if repeated else "max_tool_rounds"
                steps.append(f"stopped: {stop}; answering without tools")
                answer = self._final_answer(provider, convo, on_text)
                break
        if not answer:
            answer = NO_ANSWER
            if on_text is not None:
                on_text(answer)
        new.append(PromptMessage.assistant(answer))
        return RetrievalOutcome(
            answer,
            tuple(new),
            llm_calls=provider.calls,
            usage=provider.usage,
            model=provider.model,
            queries=tuple(queries),
            reasoning_steps=tuple(steps),
            strategy=self.name,
            stop_reason=stop,
        )

    @staticmethod
    def _run_round(
        response: ChatResponse, run_tool: ToolRunner, seen: set[str], queries: list[str]
    ) -> tuple[list[PromptMessage], bool]:
        """The assistant's tool-call message and one tool_result per call. A call identical to
        an earlier one in the turn is not run again (its result says so) and ends the loop."""
        out: list[PromptMessage] = [
            PromptMessage.assistant(response.text or "", response.tool_invocations)
        ]
        repeated = False
        for invocation in response.tool_invocations:
            key = _call_key(invocation)
            if key in seen:
                repeated = True
                out.append(_repeated_result(invocation))
                continue
            seen.add(key)
            query = _search_query(invocation)
            if query is not None:
                queries.append(query)
            out.append(run_tool(invocation))
        return out, repeated

    @staticmethod
    def _final_answer(
        provider: MeteredProvider, convo: list[PromptMessage], on_text: TextSink | None
    ) -> str:
        note = PromptMessage.user(
            "No more searches are possible for this question. Answer the reader now from the "
            "passages above and the conversation; if they do not hold the answer, say so briefly."
        )
        response = provider.respond(plain_transcript([*convo, note]), None, on_text)
        return (response.text or "").strip()


def exchanges(messages: Sequence[PromptMessage]) -> list[Exchange]:
    """(question, answer) pairs of a prompt's history, oldest first (tool traffic skipped)."""
    out: list[Exchange] = []
    for m in messages:
        if m.role is PromptRole.USER:
            out.append((m.content, None))
        elif m.role is PromptRole.ASSISTANT and m.content.strip() and out:
            out[-1] = (out[-1][0], m.content)
    return out


class AlwaysRetrieveStrategy:
    """Implements ``RetrievalStrategy`` for providers without tool use.

    ``rewriter_factory`` receives the (metered) provider of the turn, so an LLM rewriter's call is
    counted (default: ``LLMQueryRewriter``). It is asked only when there is a conversation to
    lean on."""

    name = "always_retrieve"

    def __init__(
        self,
        *,
        rewriter_factory: Callable[[ChatProvider], QueryRewriter] = LLMQueryRewriter,
        k: int = 5,
    ) -> None:
        self._rewriter_factory = rewriter_factory
        self.k = k

    def execute(
        self,
        chat_provider: ChatProvider,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition],
        run_tool: ToolRunner,
        *,
        on_text: TextSink | None = None,
    ) -> RetrievalOutcome:
        provider = MeteredProvider(chat_provider)
        *head, last = messages
        question = last.content
        query, steps = self._query(provider, question, exchanges(head))
        invocation = ToolInvocation(
            SEARCH_BOOK, f"auto_{uuid.uuid4().hex[:12]}", {"query": query, "k": self.k}
        )
        result = run_tool(invocation)
        prompt = (
            PromptBuilder()
            .with_passages(_typed(result).passages)
            .with_question(question)
            .with_note(
                "Answer from these passages and the conversation only. Cite them as "
                "(Chapter X, p. N). If they do not hold the answer, say so."
            )
        )
        response = provider.respond(
            plain_transcript([*head, PromptMessage.user(prompt.build())]), None, on_text
        )
        calls = (PromptMessage.assistant("", (invocation,)), result)
        return self._outcome(
            provider, response, calls, (query,), (*steps, f"searched {query!r}"), "answered"
        )

    def _query(
        self, provider: ChatProvider, question: str, history: list[Exchange]
    ) -> tuple[str, tuple[str, ...]]:
        if not history:
            return question, ("first message: searched the question as asked",)
        query = self._rewriter_factory(provider).rewrite(question, history).strip() or question
        return query, (f"rewrote {question!r} as {query!r}",)

    def _outcome(
        self,
        provider: MeteredProvider,
        response: ChatResponse,
        calls: tuple[PromptMessage, ...],
        queries: tuple[str, ...],
        steps: tuple[str, ...],
        stop: str,
    ) -> RetrievalOutcome:
        answer = (response.text or "").strip() or NO_ANSWER
        return RetrievalOutcome(
            answer,
            (*calls, PromptMessage.assistant(answer)),
            llm_calls=provider.calls,
            usage=provider.usage,
            model=provider.model,
            queries=queries,
            reasoning_steps=steps,
            strategy=self.name,
            stop_reason=stop,
        )


def _typed(result: PromptMessage) -> ToolOutcome:
    """A tool result message's outcome, typed (decoded by the one codec when it has been through
    storage or came from elsewhere)."""
    return (
        result.typed()
        if isinstance(result, ToolResultMessage)
        else decode_tool_result(result.content)
    )
