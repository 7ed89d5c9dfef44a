"""Search within one book, bounded by the reader's position: the ``BookSearcher`` use case.

Invariant: a hit never shows text at or past ``book.position.char_offset``. The index already
filters and cuts there; this use case cuts again (cheaply) so a faulty index cannot leak, and takes
its page labels and snippet from the cut text only.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from folio.domain.books import Book, Chunk, SearchHit
from folio.domain.ports import ChunkIndex, Embedder
from folio.domain.search import RankedChunk, query_terms

SNIPPET_WORDS = 40
_TOKEN = re.compile(r"\S+")


class SearchBook:
    """Implements ``BookSearcher``: embed the query, run the hybrid index up to the reading
    position, add page labels and a snippet."""

    def __init__(
        self, index: ChunkIndex, embedder: Embedder, *, snippet_words: int = SNIPPET_WORDS
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._snippet_words = snippet_words

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        """The ``k`` passages of ``book`` most relevant to ``query`` that the reader has reached."""
        if not query.strip() or k <= 0:
            return []
        vector = self._embedder.embed([query])[0]
        limit = book.position.char_offset
        ranked = self._index.search(book.id, query, vector, k=k, max_char_offset=limit)
        hits = []
        for result in ranked:
            chunk = result.chunk.cut_at(limit)
            if chunk is not None and chunk.text:
                hits.append(self._hit(book, chunk, result, query))
        return hits

    def vector_coverage(self, book: Book) -> tuple[int, int]:
        """(passages with a vector, all passages): below 100% while an import is still embedding;
        the rest are found by keywords only."""
        return self._index.vector_coverage(book.id)

    def _hit(self, book: Book, chunk: Chunk, result: RankedChunk, query: str) -> SearchHit:
        first, last = page_labels(book, chunk)
        return SearchHit(
            chunk=chunk,
            score=result.score,
            snippet=best_window(chunk.text, query, words=self._snippet_words),
            page_label_start=first,
            page_label_end=last,
            lexical_rank=result.lexical_rank,
            vector_rank=result.vector_rank,
            similarity=result.similarity,
        )


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


class _Token(NamedTuple):
    start: int
    end: int
    matches: bool


def best_window(text: str, query: str, *, words: int = SNIPPET_WORDS) -> str:
    """The ``words``-word window of ``text`` holding the most query words (the earliest on ties),
    on one line, with "…" where the window cuts the text."""
    tokens = _tokens(text, set(query_terms(query)))
    if not tokens:
        return ""
    if len(tokens) <= words:
        return " ".join(text[tokens[0].start : tokens[-1].end].split())
    best_start, best_score = 0, -1
    score = sum(t.matches for t in tokens[:words])
    for start in range(len(tokens) - words + 1):
        if start:
            score += tokens[start + words - 1].matches - tokens[start - 1].matches
        if score > best_score:
            best_start, best_score = start, score
    best_start = _centred(tokens, best_start, words)
    window = tokens[best_start : best_start + words]
    snippet = " ".join(text[window[0].start : window[-1].end].split())
    prefix = "…" if best_start > 0 else ""
    suffix = "…" if best_start + words < len(tokens) else ""
    return f"{prefix}{snippet}{suffix}"


def _centred(tokens: list[_Token], start: int, words: int) -> int:
    """Shift a window so that the matches it holds sit in its middle, not at an edge."""
    hits = [i for i in range(start, start + words) if tokens[i].matches]
    if not hits:
        return start
    slack = words - 1 - (hits[-1] - hits[0])
    return max(0, min(hits[0] - slack // 2, len(tokens) - words))


def _tokens(text: str, terms: set[str]) -> list[_Token]:
    pattern = _terms_pattern(terms)
    hits = [m.start() for m in pattern.finditer(text)] if pattern else []
    tokens = []
    for m in _TOKEN.finditer(text):
        i = bisect.bisect_left(hits, m.start())
        tokens.append(_Token(m.start(), m.end(), i < len(hits) and hits[i] < m.end()))
    return tokens


def _terms_pattern(terms: set[str]) -> re.Pattern[str] | None:
    """Words matching a query term, with a crude stemmer: a term of 4+ letters matches any word
    sharing its first ``max(4, len - 2)`` letters ("whales"/"whale", "hunting"/"hunted"); a
    shorter term matches only itself."""
    if not terms:
        return None
    parts = sorted(
        (re.escape(t[: max(4, len(t) - 2)]) + r"\w*" if len(t) >= 4 else re.escape(t) + r"\b")
        for t in terms
    )
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + ")", re.IGNORECASE)
