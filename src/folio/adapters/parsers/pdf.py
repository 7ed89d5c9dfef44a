"""PDF books, read with pypdf: one ``Page`` per PDF page, labelled with its printed page label.

A running header or footer line repeated on most pages ("Frankenstein   Page 41") is removed from
the text so that it does not split sentences. Chapters come from the PDF outline, else from heading
lines ("Letter 1", "Chapter 5") found as in plain text.

Invariant: page ``n`` of the book is exactly the text of PDF page ``n`` (plus one newline), so a
passage's page is the PDF page it is printed on.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pypdf
from pypdf.errors import FileNotDecryptedError, PdfReadError, PyPdfError

from folio.adapters.parsers.headings import find_headings
from folio.adapters.parsers.plaintext import guess_title_author
from folio.adapters.parsers.structure import (
    build_parsed_book,
    corrupt,
    normalise_newlines,
    pages_from_cuts,
)
from folio.domain.books import BookFormat, ParsedBook

_DIGITS = re.compile(r"\d+")
RUNNING_LINE_SHARE = (
    0.6  # a first/last line repeated (digits aside) on this share of pages is furniture
)


def _page_texts(reader: pypdf.PdfReader) -> list[str]:
    return [normalise_newlines(page.extract_text() or "").strip("\n") for page in reader.pages]


def _running_line(lines: Sequence[str | None]) -> str | None:
    """The digit-insensitive shape of a line repeated on most pages, if any."""
    shapes = Counter(_DIGITS.sub("#", line.strip()) for line in lines if line and line.strip())
    if len(lines) < 3 or not shapes:
        return None
    shape, count = shapes.most_common(1)[0]
    return shape if count >= RUNNING_LINE_SHARE * len(lines) else None


def strip_running_lines(texts: list[str]) -> list[str]:
    """The page texts without a header (first line) or footer (last line) repeated across pages."""
    split = [t.split("\n") for t in texts]
    header = _running_line([lines[0] if lines else None for lines in split])
    footer = _running_line([lines[-1] if lines else None for lines in split])
    out = []
    for lines in split:
        if lines and header and _DIGITS.sub("#", lines[0].strip()) == header:
            lines = lines[1:]
        if lines and footer and _DIGITS.sub("#", lines[-1].strip()) == footer:
            lines = lines[:-1]
        out.append("\n".join(lines).strip("\n"))
    return out


def _outline_chapters(reader: pypdf.PdfReader, page_starts: list[int]) -> list[tuple[int, str]]:
    chapters: list[tuple[int, str]] = []

    def visit(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, list):
                visit(item)
                continue
            page = reader.get_destination_page_number(item)
            if page is not None and 0 <= page < len(page_starts):
                chapters.append((page_starts[page], str(item.title)))

    visit(list(reader.outline))
    return chapters


def _labels(reader: pypdf.PdfReader) -> list[str]:
    labels = list(reader.page_labels)
    if len(labels) != len(reader.pages):
        return [str(n) for n in range(1, len(reader.pages) + 1)]
    return [label or str(n) for n, label in enumerate(labels, start=1)]


def _read(path: Path) -> tuple[pypdf.PdfReader, list[str]]:
    reader = pypdf.PdfReader(path)
    if reader.is_encrypted and not reader.decrypt(""):
        raise FileNotDecryptedError("password protected")
    return reader, _page_texts(reader)


class PdfParser:
    formats: tuple[BookFormat, ...] = (BookFormat.PDF,)

    def parse(self, path: Path) -> ParsedBook:
        # pypdf warns through logging about every recoverable defect; a user needs only our error.
        logging.getLogger("pypdf").setLevel(logging.ERROR)
        try:
            reader, raw_texts = _read(path)
            texts = strip_running_lines(raw_texts)
            starts = [0]
            for t in texts:
                starts.append(starts[-1] + len(t) + 1)
            text = "".join(t + "\n" for t in texts)
            outline = _outline_chapters(reader, starts[:-1])
            labels = _labels(reader)
            meta = reader.metadata
            title = meta.title if meta else None
            author = meta.author if meta else None
        except FileNotDecryptedError as e:
            raise corrupt(path, "it is encrypted with a password") from e
        except (
            PyPdfError,
            PdfReadError,
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
            OSError,
            RecursionError,
            AssertionError,
            ZeroDivisionError,
        ) as e:
            # pypdf raises a variety of built-in exceptions on malformed files.
            raise corrupt(path, f"it is not a readable PDF ({type(e).__name__}: {e})") from e
        if not text.strip():
            return build_parsed_book(path, "")  # raises EMPTY (e.g. a scan with no text layer)
        # Metadata titles are often a tool's default ("Enscript Output", "Microsoft Word - x.doc").
        guessed_title, guessed_author = guess_title_author(text)
        if guessed_title and guessed_author:
            title, author = guessed_title, guessed_author
        return build_parsed_book(
            path,
            text,
            chapters=outline or find_headings(text),
            pages=pages_from_cuts(starts, labels),
            title=title,
            author=author,
        )
