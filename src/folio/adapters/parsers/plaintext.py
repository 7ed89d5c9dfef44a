"""Plain-text books: decoding, Project Gutenberg boilerplate, title/author, chapter headings.

Invariant: the text is decoded once (UTF-8 without BOM, else the detected encoding), newlines are
``\\n``, and Gutenberg header/footer lines are gone when their ``*** START/END OF`` markers exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import charset_normalizer

from folio.adapters.parsers.headings import find_headings
from folio.adapters.parsers.structure import (
    build_parsed_book,
    corrupt,
    normalise_newlines,
    strip_illustrations,
)
from folio.domain.books import BookFormat, ParsedBook
from folio.domain.chapter_labels import label_parts

_START = re.compile(r"^\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M | re.I)
_END = re.compile(r"^\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M | re.I)
_FIELD = r"^{name}:[ \t]*(?P<value>\S.*)$"
_BRACKETED = re.compile(r"^\[(?P<title>.+?) by (?P<author>.+?)(?:\s+\d{4})?\]$")
_BY = re.compile(r"^by\s+(?P<author>.+)$", re.I)


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 (BOM stripped) when valid, else the encoding charset-normalizer finds."""
    if b"\x00" in data[:8192]:
        raise corrupt(path, "it is a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    best = charset_normalizer.from_bytes(data).best()
    if best is None:
        raise corrupt(path, "its text encoding could not be recognised")
    return str(best).lstrip("\ufeff")


def _field(header: str, name: str) -> str | None:
    m = re.search(_FIELD.format(name=name), header, re.M | re.I)
    return m.group("value").strip() if m else None


def strip_gutenberg(text: str) -> tuple[str, str | None, str | None]:
    """The text between the Gutenberg START/END markers, with the header's Title and Author."""
    start = _START.search(text)
    if start is None:
        return text, None, None
    header = text[: start.start()]
    end = _END.search(text, start.end())
    body = text[start.end() : end.start() if end else len(text)]
    return body.strip("\n") + "\n", _field(header, "Title"), _field(header, "Author")


def guess_title_author(text: str) -> tuple[str | None, str | None]:
    """From NLTK's "[Title by Author 1851]" first line, or a title page: up to four title lines,
    then "by Author" on one line or "by" alone over the author's line."""
    lines = [line.strip() for line in text[:3000].split("\n") if line.strip()][:10]
    if not lines:
        return None, None
    if m := _BRACKETED.match(lines[0]):
        return m.group("title"), m.group("author")
    if lines[0].startswith("[") and lines[0].endswith("]"):
        return lines[0][1:-1], None
    for k, line in enumerate(lines[1:5], start=1):
        author = None
        if m := _BY.match(line):
            author = m.group("author")
        elif line.lower() == "by" and k + 1 < len(lines):
            author = lines[k + 1]
        if author is None or not _looks_like_a_name(author):
            continue
        title = "\n".join(lines[:k])
        if len(title) > 120:
            return None, None
        return title, author
    return None, None


def _looks_like_a_name(text: str) -> bool:
    """An author line: starts with a capital, a few words, no division heading ("by the sea I
    sat" in a poem, "Chapter 2" in a contents list are not authors)."""
    words = text.split()
    return (
        text[:1].isupper()
        and 1 <= len(words) <= 8
        and len(text) <= 80
        and not label_parts(text)
        and words[0].lower().strip(".:") not in {"contents", "chapter", "preface", "introduction"}
    )


def parse_plain_text(path: Path, text: str) -> ParsedBook:
    """A ``ParsedBook`` from already decoded text (also used for text extracted elsewhere)."""
    body, title, author = strip_gutenberg(normalise_newlines(text))
    body = strip_illustrations(body)
    guessed_title, guessed_author = guess_title_author(body)
    return build_parsed_book(
        path,
        body,
        chapters=find_headings(body),
        title=title or guessed_title,
        author=author or guessed_author,
    )


class PlainTextParser:
    formats: tuple[BookFormat, ...] = (BookFormat.TXT,)

    def parse(self, path: Path) -> ParsedBook:
        return parse_plain_text(path, decode_text(path, path.read_bytes()))
