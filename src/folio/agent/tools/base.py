"""The tool contract: what a tool is, what it receives and what it returns.

Tools are stateless. They read a ``ToolContext`` (read-only: the book, the conversation, the reading
position, the turn's state) and a ``ToolServices`` bundle (the ports they may use), and return a
``ToolResult``; they never mutate anything themselves. State changes travel in
``ToolResult.state_updates`` and the registry applies the declared ones.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from folio.domain.books import Book, ReadingPosition
from folio.domain.conversations import Conversation
from folio.domain.llm import ToolDefinition
from folio.domain.ports import BookRepository, BookSearcher, ChunkIndex

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class ToolCategory(StrEnum):
    QUERY = "query"  # reads, no side effects, fast
    ACTION = "action"  # changes stored state
    AGENTIC = "agentic"  # calls a model itself, slow


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may know about the conversation it serves. ``position`` is the hard limit."""

    book: Book
    conversation: Conversation | None = None
    user: str | None = None
    state: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    @property
    def position(self) -> ReadingPosition:
        return self.book.position

    @property
    def limit(self) -> int | None:
        """No text at or past this character offset may leave a tool (None: the whole book)."""
        return self.book.position.char_offset


@dataclass(frozen=True, slots=True)
class ToolServices:
    """The ports tools may use."""

    searcher: BookSearcher
    books: BookRepository
    chunks: ChunkIndex
    search_k: int = 5


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call. ``error`` is a message for the model (and the user); ``error_code``
    is for logs and metrics. A result may succeed and still carry an ``error`` (partial result)."""

    success: bool
    data: Any = None
    error: str | None = None
    error_code: str | None = None
    state_updates: Mapping[str, Any] | None = None
    summary: str = ""  # one short line for people ("5 passages, pp. 12-40")

    @staticmethod
    def ok(
        data: Any, *, summary: str = "", state_updates: Mapping[str, Any] | None = None
    ) -> ToolResult:
        return ToolResult(True, data, summary=summary, state_updates=state_updates)

    @staticmethod
    def fail(error: str, code: str) -> ToolResult:
        return ToolResult(False, error=error, error_code=code, summary=f"{code}: {error}")

    def envelope(self) -> dict[str, Any]:
        """The JSON object the model receives (see notes/agent_contract.md)."""
        out: dict[str, Any] = {"success": self.success}
        if self.success:
            out["data"] = self.data
        if self.error is not None:
            out["error"] = self.error
        if not self.success:
            out["error_code"] = self.error_code
        return out

    def to_json(self) -> str:
        return json.dumps(self.envelope(), ensure_ascii=False, default=str)


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
        return ToolDefinition(self.name, self.description, self.parameters)
