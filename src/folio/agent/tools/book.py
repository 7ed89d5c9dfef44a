"""The book tools: search the book, read a passage or a page range, list the chapters.

Invariant: no text outside the reading window (``ctx.window``: the book up to the position without
its unread matter, and the earlier volumes of its series) ever leaves these tools. The search
index already filters there; every tool cuts again by the window, refuses pages past the position
with a clear error, and lists only the chapters the window holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folio.agent.tools.base import BaseTool, ToolCategory, ToolContext, ToolResult, ToolServices
from folio.domain.books import Book, Chunk, Page, SearchHit
from folio.domain.errors import ToolErrorCode
from folio.domain.passages import (
    LIST_CHAPTERS,
    READ_PASSAGE,
    SEARCH_BOOK,
    ChapterEntry,
    ChapterList,
    Passage,
    PassageText,
    SearchResults,
    chapter_breaks,
    page_breaks,
)
from folio.domain.sentences import sentence_spans
from folio.domain.window import Unread

MAX_K = 10
MAX_PAGES = 3  # per read_passage call
CONTEXT_CHARS = 600  # read_passage(chunk_id): text kept on each side of the chunk...
SENTENCE_REACH = 300  # ...and up to this much more, to begin and end on whole sentences


def _chapter(book: Book, offset: int) -> str | None:
    chapter = book.chapter_at(offset)
    return chapter.title if chapter else None


class SearchBookTool(BaseTool):
    name = SEARCH_BOOK
    description = (
        "Search what the reader has read with a self-contained query (names, not pronouns). "
        "Passages after the second are cut ('…'): read_passage(chunk_id) reads more."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "pattern": r"\S"},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self, ctx: ToolContext, services: ToolServices, *, query: str, k: int | None = None
    ) -> ToolResult:
        # The query as the model wrote it, searched once: no rewriting, no conversation prior.
        hits = services.searcher.search(ctx.book, query, k=min(k or services.search_k, MAX_K))
        passages = tuple(p for p in (_passage(ctx, hit) for hit in hits) if p is not None)
        if services.excerpts is not None:  # a model reads what answers; read_passage the rest
            passages = services.excerpts.trim(query, passages)
        limit = ctx.book.describe_position()
        results = SearchResults(
            query=query,
            reading_limit=limit,
            passages=passages,
            note=None if passages else f"No passage read so far ({limit}) matches this query.",
        )
        pages = ", ".join(f"p. {p.pages}" for p in passages[:5])
        return ToolResult.ok(
            results, summary=f"{len(passages)} passage(s)" + (f": {pages}" if pages else "")
        )


def _passage(ctx: ToolContext, hit: SearchHit) -> Passage | None:
    window = ctx.window
    chunk = window.cut(hit.chunk)
    volume = window.volume(hit.chunk.book_id)
    if chunk is None or volume is None or not chunk.text.strip():
        return None
    if chunk == hit.chunk:
        first, last = hit.page_label_start, hit.page_label_end
    else:  # cut here: the pages are those of the text that is left
        first, last = volume.page_label(chunk.char_start), volume.page_label(chunk.char_end - 1)
    other = volume.id != ctx.book.id
    return Passage(
        book_id=volume.id if other else None,
        volume=volume.title if other else None,
        chunk_id=chunk.id,
        chapter=chunk.chapter,
        page_start=first,
        page_end=last,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        text=chunk.text,
        score=hit.score,
        breaks=page_breaks(volume, chunk.char_start, chunk.char_end),
        chapters=chapter_breaks(volume, chunk.char_start, chunk.char_end),
    )


class ReadPassageTool(BaseTool):
    name = READ_PASSAGE
    description = f"Text around a passage (chunk_id), or pages (at most {MAX_PAGES})."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "chunk_id": {"type": "string"},
            "page_start": {"type": ["string", "integer"]},
            "page_end": {"type": ["string", "integer"]},
        },
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self,
        ctx: ToolContext,
        services: ToolServices,
        *,
        chunk_id: str | None = None,
        page_start: str | int | None = None,
        page_end: str | int | None = None,
    ) -> ToolResult:
        if chunk_id:
            return self._around_chunk(ctx, services, chunk_id)
        if page_start is not None:
            return self._pages(ctx, services, str(page_start), str(page_end or page_start))
        return ToolResult.fail(
            "Give either chunk_id or page_start (and optionally page_end).",
            ToolErrorCode.INVALID_ARGUMENTS,
        )

    def _around_chunk(self, ctx: ToolContext, services: ToolServices, chunk_id: str) -> ToolResult:
        window = ctx.window
        for volume in window.volumes:
            bounds = window.bounds(volume.id)
            if bounds is None:
                continue
            between = services.chunks.chunks_between(volume.id, *bounds)
            chunk = _find_chunk([c for c in between if window.cut(c) is not None], chunk_id)
            if chunk is None:
                continue
            span = window.clip(
                volume.id, max(0, chunk.char_start - CONTEXT_CHARS), chunk.char_end + CONTEXT_CHARS
            )
            if span is None:
                break
            span = _whole_sentences(ctx, services, volume.id, span)
            return _text_result(ctx, services, *span, truncated=span[1] < chunk.char_end,
                                volume=volume)  # fmt: skip
        return ToolResult.fail(
            f"No passage {chunk_id!r} in the part of the book the reader has reached.",
            ToolErrorCode.NOT_FOUND,
        )

    def _pages(
        self, ctx: ToolContext, services: ToolServices, first_label: str, last_label: str
    ) -> ToolResult:
        book = ctx.book
        first, last = book.page_by_label(first_label), book.page_by_label(last_label)
        if first is None or last is None:
            missing = first_label if first is None else last_label
            return ToolResult.fail(
                f"The book has no page {missing} (pages 1-{book.page_count}).",
                ToolErrorCode.INVALID_ARGUMENTS,
            )
        if ctx.window.unread_reason(book.id, first.char_start) is Unread.PAST_POSITION:
            return ToolResult.fail(
                f"Page {first.label} is past the reader's position "
                f"({ctx.book.describe_position()}): "
                "it cannot be shown. Ask only about pages already read.",
                ToolErrorCode.NOT_ALLOWED,
            )
        first, last = (first, last) if first.number <= last.number else (last, first)
        if last.char_end <= ctx.start:
            return ToolResult.fail(
                f"Page {last.label} is front matter (introductions, prefaces, contents), which "
                "counts as unread until the reader has finished the book: it cannot be shown.",
                ToolErrorCode.NOT_ALLOWED,
            )
        last, capped = _cap_pages(book, first, last)
        span = ctx.window.clip(book.id, first.char_start, last.char_end)
        if span is None:
            return ToolResult.fail(
                f"Pages {first.label}-{last.label} are front or back matter (introductions, "
                "notes), which counts as unread until the reader has finished the book: they "
                "cannot be shown.",
                ToolErrorCode.NOT_ALLOWED,
            )
        return _text_result(ctx, services, *span, truncated=capped or span[1] < last.char_end)


def _find_chunk(chunks: list[Chunk], chunk_id: str) -> Chunk | None:
    return next((c for c in chunks if c.id == chunk_id), None)


def _cap_pages(book: Book, first: Page, last: Page) -> tuple[Page, bool]:
    if last.number - first.number < MAX_PAGES:
        return last, False
    return book.pages[first.number - 1 + MAX_PAGES - 1], True


def _whole_sentences(
    ctx: ToolContext, services: ToolServices, book_id: str, span: tuple[int, int]
) -> tuple[int, int]:
    """``span`` widened to whole sentences at both ends, by at most ``SENTENCE_REACH``
    characters each, never outside what the reader has read (else ``span`` as it is)."""
    window = ctx.window
    wider = window.clip(book_id, max(0, span[0] - SENTENCE_REACH), span[1] + SENTENCE_REACH)
    if wider is None or not (wider[0] <= span[0] and span[1] <= wider[1]):
        return span
    text = services.books.get_text(book_id, *wider)
    sentences = [(wider[0] + a, wider[0] + b) for a, b in sentence_spans(text)]
    start = next((a for a, b in sentences if a <= span[0] < b), span[0])
    end = next((b for a, b in sentences if a < span[1] <= b), span[1])
    return (start, end) if window.allows(book_id, start, end) else span


def _text_result(
    ctx: ToolContext,
    services: ToolServices,
    start: int,
    end: int,
    *,
    truncated: bool,
    volume: Book | None = None,
) -> ToolResult:
    """The text of ``[start, end)`` of ``volume`` (default: the book), which the caller took
    from the window (``clip``): checked against it once more before any text is read."""
    book = volume or ctx.book
    if not ctx.window.allows(book.id, start, end):
        return ToolResult.fail(
            "That part of the book lies outside what the reader has read.",
            ToolErrorCode.NOT_ALLOWED,
        )
    text = services.books.get_text(book.id, start, end)
    first, last = book.page_label(start), book.page_label(max(start, end - 1))
    cut_by_position = book.id == ctx.book.id and ctx.limit is not None and end >= ctx.limit
    other = book.id != ctx.book.id
    passage = Passage(
        None, _chapter(book, start), first, last, start, end, text,
        book_id=book.id if other else None, volume=book.title if other else None,
        breaks=page_breaks(book, start, end), chapters=chapter_breaks(book, start, end),
    )  # fmt: skip
    data = PassageText(passage, ctx.book.describe_position(), truncated or cut_by_position)
    return ToolResult.ok(data, summary=f"p. {passage.pages} ({len(text)} chars)")


class ListChaptersTool(BaseTool):
    name = LIST_CHAPTERS
    description = "The chapters reached, with their first pages."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(self, ctx: ToolContext, services: ToolServices, **kwargs: Any) -> ToolResult:
        book = ctx.book
        reached = ctx.window.chapters()
        chapters = tuple(
            ChapterEntry(c.index, c.title, book.page_label(c.char_start)) for c in reached
        )
        note = None if book.chapters else "This book has no chapter structure."
        data = ChapterList(chapters, ctx.book.describe_position(), note)
        return ToolResult.ok(data, summary=f"{len(chapters)} chapter(s)")


def book_tools() -> list[BaseTool]:
    """The tools offered to the model in a conversation about a book."""
    return [SearchBookTool(), ReadPassageTool(), ListChaptersTool()]
