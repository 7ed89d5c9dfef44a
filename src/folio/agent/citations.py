"""Structured citations of an answer, derived from the passages the tools actually returned in the
turn (never from the model's say-so): those the answer quotes or whose page it cites, else the top
results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from folio.domain.conversations import Source
from folio.domain.passages import Passage, passages_in

TOP_SOURCES = 3
QUOTE_CHARS = 200
MIN_QUOTE_CHARS = 12
# a line of the offline answer: - "<a sentence of the book>" (Chapter 3, p. 20), the sentence may
# hold dialogue's own quotes ("“Wentworth was the very name!” ..."); a sentence its own quotation
# marks open and close stands in them alone: - “Compose yourself,” said Clerval. (Chapter 5, p. 46);
# a play's speech follows its speaker's prefix: - Macb. "So foule and faire a day" (Act I, p. 3)
_LISTED = re.compile(
    r'^- (?:[^\s"“]+(?: [^\s"“]+){0,2}\. )?(?:… )?'  # a speaker's prefix; a long one's part
    r'(?:"(.+)"|(“.+”))(?: …)? \([^()\n]*\)(?: \[\d+\])?$',
    re.MULTILINE,
)
_STRAIGHT = re.compile(r'"([^"]{' + str(MIN_QUOTE_CHARS) + r',})"')
_CURLY = re.compile(r"“([^”]{" + str(MIN_QUOTE_CHARS) + r",})”")
_PAGE_CITE = re.compile(r"\bpp?\.\s*([0-9ivxlcdm]+)(?:\s*[-–]\s*([0-9ivxlcdm]+))?", re.I)


def select_citations(
    answer: str,
    passages: Iterable[Passage],
    *,
    top: int = TOP_SOURCES,
    quotes_only: bool = False,
) -> tuple[Source, ...]:
    """Sources for ``answer`` among ``passages``: one per quote, in the order the answer quotes
    them, then one per cited page no quote came from, in the order the answer cites them; the top
    results when it does neither. A quote's source is the quote's own place (its characters, and
    its pages from the passage's own volume: ``Passage.place``, as the offline answer cites it)
    rather than the whole passage it was found in, and a page's source is that page: no source
    names a place the answer did not take from, and none overlaps another.
    ``quotes_only``: an answer that quotes everything it uses (the extractive one): its quotes
    alone; none for "Nothing up to p. 4 mentions Justine"."""
    candidates = _unique(passages)
    if not candidates:
        return ()
    chosen: list[Source] = []
    quoted: list[Passage] = []
    for quote in dict.fromkeys(_normalise(q) for q in _quotes(answer)):
        holding = [p for p in candidates if quote in _normalise(p.sent_text)]  # what it read
        if holding:  # the same words in two places: the one on the page the answer names
            written = _pages_after(answer, quote)
            places = [(p, _narrowed(_source(p, quote), p, quote)) for p in holding]
            passage, source = next(
                (ps for ps in places if any(_on_source_page(ps[1], w) for w in written)), places[0]
            )
            quoted.append(passage)
            chosen.append(source)
    if quotes_only:
        return _without_overlaps(chosen)
    quoted_ranges = {(p.page_start.lower(), p.page_end.lower()) for p in quoted}
    quoted_ranges |= {(s.page_start.lower(), s.page_end.lower()) for s in chosen}
    for first, last in _PAGE_CITE.findall(answer):
        if (first.lower(), (last or first).lower()) in quoted_ranges:
            continue  # a quote's own citation ('"..." (pp. 55-56)'): the quote is its source
        pages = [p for p in _expand(first, last) if not any(_on_source_page(s, p) for s in chosen)]
        cited = next((p for p in candidates if _cites(p, set(pages))), None)
        if cited is not None:  # the cited pages it holds, as one source ("pp. 46-47")
            chosen.append(_on_pages(_source(cited, None), cited, pages))
    if not chosen:
        return tuple(_source(p, None) for p in candidates[:top])
    return _without_overlaps(chosen)


def _narrowed(source: Source, passage: Passage, quote: str) -> Source:
    """``source`` cut to where ``quote`` (normalised) lies in ``passage``: its characters and
    pages. Unchanged when the passage text is not the book's own slice."""
    span = passage.span_of(quote)
    if span is None:
        return source
    place = passage.place(*span)
    return replace(
        source,
        page_start=place.page_start,
        page_end=place.page_end,
        char_start=place.char_start,
        char_end=place.char_end,
    )


def _on_pages(source: Source, passage: Passage, pages: list[str]) -> Source:
    """``source`` cut to the cited ``pages`` of ``passage``, its excerpt taken from them.
    Unchanged when the passage's pages or text are not known to the character."""
    wanted = {p.lower() for p in pages}
    spans = [(a, b) for a, b, label in passage.page_spans() if label.lower() in wanted]
    if not spans or not passage.is_slice:
        return source
    place = passage.place(min(a for a, _ in spans), max(b for _, b in spans))
    text = " ".join(place.sent_text.split())  # what the model was sent of those pages
    if not text or place.shown == ():
        return source
    return replace(
        source,
        page_start=place.page_start,
        page_end=place.page_end,
        char_start=place.char_start,
        char_end=place.char_end,
        quote=_excerpt(text),
    )


def _without_overlaps(sources: list[Source]) -> tuple[Source, ...]:
    """``sources`` less any whose characters overlap an earlier one's (the same words found in
    two overlapping chunks are one place)."""
    kept: list[Source] = []
    for source in sources:
        if not any(source.char_start < k.char_end and k.char_start < source.char_end for k in kept):
            kept.append(source)
    return tuple(kept)


def used_passages(answer: str, passages: Iterable[Passage]) -> list[Passage]:
    """The passages ``answer`` used, in the order returned: each one it quotes, and for each page
    it cites, the first passage on that page (a page cite names one passage, not every chunk that
    shares the page)."""
    candidates = _unique(passages)
    quotes = [_normalise(q) for q in _quotes(answer)]
    used = {
        i for i, p in enumerate(candidates) if any(q in _normalise(p.sent_text) for q in quotes)
    }
    for page in _cited_pages(answer):
        first = next((i for i, p in enumerate(candidates) if _cites(p, {page})), None)
        if first is not None:
            used.add(first)
    return [candidates[i] for i in sorted(used)]


def _quotes(answer: str) -> list[str]:
    """What ``answer`` quotes, in order: each "..." whole (with the dialogue’s “...” inside it, as
    the offline answer quotes a sentence of the book), then “...” outside any "...". A quote
    inside a quote is part of it, never a source of its own."""
    listed = listed_quotes(answer)
    if listed:  # the offline answer's lines: each quotes one sentence, whatever marks it holds
        return listed
    found = [(m.start(), m.end(), m.group(1)) for m in _STRAIGHT.finditer(answer)]
    for m in _CURLY.finditer(answer):
        if not any(start <= m.start() < end for start, end, _ in found):
            found.append((m.start(), m.end(), m.group(1)))
    return [text for _, _, text in sorted(found)]


def listed_quotes(answer: str) -> list[str]:
    """The sentences an extractive answer lists, one per ``- "..." (Chapter 3, p. 20)`` line (a
    sentence standing in its own quotation marks keeps them; a speech after its speaker's
    prefix, ``- Macb. "..." (...)``), in order."""
    return [straight or own for straight, own in _LISTED.findall(answer)]


def _unique(passages: Iterable[Passage]) -> list[Passage]:
    seen: set[tuple[str | None, str | None, int, int]] = set()
    out = []
    for p in passages:
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _cited_pages(answer: str) -> set[str]:
    return {page for first, last in _PAGE_CITE.findall(answer) for page in _expand(first, last)}


def _expand(first: str, last: str) -> list[str]:
    """The pages of a citation ("p. 4": 4; "pp. 12-14": 12, 13, 14; "pp. iv-vi": iv, vi)."""
    if last and first.isdigit() and last.isdigit() and int(last) - int(first) < 50:
        return [str(n) for n in range(int(first), int(last) + 1)]
    return [first.lower(), last.lower()] if last else [first.lower()]


def _pages_after(answer: str, quote: str) -> list[str]:
    """The pages the answer names after ``quote`` (normalised) on its line: '"..." (p. 36)'."""
    found = re.search(r"\s+".join(map(re.escape, quote.split())), answer, re.IGNORECASE)
    if found is None:
        return []
    cite = _PAGE_CITE.search(answer[found.end() :].split("\n", 1)[0])
    return _expand(cite.group(1), cite.group(2) or "") if cite else []


def _on_source_page(source: Source, page: str) -> bool:
    first, last = source.page_start, source.page_end
    if first.isdigit() and last.isdigit() and page.isdigit():
        return int(first) <= int(page) <= int(last)
    return page in (first.lower(), last.lower())


def _cites(passage: Passage, pages: set[str]) -> bool:
    if not pages:
        return False
    first, last = passage.page_start, passage.page_end
    if first.isdigit() and last.isdigit():
        return any(p.isdigit() and int(first) <= int(p) <= int(last) for p in pages)
    return first.lower() in pages or last.lower() in pages


def _source(passage: Passage, quote: str | None) -> Source:
    text = " ".join(passage.text.split())
    excerpt = quote if quote is not None else _excerpt(" ".join(passage.sent_text.split()))
    return Source(
        chunk_id=passage.chunk_id or "",
        chapter=passage.chapter,
        page_start=passage.page_start,
        page_end=passage.page_end,
        char_start=passage.char_start,
        char_end=passage.char_end,
        quote=_original_case(text, excerpt) if quote is not None else excerpt,
        score=passage.score,
        book_id=passage.book_id,
        volume=passage.volume,
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
