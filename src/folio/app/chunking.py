"""Cutting a parsed book into passages (chunks) for search and citation. Pure: no I/O.

A chunk is a run of whole sentences (about ``target_words`` words) inside one chapter; consecutive
chunks of a chapter share about ``overlap_words`` words so that a passage cut in two is still found
whole. A "sentence" longer than a chunk (verse, lists, text without punctuation) is cut at line
breaks, then at word boundaries.

Invariants, for every chunk ``c`` of ``chunk_book(book_id, parsed)``:
- ``parsed.text[c.char_start:c.char_end] == c.text``, and the text starts and ends with non-space;
- it lies within one chapter (or within the text before the first chapter, with no chapter);
- every word of the text is in a chunk, but for a text before the first chapter of fewer than
  ``MIN_OPENING_WORDS`` words (a title line: no passage);
- ``c.page_start``/``c.page_end`` are the ordinals of the pages of its first and last character;
- it has at most ``max_words`` words (and at most ``max_tokens`` tokens when a counter is given,
  unless one sentence piece alone exceeds it);
- ids are ``f"{book_id}:{ordinal}"`` with ordinals 0, 1, 2... in text order.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from folio.domain.books import Chapter, Chunk, ParsedBook, chunk_id
from folio.domain.sentences import sentence_spans

TokenCounter = Callable[[str], int]

TARGET_WORDS = 200
OVERLAP_WORDS = 30
MAX_WORDS = 220
# words the text before the first chapter needs to be a passage: fewer are a title line ("[Emma
# by Jane Austen 1816]"), which a search ranked among the best for any question naming its hero
# ("Who is Emma?": third; "Who discovers the murder?" in Macbeth: first) for being so short
MIN_OPENING_WORDS = 20
_WORD = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]*\S")


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    words: int
    tokens: int = 0  # model tokens, without the special tokens, when a counter is given


@dataclass(frozen=True, slots=True)
class _Segment:
    start: int
    end: int
    chapter: Chapter | None


@dataclass(frozen=True, slots=True)
class _Limits:
    target: int
    overlap: int
    max_words: int
    token_budget: int | None  # max tokens of a chunk's text, special tokens excluded


def _segments(parsed: ParsedBook) -> Iterator[_Segment]:
    chapters = sorted(parsed.chapters, key=lambda c: c.char_start)
    bounds = [c.char_start for c in chapters] + [len(parsed.text)]
    opening = len(_WORD.findall(parsed.text, 0, bounds[0]))
    if not chapters or opening >= MIN_OPENING_WORDS:
        yield _Segment(0, bounds[0], None)
    for chapter, end in zip(chapters, bounds[1:], strict=True):
        yield _Segment(chapter.char_start, end, chapter)


def _word_pieces(text: str, start: int, end: int, limit: int) -> Iterator[_Unit]:
    """``[start, end)`` cut at word boundaries into pieces of at most ``limit`` words."""
    words = list(_WORD.finditer(text, start, end))
    for i in range(0, len(words), limit):
        group = words[i : i + limit]
        yield _Unit(group[0].start(), group[-1].end(), len(group))


def _split_long(text: str, unit: _Unit, limit: int) -> Iterator[_Unit]:
    """A unit over ``limit`` words cut at line breaks, then at word boundaries."""
    for line in _LINE.finditer(text, unit.start, unit.end):
        start = line.start() + len(line.group()) - len(line.group().lstrip())
        words = len(_WORD.findall(text, start, line.end()))
        if words <= limit:
            yield _Unit(start, line.end(), words)
        else:
            yield from _word_pieces(text, start, line.end(), limit)


def _sentences(text: str, start: int, end: int, limit: int) -> Iterator[_Unit]:
    """Sentence units of ``text[start:end]``, none over ``limit`` words."""
    for unit_start, unit_end in sentence_spans(text, start, end):
        unit = _Unit(unit_start, unit_end, len(_WORD.findall(text, unit_start, unit_end)))
        if unit.words <= limit:
            yield unit
        else:
            yield from _split_long(text, unit, limit)


def _with_tokens(text: str, unit: _Unit, count: Callable[[str], int], budget: int) -> list[_Unit]:
    """The unit with its token count; cut into smaller word pieces while it exceeds ``budget``."""
    tokens = count(text[unit.start : unit.end])
    if tokens <= budget or unit.words <= 1:
        return [_Unit(unit.start, unit.end, unit.words, tokens)]
    limit = max(1, unit.words * budget // tokens)
    pieces = _word_pieces(text, unit.start, unit.end, limit)
    return [p for piece in pieces for p in _with_tokens(text, piece, count, budget)]


def _spans(units: list[_Unit], limits: _Limits) -> Iterator[tuple[int, int]]:
    """``(first, last_exclusive)`` unit ranges of the chunks: greedy packing with overlap."""
    budget = limits.token_budget
    i = 0
    while i < len(units):
        j, words, tokens = i, 0, 0
        while j < len(units) and (
            j == i
            or (
                words < limits.target
                and words + units[j].words <= limits.max_words
                and (budget is None or tokens + units[j].tokens <= budget)
            )
        ):
            words += units[j].words
            tokens += units[j].tokens
            j += 1
        yield i, j
        if j >= len(units):
            return
        k, shared = j, 0
        while k - 1 > i and shared + units[k - 1].words <= limits.overlap:
            k -= 1
            shared += units[k].words
        i = k


def chunk_book(
    book_id: str,
    parsed: ParsedBook,
    *,
    target_words: int = TARGET_WORDS,
    overlap_words: int = OVERLAP_WORDS,
    max_words: int = MAX_WORDS,
    count_tokens: TokenCounter | None = None,
    max_tokens: int = 256,
) -> list[Chunk]:
    """The book's chunks in text order (see the module's invariants).

    Args:
        book_id: the id the chunks belong to (and their ids start with).
        parsed: the parser's output; offsets index ``parsed.text``.
        target_words: a chunk closes once it reaches this many words.
        overlap_words: at most this many words of a chunk's tail open the next chunk.
        max_words: hard cap on a chunk's words.
        count_tokens: optional token count of a text as the embedding model sees it, special
            tokens included (``count_tokens("")`` is their number); chunks then stay within
            ``max_tokens`` so the model reads each passage whole. Wordpiece counts add up over
            whitespace-separated pieces, so each sentence is counted once.
        max_tokens: the model's window, used with ``count_tokens`` (all-MiniLM-L6-v2: 256).
    """
    if not 0 < target_words <= max_words:
        raise ValueError("need 0 < target_words <= max_words")
    text = parsed.text
    page_starts = [p.char_start for p in parsed.pages]
    page_numbers = [p.number for p in parsed.pages]
    special = count_tokens("") if count_tokens else 0  # e.g. [CLS] and [SEP]
    limits = _Limits(
        target_words, overlap_words, max_words, max_tokens - special if count_tokens else None
    )

    def page_of(offset: int) -> int:
        if not page_numbers:
            return 1
        return page_numbers[max(0, bisect.bisect_right(page_starts, offset) - 1)]

    def units_of(segment: _Segment) -> list[_Unit]:
        units = _sentences(text, segment.start, segment.end, target_words)
        if count_tokens is None or limits.token_budget is None:
            return list(units)
        counter, budget = count_tokens, limits.token_budget
        return [
            u
            for unit in units
            for u in _with_tokens(text, unit, lambda t: counter(t) - special, budget)
        ]

    chunks: list[Chunk] = []
    for segment in _segments(parsed):
        units = units_of(segment)
        for first, last in _spans(units, limits):
            start, end = units[first].start, units[last - 1].end
            ordinal = len(chunks)
            chunks.append(
                Chunk(
                    id=chunk_id(book_id, ordinal),
                    book_id=book_id,
                    ordinal=ordinal,
                    text=text[start:end],
                    char_start=start,
                    char_end=end,
                    page_start=page_of(start),
                    page_end=page_of(end - 1),
                    chapter=segment.chapter.title if segment.chapter else None,
                    chapter_index=segment.chapter.index if segment.chapter else None,
                )
            )
    return chunks
