"""What folio reports about its own work for an operator's metrics: turns, tool calls, model calls
and import stages, as typed reports to a ``Telemetry`` port.

Each layer writes its own log line where the work happens (the tool registry per call, the chat
use case per turn, the model-call wrapper per call); a ``Telemetry`` only counts and times. The
use cases and the agent see this port, never a metrics library; ``NoTelemetry`` is the default.

Invariant: a report carries no message text, only names, outcomes, durations and token counts, and
its label values come from bounded sets (a tool name the model made up is reported as
``UNKNOWN_TOOL``), so a metrics backend never grows a series per request.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from folio.domain.llm import TokenUsage

OK = "ok"  # the outcome of a call that worked
UNKNOWN_TOOL = "unknown"  # the tool label of a call to a tool the registry does not have


class TurnOutcome(StrEnum):
    ANSWERED = "answered"
    BLOCKED = "blocked"  # the scope guardrail answered instead of the model
    CANCELLED = "cancelled"  # the caller went away; nothing was stored
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class TurnScope:
    """Whose turn is running, in which conversation (for the lines logged inside it)."""

    conversation_id: str
    user: str | None = None


@dataclass(frozen=True, slots=True)
class TurnReport:
    outcome: TurnOutcome
    duration_s: float
    provider: str
    model: str


@dataclass(frozen=True, slots=True)
class ToolCallReport:
    tool: str  # a registered tool's name, or UNKNOWN_TOOL
    outcome: str  # OK, or the error code in lower case
    duration_s: float


@dataclass(frozen=True, slots=True)
class ModelCallReport:
    provider: str
    model: str
    outcome: str  # OK, "cancelled", or the LLMError code in lower case
    duration_s: float
    usage: TokenUsage = field(default_factory=TokenUsage)


class Telemetry(Protocol):
    """Counts and times folio's work (see the module docstring)."""

    def turn(self, scope: TurnScope) -> AbstractContextManager[None]:
        """Brackets one turn: it is in flight inside, and what is logged inside belongs to it."""
        ...

    def turn_finished(self, report: TurnReport) -> None: ...

    def tool_called(self, report: ToolCallReport) -> None: ...

    def model_called(self, report: ModelCallReport) -> None: ...

    def import_stage(self, stage: str) -> None:
        """An import entered ``stage`` (the ingest's stages, then ``done`` or ``failed``)."""
        ...


class NoTelemetry:
    """The ``Telemetry`` that counts nothing (the CLI, the library, tests that do not look)."""

    def turn(self, scope: TurnScope) -> AbstractContextManager[None]:
        return nullcontext()

    def turn_finished(self, report: TurnReport) -> None:
        return None

    def tool_called(self, report: ToolCallReport) -> None:
        return None

    def model_called(self, report: ModelCallReport) -> None:
        return None

    def import_stage(self, stage: str) -> None:
        return None


def outcome_of(error_code: object | None) -> str:
    """The outcome label of a call: ``OK`` without an error, else its code in lower case."""
    return OK if error_code is None else str(error_code).lower()
