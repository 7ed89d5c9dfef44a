"""Conversations (the aggregate root), their messages, and per-turn metadata.

A conversation belongs to one book and owns its messages; messages carry no book id. A turn is
numbered from 1, unique within its conversation, and is stored whole (user message, tool results,
assistant message and its ``Turn`` metadata) or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from folio.domain.books import cite_location
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import PromptMessage, PromptRole, ToolInvocation, ToolResultMessage

TITLE_MAX_CHARS = 60  # an automatic title
MAX_TITLE_CHARS = 200  # any title


@dataclass(frozen=True, slots=True)
class Conversation:
    """The aggregate root. ``auto_title``: the conversation has no title of the reader's yet, so
    its next question titles it (created without a title, never renamed)."""

    id: str
    book_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    auto_title: bool = False

    def renamed(self, title: str, now: datetime) -> Conversation:
        return replace(self, title=validate_title(title), updated_at=now, auto_title=False)

    def touched(self, now: datetime) -> Conversation:
        return replace(self, updated_at=now)

    def record_turn(
        self,
        *,
        last_turn_number: int,
        question: str,
        replies: Sequence[PromptMessage],
        facts: Turn,
        now: datetime,
        new_id: Callable[[], str],
    ) -> RecordedTurn:
        """The next turn of this conversation: numbered after ``last_turn_number``, the question
        and the ``replies`` (tool calls, tool results, the answer) as stored messages in order,
        each tool result named after the call it answers, the turn's ``facts`` under its number,
        and the conversation touched (and titled from the question while ``auto_title``)."""
        number = last_turn_number + 1
        called = {i.tool_use_id: i.tool_name for m in replies for i in m.tool_invocations}
        named = [
            replace(m, tool_name=called.get(m.tool_use_id))
            if isinstance(m, ToolResultMessage) and m.tool_name is None
            else m
            for m in (PromptMessage.user(question), *replies)
        ]
        messages = tuple(
            ChatMessage(new_id(), self.id, number, seq, message, now)
            for seq, message in enumerate(named)
        )
        turn = replace(facts, conversation_id=self.id, turn_number=number, created_at=now)
        conversation = self.touched(now)
        if self.auto_title:
            conversation = replace(
                conversation, title=title_from_message(question), auto_title=False
            )
        return RecordedTurn(conversation, messages, turn)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A stored message: the message (``folio.domain.llm``'s one model) plus its ids, its turn and
    its order within the turn. The role, content and tool fields are the message's."""

    id: str
    conversation_id: str
    turn_number: int
    seq: int  # order within the turn, from 0
    message: PromptMessage
    created_at: datetime

    @staticmethod
    def of(
        id: str,
        conversation_id: str,
        turn_number: int,
        seq: int,
        role: PromptRole | str,
        content: str,
        created_at: datetime,
        tool_use_id: str | None = None,
        tool_invocations: tuple[ToolInvocation, ...] = (),
        tool_name: str | None = None,
        is_error: bool = False,
    ) -> ChatMessage:
        """A stored message from its columns (storage rows, imports). Raises ``ValueError`` for a
        combination no message can have (a tool_use_id on a user message)."""
        message = PromptMessage.of(
            role,
            content,
            tool_use_id=tool_use_id,
            tool_invocations=tool_invocations,
            tool_name=tool_name,
            is_error=is_error,
        )
        return ChatMessage(id, conversation_id, turn_number, seq, message, created_at)

    @property
    def role(self) -> PromptRole:
        return self.message.role

    @property
    def content(self) -> str:
        return self.message.content

    @property
    def tool_use_id(self) -> str | None:
        return self.message.tool_use_id

    @property
    def tool_invocations(self) -> tuple[ToolInvocation, ...]:
        return self.message.tool_invocations

    @property
    def tool_name(self) -> str | None:
        """For a tool result: the tool that produced it."""
        return self.message.tool_name

    @property
    def is_error(self) -> bool:
        return self.message.is_error

    def with_content(self, content: str) -> ChatMessage:
        return replace(self, message=self.message.with_content(content))


@dataclass(frozen=True, slots=True)
class SourceHighlight:
    """One of the reader's own highlights (or notes) inside a cited passage, within the reading
    window: shown beside the citation."""

    id: str
    kind: str
    text: str
    note: str | None
    char_start: int
    char_end: int


@dataclass(frozen=True, slots=True)
class Source:
    """A passage the answer drew on: what a citation points at (``highlights``: the reader's
    own highlights overlapping it)."""

    chunk_id: str
    chapter: str | None
    page_start: str  # page labels as the reader sees them
    page_end: str
    char_start: int
    char_end: int
    quote: str = ""
    score: float = 0.0
    book_id: str | None = None  # an earlier volume of the series (None: the conversation's book)
    volume: str | None = None  # that volume's title
    highlights: tuple[SourceHighlight, ...] = ()

    @property
    def location(self) -> str:
        return cite_location(self.chapter, self.page_start, self.page_end, volume=self.volume)


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
class RecordedTurn:
    """What one turn adds to storage: the conversation as it now is, the messages, the turn."""

    conversation: Conversation
    messages: tuple[ChatMessage, ...]
    turn: Turn


@dataclass(frozen=True, slots=True)
class ConversationDetail:
    """A conversation with its whole history, as shown and exported."""

    conversation: Conversation
    messages: tuple[ChatMessage, ...]
    turns: tuple[Turn, ...]
    book_title: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """A conversation as listed: with its number of turns and last activity."""

    conversation: Conversation
    turn_count: int
    book_title: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationMatch:
    """A message of a conversation that contains what a reader searched for. ``snippet`` is the
    text around it; ``spans`` are the ``(start, end)`` of each searched word inside ``snippet``."""

    conversation: Conversation
    book_title: str | None
    turn_number: int
    role: PromptRole
    snippet: str
    spans: tuple[tuple[int, int], ...]


MAX_SEARCH_CHARS = 200


def search_words(text: str) -> list[str]:
    """The words of a conversation search (``ConversationError`` when there are none or the
    search is longer than ``MAX_SEARCH_CHARS``)."""
    if len(text) > MAX_SEARCH_CHARS:
        raise ConversationError(
            f"A search has at most {MAX_SEARCH_CHARS} characters (got {len(text)})",
            code=ConversationErrorCode.INVALID_INPUT,
        )
    words = list(dict.fromkeys(text.split()))
    if not words:
        raise ConversationError("Say what to search for", code=ConversationErrorCode.INVALID_INPUT)
    return words


def _word_pattern(word: str) -> re.Pattern[str]:
    """``word`` at the start of a word of the text, in any case ("ocean" finds "Oceans", not
    "never" for "eve")."""
    return re.compile(rf"(?<!\w){re.escape(word)}", re.IGNORECASE)


def match_snippet(
    content: str, words: Sequence[str], width: int = 160
) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """The part of ``content`` around the first searched word, when ``content`` holds every
    word at the start of one of its words (case-insensitively); ``None`` otherwise."""
    patterns = [_word_pattern(w) for w in words]
    firsts = [p.search(content) for p in patterns]
    if not all(firsts):
        return None
    first = min(m.start() for m in firsts if m)
    start = max(0, first - width // 3)
    end = min(len(content), start + width)
    if start > 0:
        start = content.find(" ", start, first) + 1 or start
    snippet = (
        ("…" if start > 0 else "")
        + " ".join(content[start:end].split())
        + ("…" if end < len(content) else "")
    )
    spans = sorted((m.start(), m.end()) for p in patterns for m in p.finditer(snippet))
    return snippet, tuple(spans)


def validate_title(title: str) -> str:
    cleaned = " ".join(title.replace("\x00", "").split())
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
