"""Structured citations of an answer, derived from the passages the tools actually returned in the
turn (never from the model's say-so): those the answer quotes or whose page it cites, else the top
results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from folio.domain.conversations import Source
from folio.domain.passages import Passage, passages_in

TOP_SOURCES = 3
QUOTE_CHARS = 200
MIN_QUOTE_CHARS = 12
_QUOTED = re.compile(r"[\"“]([^\"”]{" + str(MIN_QUOTE_CHARS) + r",})[\"”]")
_PAGE_CITE = re.compile(r"\bpp?\.\s*([0-9ivxlcdm]+)(?:\s*[-–]\s*([0-9ivxlcdm]+))?", re.I)


def select_citations(
    answer: str, passages: Iterable[Passage], *, top: int = TOP_SOURCES
) -> tuple[Source, ...]:
    """Sources for ``answer`` among ``passages``: the quoted ones in the order the answer quotes
    them, then those whose page it cites in the order they were returned."""
    candidates = _unique(passages)
    if not candidates:
        return ()
    quotes = [_normalise(q) for q in _QUOTED.findall(answer)]
    pages = _cited_pages(answer)
    chosen: list[tuple[int, Source]] = []
    for order, passage in enumerate(candidates):
        text = _normalise(passage.text)
        quote = next((q for q in quotes if q in text), None)
        if quote is not None or _cites(passage, pages):
            rank = quotes.index(quote) if quote is not None else len(quotes) + order
            chosen.append((rank, _source(passage, quote)))
    if not chosen:
        return tuple(_source(p, None) for p in candidates[:top])
    return tuple(source for _, source in sorted(chosen, key=lambda pair: pair[0]))


def used_passages(answer: str, passages: Iterable[Passage]) -> list[Passage]:
    """The passages ``answer`` used, in the order returned: each one it quotes, and for each page
    it cites, the first passage on that page (a page cite names one passage, not every chunk that
    shares the page)."""
    candidates = _unique(passages)
    quotes = [_normalise(q) for q in _QUOTED.findall(answer)]
    used = {i for i, p in enumerate(candidates) if any(q in _normalise(p.text) for q in quotes)}
    for page in _cited_pages(answer):
        first = next((i for i, p in enumerate(candidates) if _cites(p, {page})), None)
        if first is not None:
            used.add(first)
    return [candidates[i] for i in sorted(used)]


def _unique(passages: Iterable[Passage]) -> list[Passage]:
    seen: set[tuple[str | None, int, int]] = set()
    out = []
    for p in passages:
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _cited_pages(answer: str) -> set[str]:
    pages: set[str] = set()
    for first, last in _PAGE_CITE.findall(answer):
        pages.add(first.lower())
        if last and first.isdigit() and last.isdigit() and int(last) - int(first) < 50:
            pages.update(str(n) for n in range(int(first), int(last) + 1))
        elif last:
            pages.add(last.lower())
    return pages


def _cites(passage: Passage, pages: set[str]) -> bool:
    if not pages:
        return False
    first, last = passage.page_start, passage.page_end
    if first.isdigit() and last.isdigit():
        return any(p.isdigit() and int(first) <= int(p) <= int(last) for p in pages)
    return first.lower() in pages or last.lower() in pages


def _source(passage: Passage, quote: str | None) -> Source:
    text = " ".join(passage.text.split())
    excerpt = quote if quote is not None else _excerpt(text)
    return Source(
        chunk_id=passage.chunk_id or "",
        chapter=passage.chapter,
        page_start=passage.page_start,
        page_end=passage.page_end,
        char_start=passage.char_start,
        char_end=passage.char_end,
        quote=_original_case(text, excerpt) if quote is not None else excerpt,
        score=passage.score,
    )


def _excerpt(text: str) -> str:
    if len(text) <= QUOTE_CHARS:
        return text
    return text[:QUOTE_CHARS].rsplit(" ", 1)[0] + "…"


def _original_case(text: str, lowered: str) -> str:
    i = text.lower().find(lowered)
    return text[i : i + len(lowered)] if i >= 0 else lowered


def sources_of(payloads: Iterable[object]) -> list[Passage]:
    """All passages the tool results of a turn carried, in order."""
    return [p for payload in payloads for p in passages_in(payload)]
