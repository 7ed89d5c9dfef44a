"""Markdown books: plain readable text (no markup), chapters from headings, metadata from the
YAML front matter.

Each block (heading, paragraph, list item, quote line, code block) becomes a paragraph of the text,
separated by blank lines; inline markup (emphasis, links, images) keeps only its words.

Invariant: chapter offsets index the rendered plain text, not the Markdown source.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree
from markdown_it import MarkdownIt
from markdown_it.token import Token

from folio.adapters.parsers.html_text import extract_text, parse_html_document
from folio.adapters.parsers.plaintext import decode_text
from folio.adapters.parsers.structure import (
    build_parsed_book,
    chapters_from_headings,
    collapse_spaces,
    normalise_newlines,
)
from folio.domain.books import BookFormat, ParsedBook

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_YAML_FIELD = re.compile(r"^(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.+?)\s*$", re.M)
PARAGRAPH_SEP = "\n\n"


def split_front_matter(source: str) -> tuple[str, dict[str, str]]:
    """The Markdown without its leading ``---`` YAML block, and that block's ``key: value``s."""
    m = _FRONT_MATTER.match(source)
    if m is None:
        return source, {}
    fields = {
        f.group("key").lower(): f.group("value").strip().strip("\"'")
        for f in _YAML_FIELD.finditer(m.group("body"))
    }
    return source[m.end() :], fields


def _inline_text(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" " if child.type == "softbreak" else "\n")
        elif child.type == "image":
            parts.append(_inline_text(child))
    return "".join(parts)


def _html_block_text(html: str) -> str:
    """The readable words of a raw HTML block: scripts, styles and other non-content elements
    are dropped, exactly as in an HTML book."""
    try:
        return extract_text(parse_html_document(html.encode("utf-8"))).text
    except (etree.LxmlError, ValueError):  # not parseable as HTML: keep no markup, no code
        return ""


def render(source: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Plain text and ``(level, char_start, title)`` headings of a Markdown document."""
    paragraphs: list[str] = []
    headings: list[tuple[int, int, str]] = []
    length = 0
    level: int | None = None
    for token in MarkdownIt("commonmark").enable("table").parse(source):
        if token.type == "heading_open":
            level = int(token.tag[1])
            continue
        if token.type == "inline":
            text = "\n".join(collapse_spaces(line) for line in _inline_text(token).split("\n"))
        elif token.type in ("fence", "code_block"):
            text = token.content.rstrip("\n")
        elif token.type == "html_block":
            text = _html_block_text(token.content)
        else:
            continue
        if not text.strip():
            continue
        start = length + (len(PARAGRAPH_SEP) if paragraphs else 0)
        if level is not None:
            headings.append((level, start, text))
            level = None
        paragraphs.append(text)
        length = start + len(text)
    return PARAGRAPH_SEP.join(paragraphs), headings


class MarkdownParser:
    formats: tuple[BookFormat, ...] = (BookFormat.MARKDOWN,)

    def parse(self, path: Path) -> ParsedBook:
        source = normalise_newlines(decode_text(path, path.read_bytes()))
        body, meta = split_front_matter(source)
        text, headings = render(body)
        top = [h for h in headings if h[0] == 1]
        title = meta.get("title") or (top[0][2] if len(top) == 1 else None)
        return build_parsed_book(
            path,
            text,
            chapters=chapters_from_headings(headings, book_title=title),
            title=title,
            author=meta.get("author"),
        )
