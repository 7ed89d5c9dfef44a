"""Value objects of the LLM boundary: what the agent sends to a chat provider and what comes back.

These are pure values (identity is a storage concern). Each provider adapter translates them to and
from its vendor's wire format; no vendor type crosses the adapter boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class PromptRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """A call the model asked for: ``tool_name(**arguments)``, identified by ``tool_use_id``."""

    tool_name: str
    tool_use_id: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    # Set by a provider when the model's arguments were not valid JSON: the registry answers the
    # model with an INVALID_ARGUMENTS tool error instead of running the tool.
    parse_error: str | None = None


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of the prompt.

    - ``assistant`` messages may carry ``tool_invocations`` (the calls the model made in that
    message);
    - ``tool_result`` messages carry the ``tool_use_id`` they answer and the result as JSON text.
    """

    role: PromptRole
    content: str
    tool_use_id: str | None = None
    tool_invocations: tuple[ToolInvocation, ...] = ()
    is_error: bool = False

    @staticmethod
    def system(content: str) -> PromptMessage:
        return PromptMessage(PromptRole.SYSTEM, content)

    @staticmethod
    def user(content: str) -> PromptMessage:
        return PromptMessage(PromptRole.USER, content)

    @staticmethod
    def assistant(content: str, invocations: tuple[ToolInvocation, ...] = ()) -> PromptMessage:
        return PromptMessage(PromptRole.ASSISTANT, content, tool_invocations=invocations)

    @staticmethod
    def tool_result(tool_use_id: str, content: str, *, is_error: bool = False) -> PromptMessage:
        return PromptMessage(
            PromptRole.TOOL_RESULT, content, tool_use_id=tool_use_id, is_error=is_error
        )


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool offered to the model: name, description and a JSON-schema object for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens of one or more calls. ``input_tokens`` counts every input token sent; of those,
    ``cache_read_tokens`` were served from the provider's prompt cache and ``cache_write_tokens``
    were written to it (both 0 where the provider does not report caching)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The model's reply: text (may be None when it only calls tools), tool calls, and token
    usage."""

    text: str | None
    tool_invocations: tuple[ToolInvocation, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str | None = None
    stop_reason: str | None = None

    @property
    def wants_tools(self) -> bool:
        return bool(self.tool_invocations)


class StreamEventKind(StrEnum):
    TEXT_DELTA = "text_delta"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A piece of a streamed reply: text deltas, then one ``DONE`` event carrying the full
    response."""

    kind: StreamEventKind
    text: str = ""
    response: ChatResponse | None = None

    @staticmethod
    def delta(text: str) -> StreamEvent:
        return StreamEvent(StreamEventKind.TEXT_DELTA, text=text)

    @staticmethod
    def done(response: ChatResponse) -> StreamEvent:
        return StreamEvent(StreamEventKind.DONE, response=response)
