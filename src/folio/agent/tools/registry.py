"""The tool registry: the single path by which the agent runs a tool.

Invariant: ``execute``/``run`` never raise for anything a tool or the model does wrong. Unknown
tools, arguments that fail the tool's JSON schema (or were not JSON at all), and exceptions inside a
tool all come back as a failed ``ToolResult`` with an error code, so the agent loop can hand them to
the model and carry on. Each call writes one structured log line (tool, outcome, duration, user,
conversation; never the arguments, which carry the reader's words) and reports the call to the
``Telemetry`` for the per-tool latency histogram.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from folio.agent.tools.base import BaseTool, ToolContext, ToolResult, ToolServices
from folio.agent.tools.offered import can_work
from folio.domain.errors import FolioError, ProgrammingError, ToolErrorCode
from folio.domain.llm import ToolDefinition, ToolInvocation
from folio.domain.telemetry import (
    UNKNOWN_TOOL,
    NoTelemetry,
    Telemetry,
    ToolCallReport,
    outcome_of,
)

logger = logging.getLogger("folio.agent.tools")


class ToolRegistry:
    """Holds the tools offered to the model, by name, in registration order."""

    def __init__(
        self, tools: Iterable[BaseTool] = (), *, telemetry: Telemetry | None = None
    ) -> None:
        self._tools: dict[str, BaseTool] = {}
        self._telemetry = telemetry or NoTelemetry()
        self._validators: dict[str, Draft202012Validator] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: BaseTool) -> None:
        """Add ``tool``. A name already taken or a parameters schema that is not valid JSON schema
        is a developer's mistake: ``ProgrammingError``."""
        if tool.name in self._tools:
            raise ProgrammingError(f"Duplicate tool: {tool.name}")
        try:
            Draft202012Validator.check_schema(dict(tool.parameters))
        except SchemaError as e:
            raise ProgrammingError(
                f"Tool {tool.name} has an invalid parameters schema: {e.message}"
            ) from e
        self._tools[tool.name] = tool
        self._validators[tool.name] = Draft202012Validator(dict(tool.parameters))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def get(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    def definitions(
        self, ctx: ToolContext | None = None, services: ToolServices | None = None
    ) -> list[ToolDefinition]:
        """The tools as provider-neutral definitions (each provider renders its own format), in
        registration order. Given the turn's ``ctx`` and ``services``: only the tools that can
        work for the book as it stands (``offered.can_work``), which change only when the book's
        state does, so a conversation's cached prompt prefix keeps its tools."""
        tools: Iterable[BaseTool] = self._tools.values()
        if ctx is not None and services is not None:
            tools = [t for t in tools if can_work(t, ctx, services)]
        return [tool.definition() for tool in tools]

    def run(
        self, invocation: ToolInvocation, ctx: ToolContext, services: ToolServices
    ) -> ToolResult:
        """Run a model's tool call (``INVALID_ARGUMENTS`` when the provider could not parse it)."""
        if invocation.parse_error is not None:
            result = ToolResult.fail(
                f"The arguments were not valid JSON: {invocation.parse_error}",
                ToolErrorCode.INVALID_ARGUMENTS,
            )
            self._record(invocation.tool_name, ctx, result, 0.0)
            return result
        return self.execute(invocation.tool_name, ctx, services, invocation.arguments)

    def execute(
        self,
        name: str,
        ctx: ToolContext,
        services: ToolServices,
        arguments: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """Run tool ``name`` with ``arguments``."""
        started = time.perf_counter()
        result = self._execute(name, ctx, services, dict(arguments or {}))
        self._record(name, ctx, result, time.perf_counter() - started)
        return result

    def _execute(
        self, name: str, ctx: ToolContext, services: ToolServices, arguments: dict[str, Any]
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult.fail(
                f"Unknown tool: {name}. Available tools: {known}.", ToolErrorCode.UNKNOWN_TOOL
            )
        problem = self._argument_problem(name, arguments)
        if problem is not None:
            return ToolResult.fail(problem, ToolErrorCode.INVALID_ARGUMENTS)
        try:
            return tool.execute(ctx, services, **arguments)
        except FolioError as e:
            return ToolResult.fail(e.message, str(e.code))
        except Exception:
            logger.exception("tool %s raised", name)
            return ToolResult.fail(
                f"The tool {name} failed with an internal error.", ToolErrorCode.EXCEPTION
            )

    def _argument_problem(self, name: str, arguments: dict[str, Any]) -> str | None:
        errors = sorted(self._validators[name].iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return None
        details = "; ".join(
            f"{'/'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in errors[:3]
        )
        return f"Invalid arguments for {name}: {details}"

    def _category(self, name: str) -> str:
        tool = self._tools.get(name)
        return tool.category.value if tool else "unknown"

    def _record(self, name: str, ctx: ToolContext, result: ToolResult, duration_s: float) -> None:
        known = name if name in self._tools else UNKNOWN_TOOL
        outcome = outcome_of(None if result.success else result.error_code or "error")
        self._telemetry.tool_called(ToolCallReport(known, outcome, duration_s))
        _log(name, self._category(name), ctx, result, duration_s * 1000)


# what a tool answers when asked for what it must not or cannot give: logged as an answer
REFUSALS = frozenset({ToolErrorCode.NOT_ALLOWED, ToolErrorCode.NOT_FOUND, ToolErrorCode.AMBIGUOUS})


def _log(
    name: str, category: str, ctx: ToolContext, result: ToolResult, duration_ms: float
) -> None:
    # a tool refusing (nothing past the position, no such chapter) is an answer, not a fault
    refused = result.error_code in REFUSALS
    level = logging.INFO if result.success or refused else logging.WARNING
    conversation_id = ctx.conversation.id if ctx.conversation is not None else None
    logger.log(
        level,
        "tool=%s category=%s success=%s error_code=%s duration_ms=%.2f",
        name,
        category,
        result.success,
        result.error_code,
        duration_ms,
        extra={
            "event": "tool_call",
            "tool": name,
            "category": category,
            "success": result.success,
            "error_code": result.error_code,
            "duration_ms": round(duration_ms, 3),
            "user": ctx.user,
            "conversation_id": conversation_id,
            "book_id": ctx.book.id,
        },
    )
