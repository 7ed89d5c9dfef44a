"""HTML books: the body's readable text, chapters from h1-h3 headings, title and author from
the head.

Invariant: chapter offsets come from the same extraction that produced the text (``html_text``).
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from folio.adapters.parsers.html_text import (
    extract_text,
    find_meta,
    find_title,
    parse_html_document,
)
from folio.adapters.parsers.plaintext import decode_text
from folio.adapters.parsers.structure import build_parsed_book, chapters_from_headings, corrupt
from folio.domain.books import BookFormat, ParsedBook


class HtmlParser:
    formats: tuple[BookFormat, ...] = (BookFormat.HTML,)

    def parse(self, path: Path) -> ParsedBook:
        source = decode_text(path, path.read_bytes())
        try:
            # The text is decoded already: its own <meta charset> must not re-interpret it.
            root = parse_html_document(source.encode("utf-8"), encoding="utf-8")
        except (etree.ParserError, ValueError) as e:
            raise corrupt(path, f"it is not a readable HTML document ({e})") from e
        extracted = extract_text(root)
        title_heading = next((h for h in extracted.headings if "title" in h.classes), None)
        title = find_title(root) or (title_heading.title if title_heading else None)
        if title is None:
            title = next((h.title for h in extracted.headings if h.level == 1), None)
        headings = [
            (h.level, h.char_start, h.title) for h in extracted.headings if h is not title_heading
        ]
        return build_parsed_book(
            path,
            extracted.text,
            chapters=chapters_from_headings(headings, book_title=title),
            title=title,
            author=find_meta(root, "author") or find_meta(root, "dc.creator"),
        )
