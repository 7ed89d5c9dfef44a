"""Tools the agent may call, and their registry (explicit registration: what is offered is listed
here)."""

from __future__ import annotations

from folio.agent.tools.base import BaseTool, ToolCategory, ToolContext, ToolResult, ToolServices
from folio.agent.tools.book import ListChaptersTool, ReadPassageTool, SearchBookTool, book_tools
from folio.agent.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """A registry holding the book tools."""
    return ToolRegistry(book_tools())


__all__ = [
    "BaseTool",
    "ListChaptersTool",
    "ReadPassageTool",
    "SearchBookTool",
    "ToolCategory",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolServices",
    "book_tools",
    "default_registry",
]
