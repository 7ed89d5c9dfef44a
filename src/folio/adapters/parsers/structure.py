"""Shared building blocks of the parsers: newline normalisation, synthetic pages, the final checks.

Invariant: ``build_parsed_book`` returns pages that partition ``[0, len(text))`` (contiguous, in
order, none empty) and chapters sorted by ``char_start`` inside the text, indexed from 1; an empty
text raises ``IngestError(EMPTY)``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from folio.adapters.parsers.titles import tidy_author, tidy_label, tidy_title
from folio.domain.books import Chapter, Page, ParsedBook, SectionKind
from folio.domain.chapter_labels import label_parts, parse_reference
from folio.domain.errors import IngestError, IngestErrorCode
from folio.domain.sections import is_matter_heading, section_kind

PAGE_WORDS = 300  # a synthetic page closes at the first paragraph break after this many words
PAGE_MAX_WORDS = 450  # ...or at a word boundary when a paragraph runs on past this many

_WORD = re.compile(r"\S+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")


_ILLUSTRATION_MARKUP = re.compile(
    r"\[\s*Illustrations?\b(?::(?P<caption>(?:[^\[\]]|\[[^\[\]]{0,500}\]){0,2000}))?\]", re.I
)


def strip_illustrations(text: str) -> str:
    """The text without Gutenberg's illustration markup ("[Illustration]", "[Illustration: A
    caption]"): it is no part of the story and must never reach a passage, a quote or an answer.
    A heading inside the markup ("[Illustration: Chapter I.]", "[Illustration: List of
    Illustrations.]") is kept, on its own line."""

    def keep_headings(m: re.Match[str]) -> str:
        lines = [line.strip() for line in (m.group("caption") or "").split("\n")]
        kept = [
            line
            for line in lines
            if (parse_reference(line.strip(" .:")).parts and label_parts(line) and len(line) <= 40)
            or is_matter_heading(line)
        ]
        return "\n\n".join(kept)

    return _ILLUSTRATION_MARKUP.sub(keep_headings, text)


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def collapse_spaces(text: str) -> str:
    """One space for every run of horizontal whitespace, trimmed."""
    return _SPACES.sub(" ", text).strip()


def synthetic_pages(text: str) -> tuple[Page, ...]:
    """Pages of about ``PAGE_WORDS`` words, cut at a paragraph break (or, for a paragraph that runs
    on, at a word boundary). Deterministic from the text alone."""
    paragraph_starts = {m.end() for m in _PARAGRAPH_BREAK.finditer(text)}
    cuts: list[int] = [0]
    words = 0
    for match in _WORD.finditer(text):
        start = match.start()
        if words >= PAGE_MAX_WORDS or (words >= PAGE_WORDS and start in paragraph_starts):
            cuts.append(start)
            words = 0
        words += 1
    cuts.append(len(text))
    return pages_from_cuts(cuts)


def pages_from_cuts(cuts: Sequence[int], labels: Sequence[str] | None = None) -> tuple[Page, ...]:
    """Pages between consecutive cut offsets (``cuts[0] == 0``, ``cuts[-1] == len(text)``)."""
    spans = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    return tuple(
        Page(number=i, label=labels[i - 1] if labels else str(i), char_start=a, char_end=b)
        for i, (a, b) in enumerate(spans, start=1)
    )


def make_chapters(entries: Iterable[tuple[int, str]]) -> tuple[Chapter, ...]:
    """Chapters from ``(char_start, title)`` pairs: sorted, one per start offset, indexed from 1,
    each with its kind (story, or front/back matter) read from its title."""
    seen: dict[int, str] = {}
    for start, title in entries:
        clean = tidy_label(collapse_spaces(title))
        if clean and start not in seen:
            seen[start] = clean
    ordered = sorted(seen.items())
    return tuple(
        Chapter(index=i, title=t, char_start=s, kind=section_kind(t))
        for i, (s, t) in enumerate(ordered, 1)
    )


_LINE = re.compile(r"^[ \t]*(?P<text>\S[^\n]*?)[ \t]*$", re.M)


def matter_headings(text: str, chapters: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """``(char_start, title)`` of the front matter headings ("PREFACE.", "Introduction", "List of
    Illustrations") standing alone on their line before the first story chapter: editors'
    prefaces there are not chapters, yet they must be known to be kept from an early reader."""
    story = [s for s, t in chapters if section_kind(t) is SectionKind.STORY]
    if not story:
        return []
    end = min(story)
    found = []
    for m in _LINE.finditer(text, 0, end):
        before, after = text[max(0, m.start() - 2) : m.start()], text[m.end() : m.end() + 2]
        alone = (m.start() == 0 or before == "\n\n") and after.startswith("\n\n")
        entry = _TOC_ENTRY.search(m.group("text"))  # "Dedication      vii": a contents line
        if alone and not entry and is_matter_heading(m.group("text")):
            title = m.group("text").strip("[]_* ").rstrip(".")
            found.append(
                (m.start("text"), _ILLUSTRATION_PREFIX.sub("", title).rstrip(".") or title)
            )
    return found


_TOC_ENTRY = re.compile(r"\S\s{3,}\S|[\s.]+(?:\d+|[ivxlcdm]+)$", re.I)
_ILLUSTRATION_PREFIX = re.compile(r"^illustration\s*:\s*", re.I)


def build_parsed_book(
    path: Path,
    text: str,
    *,
    chapters: Iterable[tuple[int, str]] = (),
    pages: tuple[Page, ...] | None = None,
    title: str | None = None,
    author: str | None = None,
    series: tuple[str, float | None] | None = None,
) -> ParsedBook:
    """Checks the text is not empty and assembles the ``ParsedBook`` (default: synthetic pages)."""
    # A NUL (binary debris in a text file) is no character a reader sees, and PostgreSQL cannot
    # store it: a space keeps every offset.
    text = text.replace("\x00", " ")
    title = title.replace("\x00", "") if title else title
    author = author.replace("\x00", "") if author else author
    if not text.strip():
        raise IngestError(
            f"{path.name} contains no readable text", code=IngestErrorCode.EMPTY, path=str(path)
        )
    clean_title = tidy_title(title) if title and title.strip() else None
    clean_author = tidy_author(author) if author and author.strip() else None
    inside = [(s, t) for s, t in chapters if 0 <= s < len(text)]
    return ParsedBook(
        text=text,
        pages=pages if pages is not None else synthetic_pages(text),
        chapters=make_chapters([*inside, *matter_headings(text, inside)]),
        title=clean_title or None,
        author=clean_author or None,
        series=series[0] if series else None,
        series_index=series[1] if series else None,
    )


def corrupt(path: Path, reason: str) -> IngestError:
    """A one-line CORRUPT error naming the file."""
    one_line = collapse_spaces(reason.replace("\n", " "))
    return IngestError(
        f"{path.name} cannot be read: {one_line}", code=IngestErrorCode.CORRUPT, path=str(path)
    )


def chapters_from_headings(
    headings: Sequence[tuple[int, int, str]], *, book_title: str | None = None
) -> list[tuple[int, str]]:
    """``(char_start, title)`` chapters from ``(level, char_start, title)`` headings (levels 1-3).

    A lone top-level heading that is the book's title is not a chapter; the chapters are the
    headings of the highest level that occurs at least twice (or, failing that, every heading).
    """
    usable = [h for h in headings if h[0] <= 3]
    top = [h for h in usable if h[0] == 1]
    if len(top) == 1 and (
        book_title is None or _same_title(top[0][2], book_title) or len(usable) > 1
    ):
        usable = [h for h in usable if h is not top[0]]
    for level in (1, 2, 3):
        at_level = [h for h in usable if h[0] == level]
        if len(at_level) >= 2:
            return [(start, title) for _, start, title in at_level]
    return [(start, title) for _, start, title in usable]


def _same_title(a: str, b: str) -> bool:
    return collapse_spaces(a).casefold() == collapse_spaces(b).casefold()
