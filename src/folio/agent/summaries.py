"""Each chapter's most central sentences for the recap tool: the summary stored with the book at
import (``folio.domain.summary``), read once per process and kept; a chapter it does not cover
(read only in part, or a book imported before summaries were stored) is ranked from its read text.

Invariant: a chapter read in part is ranked from its read part alone and every sentence returned
lies inside the read ``[start, end)`` it was asked about; a stored ranking (of whole chapters) is
used only for a chapter read to its end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from folio.domain.books import Book, Chapter
from folio.domain.ports import BookRepository, Embedder

if TYPE_CHECKING:  # numpy is loaded by the first recap, not by every command that has tools
    from folio.domain.summary import Ranked, StorySummary

# Characters of chapters without a stored ranking embedded in one call (about four chapters of a
# novel: a book imported before summaries costs a second or two a call, not a minute); past it,
# TF-IDF ranks them, until a later call has embedded them (whole chapters are kept).
LIVE_CHARS = 40_000


class StorySummaries:
    """Chapter rankings of books: stored ones read once, live ones of whole chapters kept."""

    def __init__(
        self, embedder: Embedder | None = None, *, keep: int = 8, live_chars: int = LIVE_CHARS
    ) -> None:
        self._embedder = embedder
        self._keep = keep
        self._live_chars = live_chars
        self._stored: dict[tuple[str, str], StorySummary | None] = {}
        self._live: dict[tuple[str, str, int], Sequence[Ranked]] = {}

    def stored(self, book: Book, books: BookRepository) -> StorySummary | None:
        """The summary kept with ``book`` (None: imported before summaries, or another version)."""
        from folio.domain.summary import SUMMARY_INDEX, StorySummary

        key = (book.id, book.content_hash)
        if key not in self._stored:
            if len(self._stored) >= self._keep:
                self._stored.pop(next(iter(self._stored)))
            self._stored[key] = StorySummary.from_json(books.chapter_recap(book.id, SUMMARY_INDEX))
        return self._stored[key]

    def ranked(
        self, book: Book, reads: Sequence[tuple[Chapter, int, int]], books: BookRepository
    ) -> list[list[Ranked]]:
        """For each ``(chapter, start, end)`` read of ``book``: its best sentences inside
        ``[start, end)``, most central first."""
        from folio.domain.summary import Ranked, rank_chapter

        summary = self.stored(book, books)
        room = self._live_chars
        out = []
        for chapter, start, end in reads:
            whole = start == chapter.char_start and end == book.chapter_end(chapter)
            key = (book.id, book.content_hash, chapter.index)
            kept: Sequence[Ranked] | None = None
            if whole:
                kept = summary.chapters.get(chapter.index) if summary else None
                kept = self._live.get(key) if kept is None else kept
            if kept is None:
                embed = self._embedder.embed if self._embedder and room > 0 else None
                room -= end - start
                text = books.get_text(book.id, start, end)
                kept = [
                    Ranked(start + r.start, start + r.end, r.weight)
                    for r in rank_chapter(text, 0, len(text), embed)
                ]
                if whole and embed is not None:
                    if len(self._live) >= 64 * self._keep:
                        self._live.pop(next(iter(self._live)))
                    self._live[key] = kept
            out.append([r for r in kept if start <= r.start and r.end <= end])
        return out
