"""Tools the agent may call, and their registry (explicit registration: what is offered is listed
here)."""

from __future__ import annotations

from folio.agent.tools.base import BaseTool, ToolCategory, ToolContext, ToolResult, ToolServices
from folio.agent.tools.book import ListChaptersTool, ReadPassageTool, SearchBookTool, book_tools
from folio.agent.tools.highlights import SearchHighlightsTool
from folio.agent.tools.reader import PeopleTool, reader_tools
from folio.agent.tools.recap import RecapTool
from folio.agent.tools.registry import ToolRegistry
from folio.domain.telemetry import Telemetry


def default_registry(*, telemetry: Telemetry | None = None) -> ToolRegistry:
    """A registry holding the book tools, the reader tools (recap, people so far) and the
    reader's highlights, reporting each call to ``telemetry``."""
    tools = [*book_tools(), *reader_tools(), SearchHighlightsTool()]
    return ToolRegistry(tools, telemetry=telemetry)


__all__ = [
    "BaseTool",
    "ListChaptersTool",
    "PeopleTool",
    "ReadPassageTool",
    "RecapTool",
    "SearchBookTool",
    "SearchHighlightsTool",
    "ToolCategory",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolServices",
    "book_tools",
    "default_registry",
    "reader_tools",
]
