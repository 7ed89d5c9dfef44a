"""A ``ChatProvider`` wrapper that observes every model call: one log line (logger ``folio.llm``:
provider, model, operation, outcome, duration, tokens; never the messages) and one
``ModelCallReport`` to the ``Telemetry``. The composition root wraps each chat provider in it.

A streamed call lasts from the request to its last event; a stream its consumer abandons (the
reader went away) is reported as ``cancelled`` when it is closed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence

from folio.domain.errors import LLMError
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    StreamEvent,
    StreamEventKind,
    TokenUsage,
    ToolDefinition,
)
from folio.domain.ports import ChatProvider, ProviderWrapper
from folio.domain.telemetry import OK, ModelCallReport, Telemetry, outcome_of

log = logging.getLogger("folio.llm")
CANCELLED = "cancelled"


class ObservedChatProvider(ProviderWrapper):
    """``inner``, with each call logged and reported to ``telemetry``."""

    def __init__(self, inner: ChatProvider, telemetry: Telemetry) -> None:
        super().__init__(inner)
        self._telemetry = telemetry

    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self._call("chat", lambda: self.inner.chat(messages))

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        return self._call("chat_with_tools", lambda: self.inner.chat_with_tools(messages, tools))

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return self._stream("stream_chat", lambda: self.inner.stream_chat(messages))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        return self._stream(
            "stream_chat_with_tools", lambda: self.inner.stream_chat_with_tools(messages, tools)
        )

    def _call(self, operation: str, call: Callable[[], ChatResponse]) -> ChatResponse:
        started = time.perf_counter()
        try:
            response = call()
        except BaseException as e:
            self._report(operation, _outcome(e), started, None)
            raise
        self._report(operation, OK, started, response)
        return response

    def _stream(
        self, operation: str, call: Callable[[], Iterator[StreamEvent]]
    ) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        try:
            events = call()
        except BaseException as e:
            self._report(operation, _outcome(e), started, None)
            raise
        return self._observed(operation, events, started)

    def _observed(
        self, operation: str, events: Iterator[StreamEvent], started: float
    ) -> Iterator[StreamEvent]:
        outcome, response = CANCELLED, None
        try:
            for event in events:
                if event.kind is StreamEventKind.DONE:
                    outcome, response = OK, event.response
                yield event
        except GeneratorExit:
            raise
        except BaseException as e:
            outcome = _outcome(e)
            raise
        finally:
            self._report(operation, outcome, started, response)

    def _report(
        self, operation: str, outcome: str, started: float, response: ChatResponse | None
    ) -> None:
        duration_s = time.perf_counter() - started
        usage = response.usage if response is not None else TokenUsage()
        model = (response.model if response is not None else None) or self.inner.model_name
        provider = self.inner.provider_name
        self._telemetry.model_called(ModelCallReport(provider, model, outcome, duration_s, usage))
        duration_ms = round(duration_s * 1000, 2)
        log.log(
            logging.INFO,  # a failure is raised on to the caller, who reports it
            "model call provider=%s model=%s operation=%s outcome=%s duration_ms=%.1f",
            provider,
            model,
            operation,
            outcome,
            duration_ms,
            extra={
                "event": "model_call",
                "provider": provider,
                "model": model,
                "operation": operation,
                "outcome": outcome,
                "duration_ms": duration_ms,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
        )


def _outcome(error: BaseException) -> str:
    if isinstance(error, LLMError):
        return outcome_of(error.code)
    return "error" if isinstance(error, Exception) else CANCELLED
