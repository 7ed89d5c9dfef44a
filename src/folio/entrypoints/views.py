"""The JSON shapes of folio's views of its domain objects (books, positions, search hits,
citations, turns, conversations, messages, import jobs), as pydantic models: the HTTP API declares
them as its routes' responses (so ``/openapi.json`` describes every body) and ``serialize.py``
builds them.

Invariant: a model's fields are the keys of the body, in the body's order, with its nullability;
nothing is added. Numbers are ``Number`` (an ``int`` stays an ``int``, a ``float`` a ``float``:
validating a body never rewrites ``12`` as ``12.0``); times are ISO 8601 strings as Python's
``isoformat`` writes them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, computed_field

from folio.domain.books import BookFormat, PositionKind, SectionKind, no_position_notice
from folio.domain.jobs import JobStatus
from folio.domain.llm import PromptRole
from folio.entrypoints.citation_marks import citation_marks

Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]

NO_POSITION_NOTICE = no_position_notice(
    "this book", 'with PUT /api/v1/books/{book_id}/position ({"chapter": "Chapter 5"})'
)


class View(BaseModel):
    """A body read from a domain object's attributes or from its dict."""

    model_config = ConfigDict(from_attributes=True)


# --- books ---------------------------------------------------------------------------------------
class PositionView(View):
    """How far the reader has read: as stored (``kind``, ``value``, ``char_offset``) and as a
    reader says it (``description``, the last ``chapter`` and ``page`` read); a synced position
    names its ``source`` and ``set_at``."""

    kind: PositionKind
    value: Number | None
    char_offset: int | None = Field(description="The hard limit: no text at or past it is shown")
    description: str = Field(examples=["through Chapter 5 (p. 45 of 205, 23%)"])
    chapter: str | None = Field(description="The last chapter read, by its title")
    page: str | None = Field(description="The last page read, by its label")
    page_count: int
    percent: Number | None
    include_matter: bool = Field(description="Front and back matter before it counts as read")
    source: str | None = Field(description="The device of a synced position")
    set_at: Timestamp | None


class BookSummary(View):
    id: str
    name: str = Field(description='The title, or "Frankenstein (EPUB)" beside a same-titled book')
    title: str
    author: str | None
    series: str | None
    series_index: Number | None
    format: BookFormat
    source_name: str
    pages: int
    chapters: int = Field(description="How many story chapters")
    other_sections: int = Field(description="How many sections are front or back matter")
    reading_position: PositionView
    created_at: Timestamp | None


class ChapterView(View):
    index: int
    kind: SectionKind
    unread: bool = Field(description="Past the position, or matter that counts as unread")
    title: str | None = Field(description="Withheld (null) when unread and descriptive")
    char_start: int
    page: str | None = Field(description="Its first page's label")
    page_end: str | None = Field(description="Its last page's label")
    current: bool = Field(description="The chapter the reader is in")


class BookDetail(BookSummary):
    """The book with its chapters (``chapters`` is the list here, not the count)."""

    chapters: list[ChapterView]  # type: ignore[assignment]
    content_hash: str
    page_count: int
    char_count: int


class SearchHitView(View):
    chunk_id: str
    book_id: str
    volume: str | None = Field(description="The earlier volume of the series it comes from")
    location: str
    chapter: str | None
    page_start: str
    page_end: str
    char_start: int
    char_end: int
    score: Number
    similarity: Number | None
    snippet: str
    text: str


# --- turns ---------------------------------------------------------------------------------------
class SourceHighlightView(View):
    """One of the reader's own highlights inside a cited passage (within the reading window)."""

    id: str
    kind: str = Field(examples=["highlight", "note"])
    text: str
    note: str | None = Field(description="The reader's note on it")
    char_start: int
    char_end: int


class SourceView(View):
    """A passage an answer drew on: what a citation chip opens."""

    chunk_id: str
    chapter: str | None
    page_start: str
    page_end: str
    quote: str
    location: str
    char_start: int
    char_end: int
    book_id: str | None = Field(description="An earlier volume of the series (null: the book)")
    volume: str | None = Field(description="That volume's title (null: the book)")
    highlights: list[SourceHighlightView] = Field(
        default_factory=list,
        description="The reader's own highlights and notes inside this passage, to show beside it",
    )


class CitationMark(View):
    """Where a source's number goes in the answer (the rule of every surface: after its quote
    and the page reference closing it, else after its first page reference no other took)."""

    at: int = Field(description="The offset in the answer, in characters (code points)")
    source: int = Field(description="The source's number: its place in citations, from 1")


def marks_of(answer: str, citations: list[SourceView]) -> list[CitationMark]:
    return [CitationMark(at=at, source=n) for at, n in citation_marks(answer, citations)]


class ToolCallView(View):
    name: str
    arguments: dict[str, Any]
    success: bool
    summary: str
    error_code: str | None


class TurnView(View):
    """A turn as clients get it: the answer, its citations, and the turn's metadata."""

    conversation_id: str
    turn_number: int
    answer: str
    citations: list[SourceView]
    searches: list[str]
    tool_calls: list[ToolCallView]
    reasoning_steps: list[str]
    guardrail_score: Number | None
    blocked: bool
    strategy: str
    provider: str
    model: str
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    latency_ms: Number
    position_set: bool = Field(description="False: the reader never said how far they have read")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def citation_marks(self) -> list[CitationMark]:
        """Where each source's number goes in ``answer``."""
        return marks_of(self.answer, self.citations)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def notice(self) -> str | None:
        """How to set the position, when the reader has not."""
        return None if self.position_set else NO_POSITION_NOTICE


# --- conversations -------------------------------------------------------------------------------
class ConversationView(View):
    conversation_id: str
    book_id: str
    title: str
    created_at: Timestamp
    updated_at: Timestamp


class NewConversationView(ConversationView):
    turns: int


class ConversationListItem(NewConversationView):
    book_title: str | None


class InvocationView(View):
    id: str
    name: str
    arguments: dict[str, Any]


class MessageView(View):
    id: str
    turn_number: int
    seq: int
    role: PromptRole
    content: str
    created_at: Timestamp
    tool_name: str | None
    tool_calls: list[InvocationView]
    is_error: bool


class TurnMetaView(View):
    turn_number: int
    created_at: Timestamp
    searches: list[str]
    citations: list[SourceView]
    citation_marks: list[CitationMark] = Field(description="Where each number goes in the answer")
    reasoning_steps: list[str]
    guardrail_score: Number | None
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: Number


class ConversationDetailView(ConversationView):
    book_title: str | None
    turns: int
    messages: list[MessageView]
    turn_details: list[TurnMetaView]


# --- import jobs ---------------------------------------------------------------------------------
class JobErrorView(View):
    code: str
    message: str | None


class JobView(View):
    job_id: str
    status: JobStatus
    book_id: str
    filename: str
    stage: str | None = Field(description="parse, chunk, store, embed")
    done: int
    total: int | None
    error: JobErrorView | None
    created_at: Timestamp
    updated_at: Timestamp
