"""The record a chat turn leaves for an operator: one structured log line (logger ``folio.turns``)
and one ``TurnReport`` to the ``Telemetry``.

Invariant: the line names the conversation, the user, the outcome, the duration, the provider and
model, the calls and the tokens, never what the reader asked or was answered, unless the
``log_message_text`` setting (a debugging aid) says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from folio.app.cancellation import TurnCancelled
from folio.domain.conversations import Turn
from folio.domain.telemetry import Telemetry, TurnOutcome, TurnReport, TurnScope

log = logging.getLogger("folio.turns")

GUARDRAIL = "guardrail"  # the strategy name of a turn the guardrail answered


class _Answered(Protocol):
    @property
    def turn(self) -> Turn: ...

    @property
    def answer(self) -> str: ...

    @property
    def tool_calls(self) -> tuple[object, ...]: ...


@dataclass(frozen=True, slots=True)
class TurnObserver:
    """Reports the turns of one chat use case."""

    telemetry: Telemetry
    provider: str
    model: str
    log_text: bool = False

    def answered(self, scope: TurnScope, result: _Answered, duration_s: float, text: str) -> None:
        turn = result.turn
        blocked = turn.strategy == GUARDRAIL
        outcome = TurnOutcome.BLOCKED if blocked else TurnOutcome.ANSWERED
        self.telemetry.turn_finished(TurnReport(outcome, duration_s, turn.provider, turn.model))
        fields: dict[str, Any] = {
            "turn_number": turn.turn_number,
            "provider": turn.provider,
            "model": turn.model,
            "strategy": turn.strategy,
            "llm_calls": turn.llm_calls,
            "tool_calls": len(result.tool_calls),
            "input_tokens": turn.input_tokens,
            "output_tokens": turn.output_tokens,
            "cache_read_tokens": turn.cache_read_tokens,
            "cache_write_tokens": turn.cache_write_tokens,
        }
        if self.log_text:
            fields.update(question=text, answer=result.answer)
        _log(scope, outcome, duration_s, fields)

    def failed(self, scope: TurnScope, error: BaseException, duration_s: float) -> None:
        cancelled = isinstance(error, TurnCancelled)
        outcome = TurnOutcome.CANCELLED if cancelled else TurnOutcome.FAILED
        self.telemetry.turn_finished(TurnReport(outcome, duration_s, self.provider, self.model))
        code = getattr(error, "code", None)
        fields = {
            "provider": self.provider,
            "model": self.model,
            "error_code": str(code) if code is not None else type(error).__name__,
        }
        _log(scope, outcome, duration_s, fields)


def _log(scope: TurnScope, outcome: TurnOutcome, duration_s: float, fields: dict[str, Any]) -> None:
    """At INFO whatever the outcome: a failure goes on to the caller, who tells the person (an
    operator filters on ``outcome``); a warning here would say it twice in a terminal."""
    duration_ms = round(duration_s * 1000, 2)
    log.info(
        "turn conversation=%s outcome=%s duration_ms=%.1f",
        scope.conversation_id,
        outcome.value,
        duration_ms,
        extra={
            "event": "turn",
            "conversation_id": scope.conversation_id,
            "user": scope.user,
            "outcome": outcome.value,
            "duration_ms": duration_ms,
            **fields,
        },
    )
