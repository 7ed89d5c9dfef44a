"""``search_highlights``: the reader's own highlights and notes (imported from their e-reader),
searched by words, within the reading window.

Invariant: a highlight leaves this tool only when its anchored span lies wholly inside the
window (``ctx.window.allows``): one past the position, in unread matter, in a later volume, or
one whose text was never found in the book, is never returned.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from folio.agent.tools.base import BaseTool, ToolCategory, ToolContext, ToolResult, ToolServices
from folio.domain.books import Book
from folio.domain.conversations import Source, SourceHighlight
from folio.domain.highlights import Highlight, HighlightKind, within
from folio.domain.passages import SEARCH_HIGHLIGHTS, Passage, SearchResults
from folio.domain.search import query_terms
from folio.domain.users import LOCAL_USER_ID

MAX_K = 20
DEFAULT_K = 8
_WORD = re.compile(r"\w+")


def _passage(book: Book, h: Highlight, score: float, *, own: Book) -> Passage:
    assert h.char_start is not None and h.char_end is not None
    text = " ".join(h.text.split())
    if h.note:
        text += f" [the reader's note: {' '.join(h.note.split())}]"
    other = book.id != own.id
    return Passage(None, h.chapter, book.page_label(h.char_start), book.page_label(h.char_end - 1),
                   h.char_start, h.char_end, text, score, book_id=book.id if other else None,
                   volume=book.title if other else None)  # fmt: skip


_KIND_WORDS = tuple(k.value for k in HighlightKind)  # "highlight", "note", "bookmark"


def content_terms(query: str, asking: Collection[str] = ()) -> list[str]:
    """The query's words but those naming what every entry is ("highlights", "my notes",
    "highlighted": a kind of entry, inflected), which would select none: "what did I
    highlight?" asks for all of them. ``asking``: more words that only ask (inflected alike)."""
    words = (*_KIND_WORDS, *(w for w in asking if len(w) >= 4))

    def only_asks(term: str) -> bool:
        return any(term.startswith(k) or (len(term) >= 4 and k.startswith(term)) for k in words)

    return [t for t in query_terms(query) if not only_asks(t)] if query.strip() else []


def _score(h: Highlight, terms: list[str]) -> float:
    # lowercased as ``query_terms`` lowercases the query (casefold would make "ß" "ss" here only)
    words = {w.lower() for w in _WORD.findall(f"{h.text} {h.note or ''} {h.chapter or ''}")}
    return float(sum(t in words for t in terms))


class SearchHighlightsTool(BaseTool):
    name = SEARCH_HIGHLIGHTS
    description = (
        "Search the reader's own highlights and notes by words; without a query, all of them so "
        "far, in order."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 500},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
        },
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self, ctx: ToolContext, services: ToolServices, *, query: str = "", k: int | None = None
    ) -> ToolResult:
        if services.highlights is None:
            return ToolResult.fail("No highlights are kept here.", "UNAVAILABLE")
        where = ctx.book.describe_position()
        window = ctx.window
        user = ctx.user or LOCAL_USER_ID
        found = [
            (v, h)
            for v in window.volumes
            for h in within(window, services.highlights.of_book(v.id, user))
        ]
        terms = content_terms(query)
        scored = [(v, h, _score(h, terms) if terms else 0.0) for v, h in found]
        if terms:
            scored = sorted((s for s in scored if s[2] > 0), key=lambda s: -s[2])
        chosen = scored[: k or DEFAULT_K]
        passages = tuple(_passage(v, h, s, own=ctx.book) for v, h, s in chosen)
        note = None
        if not passages:
            about = f" about {query.strip()!r}" if terms else ""
            note = f"None of the reader's highlights{about} lie in what they have read ({where})."
        results = SearchResults(query.strip(), where, passages, note)
        return ToolResult.ok(results, summary=f"{len(passages)} highlight(s)")


def marked_sources(
    sources: tuple[Source, ...], ctx: ToolContext, services: ToolServices
) -> tuple[Source, ...]:
    """``sources`` each with the reader's highlights inside the window that overlap its passage
    (of its own volume), to be shown beside the citation."""
    if not sources or services.highlights is None:
        return sources
    user = ctx.user or LOCAL_USER_ID
    window = ctx.window
    mine = {v.id: within(window, services.highlights.of_book(v.id, user)) for v in window.volumes}
    return tuple(_marked(s, mine.get(s.book_id or ctx.book.id, [])) for s in sources)


def _marked(source: Source, highlights: list[Highlight]) -> Source:
    inside = tuple(
        SourceHighlight(h.id, str(h.kind), h.text, h.note, h.char_start, h.char_end)
        for h in highlights
        if h.char_start is not None
        and h.char_end is not None
        and h.char_start < source.char_end
        and source.char_start < h.char_end
    )
    return replace(source, highlights=inside) if inside else source
