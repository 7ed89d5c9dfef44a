"""Conversation management: create, list, show, resolve, rename, delete, export and import.

Every read and write goes through a unit of work from the injected factory and nothing is cached,
so what a caller sees is what is stored, whichever process wrote it. The chat turn itself
(``app/chat.py``) writes messages and turns; this module never does except when importing.

The JSON export is the one machine format of a conversation (``EXPORT_FORMAT`` version
``EXPORT_VERSION``): the pydantic models below both produce it and validate an import, so an
export imports back unchanged and export -> import -> export differs only in ids.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from folio.domain.books import Book
from folio.domain.conversations import (
    ChatMessage,
    Conversation,
    ConversationSummary,
    MessageRole,
    Source,
    Turn,
    validate_title,
)
from folio.domain.errors import BookError, ConversationError, ConversationErrorCode
from folio.domain.llm import ToolInvocation
from folio.domain.ports import BookRepository, UnitOfWorkFactory

PLACEHOLDER_TITLE = "New conversation"
EXPORT_FORMAT: Final = "folio.conversation"
EXPORT_VERSION: Final = 1
_MAX_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class ConversationDetail:
    """A conversation with its whole history, as shown and exported."""

    conversation: Conversation
    messages: tuple[ChatMessage, ...]
    turns: tuple[Turn, ...]
    book_title: str | None = None


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


class Conversations:
    """The conversation use cases. ``clock`` and ``new_id`` are injectable for tests."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        books: BookRepository,
        *,
        clock: Callable[[], datetime] = _utcnow,
        new_id: Callable[[], str] = _new_id,
    ) -> None:
        self._uow = uow
        self._books = books
        self._clock = clock
        self._new_id = new_id

    def create(self, book_id: str, title: str | None = None) -> Conversation:
        """A new, empty conversation about a book (``BookError(NOT_FOUND)`` if there is none).
        Without a title it is called ``PLACEHOLDER_TITLE`` until the chat titles it."""
        self._books.get(book_id)
        now = self._clock()
        name = PLACEHOLDER_TITLE if title is None else validate_title(title)
        conversation = Conversation(self._new_id(), book_id, name, now, now)
        with self._uow() as uow:
            uow.conversations.save(conversation)
            uow.commit()
        return conversation

    def list(self, book_id: str | None = None) -> builtins.list[ConversationSummary]:
        """All conversations (or a book's), most recent activity first, with turn counts."""
        titles = {b.id: b.title for b in self._books.list()}
        with self._uow() as uow:
            found = (
                uow.conversations.list_all()
                if book_id is None
                else uow.conversations.get_by_book(book_id)
            )
            counts = [uow.messages.last_turn_number(c.id) for c in found]
        return [
            ConversationSummary(c, n, titles.get(c.book_id))
            for c, n in zip(found, counts, strict=True)
        ]

    def get(self, conversation_id: str) -> ConversationDetail:
        with self._uow() as uow:
            conversation = uow.conversations.get(conversation_id)
            messages = tuple(uow.messages.get_by_conversation(conversation_id))
            turns = tuple(uow.turns.get_by_conversation(conversation_id))
        book = self._book_or_none(conversation.book_id)
        return ConversationDetail(conversation, messages, turns, book.title if book else None)

    def resolve(self, ref: str) -> Conversation:
        """A conversation by full id or unique id prefix."""
        ref = ref.strip()
        with self._uow() as uow:
            try:
                return uow.conversations.get(ref)
            except ConversationError as e:
                if e.code != ConversationErrorCode.NOT_FOUND:
                    raise
            matches = [c for c in uow.conversations.list_all() if ref and c.id.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise ConversationError(
                f"No conversation {ref!r}", code=ConversationErrorCode.NOT_FOUND, ref=ref
            )
        shown = ", ".join(f"{c.id[:12]} ({c.title})" for c in matches[:_MAX_CANDIDATES])
        more = (
            f" and {len(matches) - _MAX_CANDIDATES} more" if len(matches) > _MAX_CANDIDATES else ""
        )
        raise ConversationError(
            f"{ref!r} matches {len(matches)} conversations: {shown}{more}; give more of the id",
            code=ConversationErrorCode.INVALID_INPUT,
            candidates=[c.id for c in matches],
        )

    def rename(self, conversation_id: str, title: str) -> Conversation:
        """Raises ``ConversationError(INVALID_INPUT)`` for an empty title."""
        with self._uow() as uow:
            renamed = uow.conversations.update_title(conversation_id, validate_title(title))
            uow.commit()
        return renamed

    def delete(self, conversation_id: str) -> None:
        with self._uow() as uow:
            uow.conversations.delete(conversation_id)
            uow.commit()

    def delete_for_book(self, book_id: str) -> int:
        """Delete every conversation of a book (stores without a database cascade need this).
        Returns how many were deleted."""
        with self._uow() as uow:
            doomed = uow.conversations.get_by_book(book_id)
            for c in doomed:
                uow.conversations.delete(c.id)
            uow.commit()
        return len(doomed)

    # --- export and import -------------------------------------------------------------------
    def export_json(self, conversation_id: str) -> dict[str, Any]:
        """Everything, for machines: see ``ConversationExport``."""
        detail = self.get(conversation_id)
        book = self._book_or_none(detail.conversation.book_id)
        return _to_export(detail, book).model_dump(mode="json")

    def export_markdown(self, conversation_id: str) -> str:
        """For people: title, book, dates, then each turn's question and answer with citations."""
        detail = self.get(conversation_id)
        return render_markdown(detail, self._book_or_none(detail.conversation.book_id))

    def import_json(self, data: object) -> Conversation:
        """Store an exported conversation under new ids. The book is matched by id, else by
        content hash. Raises ``ConversationError(INVALID_INPUT)`` for malformed data and
        ``BookError(NOT_FOUND)`` when the book is not in the library."""
        exported = parse_export(data)
        book = self._match_book(exported.book)
        conversation, messages, turns = _from_export(exported, book.id, self._new_id)
        with self._uow() as uow:
            uow.conversations.save(conversation)
            uow.messages.save_batch(messages)
            for turn in turns:
                uow.turns.save(turn)
            uow.commit()
        return conversation

    def _match_book(self, ref: BookRef) -> Book:
        book = self._book_or_none(ref.id) or self._books.find_by_hash(ref.content_hash)
        if book is None:
            raise BookError(
                f"The book of this conversation, {ref.title!r}, is not in the library "
                "(matched by id and by content); add it first"
            )
        return book

    def _book_or_none(self, book_id: str) -> Book | None:
        try:
            return self._books.get(book_id)
        except BookError:
            return None


# --- the export format -------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InvocationOut(_Strict):
    tool_name: str
    tool_use_id: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


class MessageOut(_Strict):
    id: str
    turn_number: int = Field(ge=1)
    seq: int = Field(ge=0)
    role: MessageRole
    content: str
    created_at: AwareDatetime
    tool_use_id: str | None = None
    tool_invocations: builtins.list[InvocationOut] = Field(default_factory=builtins.list)
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
    queries: builtins.list[str] = Field(default_factory=builtins.list)
    retrieval_attempts: int = Field(default=0, ge=0)
    sources: builtins.list[SourceOut] = Field(default_factory=builtins.list)
    reasoning_steps: builtins.list[str] = Field(default_factory=builtins.list)
    guardrail_score: float | None = None
    provider: str = ""
    model: str = ""
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    latency_ms: float = Field(default=0.0, ge=0)
    strategy: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)


class BookRef(_Strict):
    id: str
    title: str
    author: str | None = None
    content_hash: str


class ConversationOut(_Strict):
    id: str
    title: str = Field(min_length=1)
    created_at: AwareDatetime
    updated_at: AwareDatetime


class ConversationExport(_Strict):
    """One conversation with everything it holds, as exported and imported."""

    format: Literal["folio.conversation"]
    version: Literal[1]
    book: BookRef
    conversation: ConversationOut
    messages: builtins.list[MessageOut]
    turns: builtins.list[TurnOut]

    @model_validator(mode="after")
    def _numbers_are_unique(self) -> ConversationExport:
        positions = [(m.turn_number, m.seq) for m in self.messages]
        if len(set(positions)) != len(positions):
            raise ValueError("two messages have the same turn_number and seq")
        numbers = [t.turn_number for t in self.turns]
        if len(set(numbers)) != len(numbers):
            raise ValueError("two turns have the same turn_number")
        return self


def parse_export(data: object) -> ConversationExport:
    """Validate exported data strictly (JSON types only; no coercion of "3" to 3)."""
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as e:
        raise _invalid(f"it is not JSON data ({e})") from e
    try:
        return ConversationExport.model_validate_json(text, strict=True)
    except ValidationError as e:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'top level'}: {err['msg']}"
            for err in e.errors()[:5]
        ]
        more = f" (and {e.error_count() - 5} more)" if e.error_count() > 5 else ""
        raise _invalid("; ".join(problems) + more) from e


def _invalid(reason: str) -> ConversationError:
    return ConversationError(
        f"Not a valid folio conversation export: {reason}", code=ConversationErrorCode.INVALID_INPUT
    )


def _to_export(detail: ConversationDetail, book: Book | None) -> ConversationExport:
    c = detail.conversation
    return ConversationExport(
        format=EXPORT_FORMAT,
        version=EXPORT_VERSION,
        book=BookRef(
            id=c.book_id,
            title=book.title if book else (detail.book_title or ""),
            author=book.author if book else None,
            content_hash=book.content_hash if book else "",
        ),
        conversation=ConversationOut(
            id=c.id, title=c.title, created_at=c.created_at, updated_at=c.updated_at
        ),
        messages=[_message_out(m) for m in detail.messages],
        turns=[_turn_out(t) for t in detail.turns],
    )


def _message_out(m: ChatMessage) -> MessageOut:
    return MessageOut(
        id=m.id, turn_number=m.turn_number, seq=m.seq, role=m.role, content=m.content,
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
        strategy=t.strategy, extra=dict(t.extra),
    )  # fmt: skip


def _from_export(
    e: ConversationExport, book_id: str, new_id: Callable[[], str]
) -> tuple[Conversation, builtins.list[ChatMessage], builtins.list[Turn]]:
    c = e.conversation
    cid = new_id()
    conversation = Conversation(cid, book_id, validate_title(c.title), c.created_at, c.updated_at)
    messages = [
        ChatMessage(
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
            strategy=t.strategy, extra=dict(t.extra),
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
    elif detail.book_title:
        lines.append(f"- Book: *{detail.book_title}*")
    lines += [f"- Started: {_when(c.created_at)}", f"- Last activity: {_when(c.updated_at)}", ""]
    sources = {t.turn_number: t.sources for t in detail.turns}
    for number in sorted({m.turn_number for m in detail.messages}):
        turn = [m for m in detail.messages if m.turn_number == number]
        lines += _turn_markdown(number, turn, sources.get(number, ()))
    return "\n".join(lines).rstrip() + "\n"


def _turn_markdown(
    number: int, messages: builtins.list[ChatMessage], sources: tuple[Source, ...]
) -> builtins.list[str]:
    question = next((m.content for m in messages if m.role is MessageRole.USER), "")
    answers = [m for m in messages if m.role is MessageRole.ASSISTANT and m.content.strip()]
    final = [m for m in answers if not m.tool_invocations] or answers
    answer = final[-1].content if final else "*(no answer)*"
    lines = [f"## {number}. You", "", question, "", "**folio:**", "", answer, ""]
    cited = format_citations(sources)
    if cited:
        lines += [f"Sources: {cited}", ""]
    return lines


def format_citations(sources: tuple[Source, ...]) -> str:
    """``Loomings, pp. 12-13; p. 40``: each cited place once, in order."""
    seen: builtins.list[str] = []
    for s in sources:
        text = s.location
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
