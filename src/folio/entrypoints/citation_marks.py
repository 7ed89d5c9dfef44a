"""Where an answer's source numbers go: the one rule every surface follows (the terminal's
``[2]``, the web page's superscript buttons, the ``Sources:`` line of ``/v1``), so that a source
has one number everywhere and two sources never share one.

Source ``n`` (1-based, the order of the turn's citations) is marked once: after the place the
answer quotes it (its closing mark and the page reference that follows: ``"..." (Chapter 1,
p. 16)``), else after its first page reference ("(p. 45)", "pp. 46-47") outside code that no
other source took. A source the answer
neither quotes nor cites by page gets no mark (the Sources line still lists it).

Offsets are in characters (code points) of the answer as stored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_CLOSERS = "\"”’'"
_OPENERS = ('"', "“", "‘", "'")
_PAGE_PARENTHESIS = re.compile(r"\s*\([^()\n]{0,120}\bpp?\.\s*[0-9ivxlcdm]+[^()\n]{0,40}\)", re.I)
# a quote mark that closes a quote: before white space or the end, punctuation between
_CLOSING = re.compile(r"[\"”’'][.,;:!?)]*(?=\s|$)")
_LABEL = re.compile(r"\bpp?\.\s*([0-9ivxlcdm]+)(?:\s*[-–]\s*([0-9ivxlcdm]+))?", re.I)


def citation_marks(answer: str, citations: Sequence[Any]) -> list[tuple[int, int]]:
    """``(offset, n)`` for each source ``n`` the answer quotes or cites by page, in the order of
    the offsets (a source has at most one). ``citations``: anything with ``quote``,
    ``page_start`` and ``page_end`` (a ``Source``, its view)."""
    marks: list[tuple[int, int]] = []
    taken: set[int] = set()
    for n, source in enumerate(citations, 1):
        end = _quote_end(answer, source.quote) if source.quote else None
        if end is None:
            end = _page_reference_end(answer, source, taken=taken)
        if end is not None:
            taken.add(end)
            marks.append((end, n))
    return sorted(marks)


def numbered_answer(answer: str, citations: Sequence[Any]) -> str:
    """``answer`` with each source's number after its place: ``"..." (Chapter 1, p. 16) [2]``,
    the numbers of ``Sources: [1] ...; [2] ...`` and of ``/read N``."""
    out = answer
    for end, n in sorted(citation_marks(answer, citations), key=lambda m: (-m[0], -m[1])):
        out = out[:end] + f" [{n}]" + out[end:]
    return out


def _quote_end(answer: str, quote: str) -> int | None:
    """Where the quote ends in ``answer``, after its closing mark and the page reference that
    follows it; ``None`` when the answer does not quote it (white space may differ)."""
    words = quote.split()
    if not words:
        return None
    every = list(re.finditer(r"\s+".join(re.escape(w) for w in words), answer))
    # the words where they stand quoted, not where another quote's place names them (a quote
    # "The Duel of Dr Hirsch" after "(III. The Duel of Dr Hirsch, p. 40)" of the line before)
    found = next((m for m in every if answer[: m.start()].rstrip().endswith(_OPENERS)), None)
    found = found or next(iter(every), None)
    if found is None:
        return None
    end = found.end()
    while end < len(answer) and answer[end] in _CLOSERS + ".,;!?":
        end += 1
    if end < len(answer) and answer[end].isalnum():  # the quoted text goes on (quotes inside it)
        closing = _CLOSING.search(answer, end)
        end = closing.end() if closing else end
    # the page reference that closes the quote's sentence: '"..." (p. 16)', 'Ahab did (p. 1).'
    line = answer[end:].split("\n", 1)[0]
    reference = _PAGE_PARENTHESIS.search(line)
    if reference and not re.search(r"[.!?]\s", line[: reference.start()]):
        return end + reference.end()
    return end


def _page_reference_end(answer: str, source: Any, *, taken: set[int]) -> int | None:
    """The end of the first page reference that covers one of ``source``'s pages ("p. 33" and
    "pp. 32-34" both cover p. 33) and that no other source took: after its parenthesis ("(Chapter
    5, p. 45)"), or after the pages of a bare one ("later at pp. 46-47;"); none in code."""
    for end, first, last in _page_references(answer):
        if end not in taken and _covers(first, last, source):
            return end
    return None


def _page_references(answer: str) -> list[tuple[int, str, str]]:
    """Each page reference of ``answer`` outside code: where a mark after it goes, its pages."""
    enclosing = [(m.start(), m.end()) for m in _PAGE_PARENTHESIS.finditer(answer)]
    out = []
    for m in _LABEL.finditer(answer):
        if _in_code(answer, m.start()):
            continue
        end = next((b for a, b in enclosing if a <= m.start() < b), m.end())
        out.append((end, m.group(1), m.group(2) or ""))
    return out


def _in_code(answer: str, at: int) -> bool:
    """Inside a code span (an odd number of backticks before it on its line) or a fenced block."""
    line_start = answer.rfind("\n", 0, at) + 1
    fences = sum(1 for line in answer[:line_start].splitlines() if line.lstrip().startswith("```"))
    return fences % 2 == 1 or answer.count("`", line_start, at) % 2 == 1


def _covers(first: str, last: str, source: Any) -> bool:
    lo, hi = first.lower(), (last or first).lower()
    pages = {source.page_start.lower(), source.page_end.lower()}
    if lo.isdigit() and hi.isdigit():
        numbers = [p for p in pages if p.isdigit()]
        return any(int(lo) <= int(p) <= int(hi) for p in numbers) or bool(pages & {lo, hi})
    return bool(pages & {lo, hi})
