"""The tool contract: what a tool is, what it receives and what it returns.

Tools are stateless. They read a ``ToolContext`` (read-only: the book, the conversation, the reading
position) and a ``ToolServices`` bundle (the ports they may use), and return a ``ToolResult``; they
never mutate anything. A book tool's data is a typed value of ``folio.domain.passages``; it becomes
JSON only in ``ToolResult.to_json`` (the one codec).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from folio.agent.excerpts import PassageExcerpts
from folio.agent.lexicon import Lexicons
from folio.agent.summaries import StorySummaries
from folio.domain.books import Book, Chapter, ReadingPosition
from folio.domain.conversations import Conversation
from folio.domain.llm import ToolDefinition
from folio.domain.passages import (
    Passage,
    ToolOutcome,
    ToolPayload,
    chapter_breaks,
    page_breaks,
)
from folio.domain.ports import BookRepository, BookSearcher, ChunkIndex, HighlightRepository
from folio.domain.window import ReadingWindow


class ToolCategory(StrEnum):
    QUERY = "query"  # reads, no side effects, fast: every tool folio offers (MCP: read-only)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may know about the conversation it serves. ``window`` (the book's own when
    not given) is the hard limit: no text outside it leaves a tool."""

    book: Book
    conversation: Conversation | None = None
    user: str | None = None
    series: tuple[Book, ...] = ()  # the earlier volumes of the book's series (the window's)

    @property
    def window(self) -> ReadingWindow:
        return ReadingWindow(self.book, self.series)

    @property
    def position(self) -> ReadingPosition:
        return self.book.position

    @property
    def limit(self) -> int | None:
        """The window's reading position in the book (None: the whole book)."""
        return self.window.limit

    @property
    def start(self) -> int:
        """The window's first visible offset in the book (unread front matter before it)."""
        return self.window.start

    @staticmethod
    def of(window: ReadingWindow, **kwargs: Any) -> ToolContext:
        return ToolContext(book=window.book, series=window.earlier, **kwargs)


@dataclass(frozen=True, slots=True)
class ToolServices:
    """The ports tools may use. ``recaps``: a model that recaps whole chapters (None offline: the
    recap is then the chapters' own key sentences, from ``summaries``); ``highlights``: the
    reader's imported highlights (None: none are kept); ``excerpts``: what a model is shown of
    each passage ``search_book`` finds (None: the whole passage, as the offline policy, which
    picks its own sentences, reads it)."""

    searcher: BookSearcher
    books: BookRepository
    chunks: ChunkIndex
    search_k: int = 5
    recaps: ChapterRecaps | None = None
    highlights: HighlightRepository | None = None
    lexicons: Lexicons = field(default_factory=Lexicons)  # each book's names, built once
    summaries: StorySummaries = field(default_factory=StorySummaries)  # chapters' best sentences
    excerpts: PassageExcerpts | None = None


class ChapterRecaps(Protocol):
    """Recaps of whole chapters (``folio.agent.recaps.ModelChapterRecaps``)."""

    def recap(self, book: Book, chapter: Chapter) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call. ``data`` is a typed ``ToolPayload`` for the book tools (any
    JSON-ready value for others); ``error`` is a message for the model (and the user);
    ``error_code`` is for logs and metrics."""

    success: bool
    data: ToolPayload | Any = None
    error: str | None = None
    error_code: str | None = None
    summary: str = ""  # one short line for people ("5 passages, pp. 12-40")

    @staticmethod
    def ok(data: ToolPayload | Any, *, summary: str = "") -> ToolResult:
        return ToolResult(True, data, summary=summary)

    @staticmethod
    def fail(error: str, code: str) -> ToolResult:
        return ToolResult(False, error=error, error_code=code, summary=f"{code}: {error}")

    def outcome(self) -> ToolOutcome:
        """The result as the model receives it (typed until it is encoded)."""
        typed = self.data if isinstance(self.data, ToolPayload) else None
        return ToolOutcome(
            self.success,
            payload=typed if self.success else None,
            data=None if typed is not None or not self.success else self.data,
            error=self.error,
            error_code=self.error_code,
        )

    def envelope(self) -> dict[str, Any]:
        """The JSON object the model receives."""
        return self.outcome().envelope()

    def to_json(self) -> str:
        return self.outcome().to_json()


class BaseTool(ABC):
    """A tool the model may call. Subclasses set the class attributes and implement ``execute``.

    ``parameters`` is a JSON-schema object; the registry validates arguments against it before
    ``execute`` runs, so ``execute`` receives only schema-valid keyword arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    category: ToolCategory = ToolCategory.QUERY

    @abstractmethod
    def execute(self, *args: Any, **kwargs: Any) -> ToolResult:
        """``execute(ctx: ToolContext, services: ToolServices, **arguments) -> ToolResult``."""

    def definition(self) -> ToolDefinition:
        """The tool as a model reads it, on every call of every turn: its schema without
        ``additionalProperties`` (the registry validates the full schema and refuses an argument
        the tool does not take with a message the model reads)."""
        schema = {k: v for k, v in self.parameters.items() if k != "additionalProperties"}
        return ToolDefinition(self.name, self.description, schema)


def passage_of(
    book: Book, chapter: str | None, start: int, end: int, text: str, *, volume: Book | None = None
) -> Passage:
    """A passage of ``book`` that a reader tool quotes; ``volume``: the book of the
    conversation, when ``book`` is an earlier volume of its series (the passage then names it)."""
    other = volume is not None and volume.id != book.id
    first, last = book.page_label(start), book.page_label(max(start, end - 1))
    return Passage(None, chapter, first, last, start, end, " ".join(text.split()),
                   book_id=book.id if other else None,
                   volume=book.title if other else None,
                   breaks=page_breaks(book, start, end),
                   chapters=chapter_breaks(book, start, end))  # fmt: skip
