"""A chat provider that plays back a script: the fake ``ChatProvider`` for tests and demos.

Each model call consumes the next step of the script, in order, whichever method is called:

- a ``str``: a text answer;
- a ``ToolInvocation`` or a sequence of them: the model asks for those tool calls;
- a ``ChatResponse``: returned as is;
- an exception instance: raised (e.g. ``LLMError(...)`` to simulate an outage);
- a callable ``(messages, tools) -> any of the above``: computed from the request.

Every call is recorded (method, messages, tools) for assertions. Token usage is estimated as
characters / 4 so that cost figures are meaningful. With ``prompt_cache=True`` the provider also
plays a prompt cache the way Anthropic's works with folio's two breakpoints (after tools + system,
and at the reader's latest question): an input prefix sent before up to a breakpoint is reported
as ``cache_read_tokens``, the part up to the new breakpoint as ``cache_write_tokens``. When the
script is exhausted the provider raises ``ScriptExhaustedError`` naming the call that had no step.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folio.domain.errors import ConfigError, LLMError, LLMErrorCode
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    PromptRole,
    StreamEvent,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
)

ScriptStep = (
    str
    | ToolInvocation
    | Sequence[ToolInvocation]
    | ChatResponse
    | BaseException
    | Callable[[Sequence[PromptMessage], Sequence[ToolDefinition] | None], Any]
)

_ids = itertools.count(1)
_DELTA = re.compile(r"\S+\s*|\s+")


def tool_call(
    name: str, arguments: dict[str, Any] | None = None, *, tool_use_id: str | None = None
) -> ToolInvocation:
    """A scripted tool call with a fresh id."""
    return ToolInvocation(name, tool_use_id or f"call_{next(_ids)}", dict(arguments or {}))


class ScriptExhaustedError(LLMError):
    """The script had no step left for a call."""

    code = LLMErrorCode.BAD_RESPONSE


@dataclass(frozen=True, slots=True)
class RecordedCall:
    method: str  # chat | chat_with_tools | stream_chat | stream_chat_with_tools
    messages: tuple[PromptMessage, ...]
    tools: tuple[ToolDefinition, ...] | None  # None for the methods without tools

    @property
    def with_tools(self) -> bool:
        return self.tools is not None


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


class ScriptedChatProvider:
    """Implements ``ChatProvider`` by playing back ``script``."""

    def __init__(
        self,
        script: Iterable[ScriptStep] = (),
        *,
        supports_tools: bool = True,
        model: str = "scripted-1",
        prompt_cache: bool = False,
        delay: float = 0.0,
    ) -> None:
        self._script = list(script)
        self._delay = delay  # seconds before each streamed piece (slow models, disconnect tests)
        self._position = 0
        self._supports_tools = supports_tools
        self._model = model
        self._cache: set[str] | None = set() if prompt_cache else None
        self.calls: list[RecordedCall] = []

    # --- ChatProvider ----------------------------------------------------------------------------
    @property
    def provider_name(self) -> str:
        return "scripted"

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def supports_tools(self) -> bool:
        return self._supports_tools

    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        return self._respond("chat", messages, None)

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        self._require_tools()
        return self._respond("chat_with_tools", messages, tools)

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return _stream(self._respond("stream_chat", messages, None), self._delay)

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        self._require_tools()
        return _stream(self._respond("stream_chat_with_tools", messages, tools), self._delay)

    # --- script ----------------------------------------------------------------------------------
    def extend(self, steps: Iterable[ScriptStep]) -> None:
        """Append steps to the script (e.g. between turns of a test)."""
        self._script.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._script) - self._position

    def _require_tools(self) -> None:
        if not self._supports_tools:
            raise LLMError(
                "The scripted provider is configured without tool use",
                code=LLMErrorCode.UNSUPPORTED_FEATURE,
            )

    def _respond(
        self,
        method: str,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition] | None,
    ) -> ChatResponse:
        self.calls.append(
            RecordedCall(method, tuple(messages), None if tools is None else tuple(tools))
        )
        if self._position >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedChatProvider: the script has {len(self._script)} step(s) and call "
                f"{len(self.calls)} ({method}) has none left"
            )
        step = self._script[self._position]
        self._position += 1
        return self._to_response(step, messages, tools)

    def _to_response(
        self,
        step: Any,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition] | None,
    ) -> ChatResponse:
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, ChatResponse):
            return self._to_response(step(messages, tools), messages, tools)
        if isinstance(step, ChatResponse):
            return step
        if isinstance(step, str):
            return ChatResponse(
                step, (), self._usage(messages, tools, estimate_tokens(step)), self._model
            )
        calls = (step,) if isinstance(step, ToolInvocation) else tuple(step)
        if not calls or not all(isinstance(c, ToolInvocation) for c in calls):
            raise TypeError(f"Not a script step: {step!r}")
        out = sum(estimate_tokens(f"{c.tool_name}{c.arguments}") for c in calls)
        return ChatResponse(
            None, calls, self._usage(messages, tools, out), self._model, stop_reason="tool_use"
        )

    def _usage(
        self,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition] | None,
        output_tokens: int,
    ) -> TokenUsage:
        total = _prompt_tokens(messages, tools)
        if self._cache is None:
            return TokenUsage(total, output_tokens)
        read, written = 0, 0
        question = max((i for i, m in enumerate(messages) if m.role is PromptRole.USER), default=-1)
        digest = hashlib.sha256(repr(sorted((t.name, t.description) for t in tools or ())).encode())
        for i, message in enumerate(messages):
            digest.update(repr(message).encode())
            prefix = digest.hexdigest()
            tokens = _prompt_tokens(messages[: i + 1], tools)
            if prefix in self._cache:
                read = tokens
            if message.role is PromptRole.SYSTEM or i == question:
                self._cache.add(prefix)
                written = tokens
        return TokenUsage(total, output_tokens, read, max(0, written - read))


def _prompt_tokens(
    messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition] | None
) -> int:
    chars = sum(len(m.content) + 8 for m in messages)
    calls = [i for m in messages for i in m.tool_invocations]
    chars += sum(len(str(dict(i.arguments))) + len(i.tool_name) for i in calls)
    chars += sum(len(t.description) + len(str(t.parameters)) for t in tools or ())
    return (chars + 3) // 4


def _stream(response: ChatResponse, delay: float = 0.0) -> Iterator[StreamEvent]:
    for piece in _DELTA.findall(response.text or ""):
        if delay:
            time.sleep(delay)
        yield StreamEvent.delta(piece)
    yield StreamEvent.done(response)


def load_script(path: Path) -> ScriptedChatProvider:
    """A scripted provider from a JSON file, so that a server process (``folio serve``) can be
    tested and benchmarked without a model. Each provider built from the file plays it from the
    start; the HTTP API builds one per turn, so the file scripts ONE turn::

        {"model": "scripted-1", "delay": 0.01, "tools": true,
         "steps": [{"tool": "search_book", "arguments": {"query": "Clerval"}},
                   "Clerval is Victor's friend.",
                   {"error": "UNAVAILABLE", "message": "the model is down"}]}

    A step is a text answer, a tool call (``tool``, ``arguments``), a list of tool calls, or an
    error (an ``LLMError`` code and message). ``delay`` is slept before each streamed piece."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"Cannot read the provider script {path}: {e}") from e
    if isinstance(data, list):
        data = {"steps": data}
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise ConfigError(f"Provider script {path}: expected an object with a 'steps' list")
    return ScriptedChatProvider(
        [_step(s, path) for s in data["steps"]],
        supports_tools=bool(data.get("tools", True)),
        model=str(data.get("model", "scripted-1")),
        delay=float(data.get("delay", 0.0)),
    )


def _step(raw: Any, path: Path) -> ScriptStep:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return [_call(c, path) for c in raw]
    if isinstance(raw, dict) and "error" in raw:
        codes = {c.value: c for c in LLMErrorCode}
        code = codes.get(str(raw["error"]), LLMErrorCode.UNAVAILABLE)
        return LLMError(str(raw.get("message", "The scripted model failed")), code=code)
    return _call(raw, path)


def _call(raw: Any, path: Path) -> ToolInvocation:
    if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str):
        raise ConfigError(f"Provider script {path}: not a step: {raw!r}")
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise ConfigError(f"Provider script {path}: arguments must be an object: {raw!r}")
    return tool_call(raw["tool"], arguments)
