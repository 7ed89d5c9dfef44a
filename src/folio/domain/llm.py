"""Value objects of the LLM boundary: what the agent sends to a chat provider and what comes back.

These are pure values (identity is a storage concern). Each provider adapter translates them to and
from its vendor's wire format; no vendor type crosses the adapter boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar, Self

from folio.domain.passages import ToolOutcome, decode_tool_result


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


class PromptMessage:
    """One message of a conversation with a model: the ONE message model of folio.

    A closed family discriminated by ``role``: ``SystemMessage``, ``UserMessage``,
    ``AssistantMessage`` (may carry the tool calls the model made) and ``ToolResultMessage``
    (answers one call by its ``tool_use_id``). Each kind has only the fields it can have, so a
    tool_use_id on a user message cannot be built. The read-only defaults below let code read any
    message uniformly ("which calls does it carry?": none, for a user message). A stored
    ``ChatMessage`` is one of these plus its ids, turn and seq.
    """

    __slots__ = ()
    role: ClassVar[PromptRole]
    content: str

    @property
    def tool_invocations(self) -> tuple[ToolInvocation, ...]:
        return ()

    def with_content(self, content: str) -> Self:
        """The same message with other text."""
        return replace(self, content=content)  # type: ignore[type-var]

    @property
    def tool_use_id(self) -> str | None:
        return None

    @property
    def tool_name(self) -> str | None:
        return None

    @property
    def is_error(self) -> bool:
        return False

    @staticmethod
    def system(content: str) -> SystemMessage:
        return SystemMessage(content)

    @staticmethod
    def user(content: str) -> UserMessage:
        return UserMessage(content)

    @staticmethod
    def assistant(content: str, invocations: tuple[ToolInvocation, ...] = ()) -> AssistantMessage:
        return AssistantMessage(content, tuple(invocations))

    @staticmethod
    def tool_result(
        tool_use_id: str,
        content: str,
        *,
        is_error: bool = False,
        tool_name: str | None = None,
        outcome: ToolOutcome | None = None,
    ) -> ToolResultMessage:
        return ToolResultMessage(content, tool_use_id, tool_name, is_error, outcome)

    @staticmethod
    def of(
        role: PromptRole | str,
        content: str,
        *,
        tool_use_id: str | None = None,
        tool_invocations: tuple[ToolInvocation, ...] = (),
        tool_name: str | None = None,
        is_error: bool = False,
    ) -> AnyMessage:
        """The message of kind ``role`` (from storage or an import). Fields a kind cannot have
        are an error, not silently dropped."""
        kind = PromptRole(role)
        if kind is PromptRole.TOOL_RESULT:
            if tool_invocations:
                raise ValueError("A tool result carries no tool calls")
            return ToolResultMessage(content, tool_use_id or "", tool_name, is_error)
        if tool_use_id is not None or tool_name is not None or is_error:
            raise ValueError(f"A {kind.value} message answers no tool call")
        if kind is PromptRole.ASSISTANT:
            return AssistantMessage(content, tuple(tool_invocations))
        if tool_invocations:
            raise ValueError(f"A {kind.value} message carries no tool calls")
        return SystemMessage(content) if kind is PromptRole.SYSTEM else UserMessage(content)


@dataclass(frozen=True, slots=True)
class SystemMessage(PromptMessage):
    content: str
    role: ClassVar[PromptRole] = PromptRole.SYSTEM


@dataclass(frozen=True, slots=True)
class UserMessage(PromptMessage):
    content: str
    role: ClassVar[PromptRole] = PromptRole.USER


@dataclass(frozen=True, slots=True)
class AssistantMessage(PromptMessage):
    content: str
    tool_invocations: tuple[ToolInvocation, ...] = ()
    role: ClassVar[PromptRole] = PromptRole.ASSISTANT


@dataclass(frozen=True, slots=True)
class ToolResultMessage(PromptMessage):
    """The result of the call ``tool_use_id`` as the model receives it: ``content`` is its JSON
    text (the one codec of ``folio.domain.passages``); ``outcome`` the same result still typed,
    when it was produced in this process (None once it has been through storage: decode
    ``content`` then)."""

    content: str
    tool_use_id: str
    tool_name: str | None = None
    is_error: bool = False
    outcome: ToolOutcome | None = field(default=None, compare=False, repr=False)
    role: ClassVar[PromptRole] = PromptRole.TOOL_RESULT

    def typed(self) -> ToolOutcome:
        """The result as a typed value (decoded from ``content`` when it is not at hand)."""
        return self.outcome if self.outcome is not None else decode_tool_result(self.content)


AnyMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


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
