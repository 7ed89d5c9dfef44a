"""Conversations (the aggregate root), their messages, and per-turn metadata.

A conversation belongs to one book and owns its messages; messages carry no book id. A turn is
numbered from 1, unique within its conversation, and is stored whole (user message, tool results,
assistant message and its ``Turn`` metadata) or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from folio.domain.books import cite_location
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import ToolInvocation

TITLE_MAX_CHARS = 60  # an automatic title
MAX_TITLE_CHARS = 200  # any title


class MessageRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    book_id: str
    title: str
    created_at: datetime
    updated_at: datetime

    def renamed(self, title: str, now: datetime) -> Conversation:
        return replace(self, title=validate_title(title), updated_at=now)

    def touched(self, now: datetime) -> Conversation:
        return replace(self, updated_at=now)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    id: str
    conversation_id: str
    turn_number: int
    seq: int  # order within the turn, from 0
    role: MessageRole
    content: str
    created_at: datetime
    tool_use_id: str | None = None
    tool_invocations: tuple[ToolInvocation, ...] = ()
    tool_name: str | None = None  # for tool_result: the tool that produced it
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Source:
    """A passage the answer drew on: what a citation points at."""

    chunk_id: str
    chapter: str | None
    page_start: str  # page labels as the reader sees them
    page_end: str
    char_start: int
    char_end: int
    quote: str = ""
    score: float = 0.0

    @property
    def location(self) -> str:
        return cite_location(self.chapter, self.page_start, self.page_end)


@dataclass(frozen=True, slots=True)
class Turn:
    """Metadata of one turn: what was searched, what was used, what it cost."""

    conversation_id: str
    turn_number: int
    created_at: datetime
    queries: tuple[str, ...] = ()
    retrieval_attempts: int = 0
    sources: tuple[Source, ...] = ()
    reasoning_steps: tuple[str, ...] = ()
    guardrail_score: float | None = None
    provider: str = ""
    model: str = ""
    input_tokens: int = 0  # all input tokens sent, cached or not
    output_tokens: int = 0
    llm_calls: int = 0
    latency_ms: float = 0.0
    strategy: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    cache_read_tokens: int = 0  # of input_tokens: served from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens: written to the prompt cache


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """A conversation as listed: with its number of turns and last activity."""

    conversation: Conversation
    turn_count: int
    book_title: str | None = None


def validate_title(title: str) -> str:
    cleaned = " ".join(title.split())
    if not cleaned:
        raise ConversationError(
            "A conversation title cannot be empty", code=ConversationErrorCode.INVALID_INPUT
        )
    if len(cleaned) > MAX_TITLE_CHARS:
        raise ConversationError(
            f"A conversation title has at most {MAX_TITLE_CHARS} characters (got {len(cleaned)})",
            code=ConversationErrorCode.INVALID_INPUT,
        )
    return cleaned


def title_from_message(message: str, max_chars: int = TITLE_MAX_CHARS) -> str:
    """An automatic title: the first user message, on one line, cut at a word boundary."""
    text = " ".join(message.split())
    if not text:
        return "New conversation"
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars + 1]
    space = cut.rfind(" ")
    head = cut[:space] if space > max_chars // 2 else text[:max_chars]
    return head.rstrip(" ,;:.-") + "…"
