"""The exported forms of a conversation: the JSON export/import schema and the Markdown rendering.

The JSON export is the one machine format of a conversation (``EXPORT_FORMAT`` version
``EXPORT_VERSION``): the pydantic models below both produce it (``to_export``) and validate an
import (``parse_export``, then ``from_export`` under new ids), so an export imports back unchanged
and export -> import -> export differs only in ids. ``render_markdown`` is the export for people.
Nothing here reads or writes storage; the ``Conversations`` use case does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, cast

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from folio.domain.books import Book, places_line
from folio.domain.conversations import (
    ChatMessage,
    Conversation,
    ConversationDetail,
    Source,
    Turn,
    validate_title,
)
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import PromptMessage, PromptRole, ToolInvocation

EXPORT_FORMAT: Final = "folio.conversation"
EXPORT_VERSION: Final = 1


# --- the export format -------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InvocationOut(_Strict):
    tool_name: str
    tool_use_id: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


StoredRole = Literal[PromptRole.USER, PromptRole.ASSISTANT, PromptRole.TOOL_RESULT]


class MessageOut(_Strict):
    id: str
    turn_number: int = Field(ge=1)
    seq: int = Field(ge=0)
    role: StoredRole
    content: str
    created_at: AwareDatetime
    tool_use_id: str | None = None
    tool_invocations: list[InvocationOut] = Field(default_factory=list)
    tool_name: str | None = None
    is_error: bool = False


class SourceOut(_Strict):
    chunk_id: str
    chapter: str | None = None
    page_start: str
    page_end: str
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)
    quote: str = ""
    score: float = 0.0


class TurnOut(_Strict):
    turn_number: int = Field(ge=1)
    created_at: AwareDatetime
    queries: list[str] = Field(default_factory=list)
    retrieval_attempts: int = Field(default=0, ge=0)
    sources: list[SourceOut] = Field(default_factory=list)
    reasoning_steps: list[str] = Field(default_factory=list)
    guardrail_score: float | None = None
    provider: str = ""
    model: str = ""
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    latency_ms: float = Field(default=0.0, ge=0)
    strategy: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)


class BookRef(_Strict):
    id: str
    title: str
    author: str | None = None
    content_hash: str
    reading_position: str | None = None  # as the reader says it, when the book is in the library


class ConversationOut(_Strict):
    id: str
    title: str = Field(min_length=1)
    created_at: AwareDatetime
    updated_at: AwareDatetime
    auto_title: bool = False  # titled by its next question (absent in older exports)


class ConversationExport(_Strict):
    """One conversation with everything it holds, as exported and imported."""

    format: Literal["folio.conversation"]
    version: Literal[1]
    book: BookRef
    conversation: ConversationOut
    messages: list[MessageOut]
    turns: list[TurnOut]


def first_violation(messages: Sequence[MessageOut], turns: Sequence[TurnOut]) -> str | None:
    """The first way ``messages`` and ``turns`` break what a chat always keeps, or None: turns
    numbered 1..N with one record each; in each turn, seq 0..n-1, the reader's message first and
    only there, every tool result answering a call made earlier in the turn (once), and an
    answer last."""
    by_turn: dict[int, list[MessageOut]] = {}
    for m in messages:
        by_turn.setdefault(m.turn_number, []).append(m)
    numbers = sorted(by_turn)
    if numbers != list(range(1, len(numbers) + 1)):
        return f"turn numbers must run 1..{len(numbers)} without gaps (got {numbers[:10]})"
    records = [t.turn_number for t in turns]
    if sorted(records) != numbers:
        return "there must be exactly one turn record per turn of messages"
    for number in numbers:
        problem = _turn_violation(sorted(by_turn[number], key=lambda m: m.seq))
        if problem is not None:
            return f"turn {number}: {problem}"
    return None


def _turn_violation(turn: list[MessageOut]) -> str | None:
    if [m.seq for m in turn] != list(range(len(turn))):
        return "message seq numbers must run 0..n-1"
    for m in turn:
        try:  # the message model refuses fields its kind cannot have
            PromptMessage.of(
                m.role,
                m.content,
                tool_use_id=m.tool_use_id,
                tool_invocations=tuple(
                    ToolInvocation(i.tool_name, i.tool_use_id) for i in m.tool_invocations
                ),
                tool_name=m.tool_name,
                is_error=m.is_error,
            )
        except ValueError as e:
            return f"seq {m.seq}: {e}"
    if turn[0].role is not PromptRole.USER:
        return "the first message must be the reader's (role user)"
    if any(m.role is PromptRole.USER for m in turn[1:]):
        return "only one message of the turn may be the reader's"
    last = turn[-1]
    if last.role is not PromptRole.ASSISTANT or last.tool_invocations:
        return "the last message must be the answer (an assistant message without tool calls)"
    pending: set[str] = set()
    for m in turn[1:]:
        if m.role is PromptRole.TOOL_RESULT:
            if m.tool_use_id not in pending:
                return f"seq {m.seq}: a tool result answers no open tool call ({m.tool_use_id!r})"
            pending.discard(m.tool_use_id)
        elif m.tool_use_id is not None:
            return f"seq {m.seq}: only tool results carry a tool_use_id"
        else:
            ids = [i.tool_use_id for i in m.tool_invocations]
            if len(set(ids)) != len(ids):
                return f"seq {m.seq}: two tool calls share an id"
            pending.update(ids)
    if pending:
        return f"tool call(s) {sorted(pending)} have no result"
    return None


# ``\u0000`` in JSON text, not preceded by an escaped backslash
_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def parse_export(data: object) -> ConversationExport:
    """Validate exported data strictly (JSON types only; no coercion of "3" to 3)."""
    try:
        text = json.dumps(data)
    except RecursionError as e:
        raise _invalid("it is nested too deeply") from e
    except (TypeError, ValueError) as e:
        raise _invalid(f"it is not JSON data ({e})") from e
    text = _NUL_ESCAPE.sub(r"\1", text)  # NUL characters mean nothing in a conversation
    try:
        exported = ConversationExport.model_validate_json(text, strict=True)
    except RecursionError as e:
        raise _invalid("it is nested too deeply") from e
    except ValidationError as e:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'top level'}: {err['msg']}"
            for err in e.errors()[:5]
        ]
        more = f" (and {e.error_count() - 5} more)" if e.error_count() > 5 else ""
        raise _invalid("; ".join(problems) + more) from e
    problem = first_violation(exported.messages, exported.turns)
    if problem is not None:
        raise _invalid(problem)
    return exported


def _invalid(reason: str) -> ConversationError:
    return ConversationError(
        f"Not a valid folio conversation export: {reason}", code=ConversationErrorCode.INVALID_INPUT
    )


def to_export(detail: ConversationDetail, book: Book | None) -> ConversationExport:
    c = detail.conversation
    return ConversationExport(
        format=EXPORT_FORMAT,
        version=EXPORT_VERSION,
        book=BookRef(
            id=c.book_id,
            title=book.title if book else (detail.book_title or ""),
            author=book.author if book else None,
            content_hash=book.content_hash if book else "",
            reading_position=book.describe_position() if book else None,
        ),
        conversation=ConversationOut(
            id=c.id,
            title=c.title,
            created_at=c.created_at,
            updated_at=c.updated_at,
            auto_title=c.auto_title,
        ),
        messages=[_message_out(m) for m in detail.messages],
        turns=[_turn_out(t) for t in detail.turns],
    )


def _message_out(m: ChatMessage) -> MessageOut:
    return MessageOut(
        id=m.id, turn_number=m.turn_number, seq=m.seq, role=cast(StoredRole, m.role),
        content=m.content,
        created_at=m.created_at, tool_use_id=m.tool_use_id, tool_name=m.tool_name,
        is_error=m.is_error,
        tool_invocations=[
            InvocationOut(tool_name=i.tool_name, tool_use_id=i.tool_use_id,
                          arguments=dict(i.arguments), parse_error=i.parse_error)
            for i in m.tool_invocations
        ],
    )  # fmt: skip


def _turn_out(t: Turn) -> TurnOut:
    return TurnOut(
        turn_number=t.turn_number, created_at=t.created_at, queries=list(t.queries),
        retrieval_attempts=t.retrieval_attempts,
        sources=[
            SourceOut(chunk_id=s.chunk_id, chapter=s.chapter, page_start=s.page_start,
                      page_end=s.page_end, char_start=s.char_start, char_end=s.char_end,
                      quote=s.quote, score=s.score)
            for s in t.sources
        ],
        reasoning_steps=list(t.reasoning_steps), guardrail_score=t.guardrail_score,
        provider=t.provider, model=t.model, input_tokens=t.input_tokens,
        output_tokens=t.output_tokens, llm_calls=t.llm_calls, latency_ms=t.latency_ms,
        strategy=t.strategy, extra=dict(t.extra), cache_read_tokens=t.cache_read_tokens,
        cache_write_tokens=t.cache_write_tokens,
    )  # fmt: skip


def from_export(
    e: ConversationExport, book_id: str, new_id: Callable[[], str]
) -> tuple[Conversation, list[ChatMessage], list[Turn]]:
    c = e.conversation
    cid = new_id()
    conversation = Conversation(
        cid, book_id, validate_title(c.title), c.created_at, c.updated_at, c.auto_title
    )
    messages = [
        ChatMessage.of(
            id=new_id(), conversation_id=cid, turn_number=m.turn_number, seq=m.seq, role=m.role,
            content=m.content, created_at=m.created_at, tool_use_id=m.tool_use_id,
            tool_name=m.tool_name, is_error=m.is_error,
            tool_invocations=tuple(
                ToolInvocation(i.tool_name, i.tool_use_id, dict(i.arguments), i.parse_error)
                for i in m.tool_invocations
            ),
        )
        for m in e.messages
    ]  # fmt: skip
    turns = [
        Turn(
            conversation_id=cid, turn_number=t.turn_number, created_at=t.created_at,
            queries=tuple(t.queries), retrieval_attempts=t.retrieval_attempts,
            sources=tuple(Source(s.chunk_id, s.chapter, s.page_start, s.page_end, s.char_start,
                                 s.char_end, s.quote, s.score) for s in t.sources),
            reasoning_steps=tuple(t.reasoning_steps), guardrail_score=t.guardrail_score,
            provider=t.provider, model=t.model, input_tokens=t.input_tokens,
            output_tokens=t.output_tokens, llm_calls=t.llm_calls, latency_ms=t.latency_ms,
            strategy=t.strategy, extra=dict(t.extra), cache_read_tokens=t.cache_read_tokens,
            cache_write_tokens=t.cache_write_tokens,
        )
        for t in e.turns
    ]  # fmt: skip
    return conversation, messages, turns


# --- markdown -------------------------------------------------------------------------------------
def render_markdown(detail: ConversationDetail, book: Book | None) -> str:
    c = detail.conversation
    lines = [f"# {c.title}", ""]
    if book is not None:
        lines.append(f"- Book: *{book.title}*" + (f" by {book.author}" if book.author else ""))
        lines.append(f"- Read: {book.describe_position()}")
    elif detail.book_title:
        lines.append(f"- Book: *{detail.book_title}*")
    lines += [f"- Started: {_when(c.created_at)}", f"- Last activity: {_when(c.updated_at)}", ""]
    sources = {t.turn_number: t.sources for t in detail.turns}
    for number in sorted({m.turn_number for m in detail.messages}):
        turn = [m for m in detail.messages if m.turn_number == number]
        lines += _turn_markdown(number, turn, sources.get(number, ()))
    return "\n".join(lines).rstrip() + "\n"


def _turn_markdown(
    number: int, messages: list[ChatMessage], sources: tuple[Source, ...]
) -> list[str]:
    question = next((m.content for m in messages if m.role is PromptRole.USER), "")
    answers = [m for m in messages if m.role is PromptRole.ASSISTANT and m.content.strip()]
    final = [m for m in answers if not m.tool_invocations] or answers
    answer = final[-1].content if final else "*(no answer)*"
    lines = [f"## {number}. You", "", question, "", "**folio:**", "", answer, ""]
    cited = format_citations(sources)
    if cited:
        lines += [f"Sources: {cited}", ""]
    return lines


def format_citations(sources: Sequence[Source]) -> str:
    """``Loomings, pp. 12-13; p. 40``: each cited place once, in order."""
    return places_line(sources)


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
