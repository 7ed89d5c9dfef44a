"""Kindle's ``My Clippings.txt``: records separated by a line of ``==========``, each
``Title (Author)``, then ``- Your Highlight on page 12 | Location 170-172 | Added on <date>``
(``Note``/``Bookmark`` likewise; ``at location`` on some firmware), a blank line, and the text.

Invariant: a record folio cannot read (no metadata line) is skipped, never half-read.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from folio.domain.highlights import (
    MAX_FILE_BYTES,
    SOURCE_KINDLE,
    HighlightError,
    HighlightKind,
    ImportedHighlight,
    clip,
)

SEPARATOR = "=========="
_META = re.compile(r"^-\s*Your (?P<kind>Highlight|Note|Bookmark)\b(?P<rest>.*)$", re.I)
# at most 9 digits: a longer number is no page or location (and would not fit an int column)
_PAGE = re.compile(r"\bpage\s+(?P<page>\d{1,9})\b", re.I)
_LOCATION = re.compile(r"\blocation\s+(?P<loc>\d{1,9}(?:-\d{1,9})?)\b", re.I)
_ADDED = re.compile(r"\bAdded on\s+(?P<date>.+)$", re.I)
_AUTHOR = re.compile(r"^(?P<title>.*?)\s*\((?P<author>[^()]*)\)\s*$")
_KINDS = {"highlight": HighlightKind.HIGHLIGHT, "note": HighlightKind.NOTE,
          "bookmark": HighlightKind.BOOKMARK}  # fmt: skip


def read_clippings(path: Path) -> list[ImportedHighlight]:
    """Every highlight, note and bookmark of a ``My Clippings.txt``."""
    if path.stat().st_size > MAX_FILE_BYTES:
        raise HighlightError(f"{path.name} is larger than {MAX_FILE_BYTES // 1_000_000} MB")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    found = parse_clippings(text)
    if not found and SEPARATOR not in text:
        raise HighlightError(f"{path.name} is not a Kindle clippings file (no '{SEPARATOR}')")
    if not found and any(r.strip().lstrip("\ufeff") for r in text.split(SEPARATOR)):
        # records folio cannot read, as a Kindle set to another language writes them
        raise HighlightError(
            f"{path.name}: no record has a '- Your Highlight/Note/Bookmark ...' line"
            " (folio reads the clippings of a Kindle set to English)"
        )
    return found


def parse_clippings(text: str) -> list[ImportedHighlight]:
    """The file's records; a note whose location falls in the highlight just before it (the
    way a Kindle stores a note made on a highlight) becomes that highlight's note."""
    out: list[ImportedHighlight] = []
    for record in text.replace("\r\n", "\n").split(SEPARATOR):
        clipping = _record(record)
        if clipping is None:
            continue
        if out and _notes_on(clipping, out[-1]):
            out[-1] = replace(out[-1], note=clipping.note)
            continue
        out.append(clipping)
    return out


def _span(value: ImportedHighlight) -> tuple[int, int] | None:
    found = _LOCATION.search(value.location or "")
    if found is None:
        return None
    a, _, b = found.group("loc").partition("-")
    return int(a), int(b or a)


def _notes_on(note: ImportedHighlight, highlight: ImportedHighlight) -> bool:
    if note.kind is not HighlightKind.NOTE or highlight.kind is not HighlightKind.HIGHLIGHT:
        return False
    if highlight.note or (note.title, note.author) != (highlight.title, highlight.author):
        return False
    at, span = _span(note), _span(highlight)
    return at is not None and span is not None and span[0] <= at[0] <= span[1]


def _record(record: str) -> ImportedHighlight | None:
    lines = [line.strip().lstrip("\ufeff") for line in record.strip().split("\n")]
    if len(lines) < 2:
        return None
    meta = _META.match(lines[1])
    if meta is None or not lines[0]:
        return None
    title, author = lines[0], None
    named = _AUTHOR.match(lines[0])
    if named and named.group("title"):
        title, author = named.group("title"), clip(named.group("author"))
    rest = meta.group("rest")
    page = _PAGE.search(rest)
    location = _LOCATION.search(rest)
    added = _ADDED.search(rest)
    where = [f"page {page.group('page')}" if page else "",
             f"Location {location.group('loc')}" if location else ""]  # fmt: skip
    body = clip("\n".join(lines[2:])) or ""
    kind = _KINDS[meta.group("kind").lower()]
    return ImportedHighlight(
        title=clip(title) or "",
        author=author,
        kind=kind,
        text="" if kind is HighlightKind.NOTE else body,
        note=body if kind is HighlightKind.NOTE and body else None,
        location=", ".join(w for w in where if w) or None,
        page=int(page.group("page")) if page else None,
        created=clip(added.group("date")) if added else None,
        source=SOURCE_KINDLE,
    )
