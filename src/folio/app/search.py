"""Search what the reader has read: the ``BookSearcher`` use case.

Invariant: a hit is text inside the reading window (``folio.domain.window``): the book up to its
position without its unread front and back matter, and the earlier volumes of its series. The
index filters by the window's bounds for each volume; this use case cuts each hit by the window
again (cheaply, so a faulty index cannot leak), and takes its page labels and snippet from the cut
text only.
"""

from __future__ import annotations

from folio.domain.books import Book, Chunk, SearchHit
from folio.domain.ports import BookSearcher, ChunkIndex, Embedder
from folio.domain.search import (
    SNIPPET_WORDS,
    RankedChunk,
    best_window,
    phrase_key,
    quoted_phrases,
)
from folio.domain.window import ReadingWindow

PHRASE_CANDIDATES = 30  # passages read to find one holding a quoted phrase


class SearchBook:
    """Implements ``BookSearcher``: embed the query, run the hybrid index up to the reading
    position, add page labels and a snippet. A phrase the query quotes ('"two years"') is
    searched as written: the passages holding it, in the hybrid's order, come before the rest."""

    def __init__(
        self, index: ChunkIndex, embedder: Embedder, *, snippet_words: int = SNIPPET_WORDS
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._snippet_words = snippet_words

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]:
        """The ``k`` passages most relevant to ``query`` that the reader has read: in ``book``,
        and in the earlier volumes of its series when ``window`` (``book``'s) names them."""
        if not query.strip() or k <= 0:
            return []
        if window is None or window.book.id != book.id:
            window = ReadingWindow(book)
        vector = self._embedder.embed([query])[0]
        phrases = [phrase_key(p) for p in quoted_phrases(query)]
        wanted = max(k, PHRASE_CANDIDATES) if phrases else k
        hits = []
        for volume in window.volumes:
            bounds = window.bounds(volume.id)
            if bounds is None:
                continue
            ranked = self._index.search(
                volume.id, query, vector, k=wanted, min_char_offset=bounds[0],
                max_char_offset=bounds[1],
            )  # fmt: skip
            for result in ranked:
                chunk = window.cut(result.chunk)
                if chunk is not None:
                    hits.append(self._hit(window, volume, chunk, result, query))
        # one ranking: each volume's fused scores are reciprocal ranks, comparable across volumes;
        # a passage holding a phrase the query quotes comes first (searched as an exact phrase)
        hits.sort(key=lambda h: -h.score)
        if phrases:
            hits.sort(key=lambda h: not any(p in phrase_key(h.chunk.text) for p in phrases))
        return hits[:k]

    def vector_coverage(self, book: Book) -> tuple[int, int]:
        """(passages with a vector, all passages): below 100% while an import is still embedding;
        the rest are found by keywords only."""
        return self._index.vector_coverage(book.id)

    def _hit(
        self, window: ReadingWindow, book: Book, chunk: Chunk, result: RankedChunk, query: str
    ) -> SearchHit:
        first, last = page_labels(book, chunk)
        return SearchHit(
            volume=window.volume_name(book.id),
            chunk=chunk,
            score=result.score,
            snippet=best_window(chunk.text, query, words=self._snippet_words),
            page_label_start=first,
            page_label_end=last,
            lexical_rank=result.lexical_rank,
            vector_rank=result.vector_rank,
            similarity=result.similarity,
        )


class WindowSearcher:
    """A ``BookSearcher`` bound to one reading window: a search of the window's book (at the
    window's position) covers the whole window, the earlier volumes of its series included; any
    other search is bounded by its own book's window."""

    def __init__(self, inner: BookSearcher, window: ReadingWindow) -> None:
        self._inner = inner
        self.window = window

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]:
        mine = self.window
        if window is None and book.id == mine.book.id and book.position == mine.book.position:
            window = mine
        if window is None or not (window.earlier or window.whole):
            return self._inner.search(book, query, k=k)
        return self._inner.search(book, query, k=k, window=window)


def page_labels(book: Book, chunk: Chunk) -> tuple[str, str]:
    """Labels of the first and last page of ``chunk``. A chunk cut at the reading position ends on
    the page holding its last visible character, never on a later one."""
    if not book.pages:
        return str(chunk.page_start), str(chunk.page_end)
    first = _label(book, chunk.page_start)
    last_ordinal = chunk.page_end
    if chunk.char_end > chunk.char_start:
        last_ordinal = min(last_ordinal, book.page_at(chunk.char_end - 1).number)
    return first, _label(book, max(last_ordinal, chunk.page_start))


def _label(book: Book, ordinal: int) -> str:
    if 1 <= ordinal <= len(book.pages):
        return book.pages[ordinal - 1].label
    return str(ordinal)
