"""KOReader's highlights and notes, from the ``metadata.<ext>.lua`` in a book's ``.sdr`` folder.

The fields are KOReader's own (``frontend/apps/reader/modules/readerannotation.lua``):
``annotations`` (since 2024) is a list of ``{datetime, text (the highlighted text), note,
chapter, pageno, page, pos0, pos1, drawer}``, where an entry without ``drawer`` is a page
bookmark; older files keep ``highlight`` (``{[page] = {{datetime, text, chapter, pos0, pos1,
drawer}}}``) and ``bookmarks`` (``{{datetime, notes (the highlighted text), text (the note),
chapter, page, pos0, pos1, highlighted}}``). ``doc_props`` holds the book's title and authors.
``pos0``/``page`` are EPUB xpointers (text) or, in a PDF, page numbers (and tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from folio.adapters.parsers.lua_table import loads
from folio.domain.highlights import (
    MAX_FILE_BYTES,
    SOURCE_KOREADER,
    HighlightError,
    HighlightKind,
    ImportedHighlight,
    clip,
)


def metadata_file(path: Path) -> Path:
    """The ``metadata.*.lua`` of a ``.sdr`` folder, or ``path`` itself."""
    if not path.is_dir():
        return path
    found = sorted(p for p in path.glob("metadata.*.lua") if not p.name.endswith(".old"))
    if not found:
        raise HighlightError(f"{path} holds no KOReader metadata.*.lua file")
    return found[0]


def read_koreader(path: Path, *, max_bytes: int | None = None) -> list[ImportedHighlight]:
    """The highlights, notes and bookmarks of a KOReader ``.sdr`` folder or metadata file of at
    most ``max_bytes`` (default ``MAX_FILE_BYTES``)."""
    file = metadata_file(path)
    bound = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if file.stat().st_size > bound:
        raise HighlightError(f"{file.name} is larger than {bound / 1024**2:.4g} MB")
    try:
        data = loads(file.read_text(encoding="utf-8", errors="replace"))
    except ValueError as e:  # not a literal, or nested deeper than lua_table.MAX_DEPTH
        raise HighlightError(f"{file.name} is not a KOReader metadata file: {e}") from e
    if not isinstance(data, Mapping):
        raise HighlightError(f"{file.name} is not a KOReader metadata file (not a table)")
    return parse_koreader(data)


def parse_koreader(data: Mapping[Any, Any]) -> list[ImportedHighlight]:
    props = _map(data.get("doc_props"))
    title, author = clip(_str(props.get("title"))) or "", clip(_str(props.get("authors")))
    if author:
        author = author.replace("\n", ", ")
    annotations = _list(data.get("annotations"))
    if annotations:
        return [h for a in annotations if (h := _annotation(_map(a), title, author))]
    return _legacy(data, title, author)


def _annotation(
    entry: Mapping[Any, Any], title: str, author: str | None
) -> ImportedHighlight | None:
    note = _str(entry.get("note"))
    # an entry without a drawer is a page bookmark: no highlighted text of its own (its "text"
    # is KOReader's label of the page, which must not be anchored as if highlighted)
    if entry.get("drawer") is None:
        kind, text = HighlightKind.BOOKMARK, ""
    else:
        kind, text = HighlightKind.HIGHLIGHT, _str(entry.get("text")) or ""
        if not text and not note:
            return None
    page = entry.get("pageno")
    return _value(title, author, kind, text, note, entry, page if isinstance(page, int) else None)


def _legacy(data: Mapping[Any, Any], title: str, author: str | None) -> list[ImportedHighlight]:
    """Files before ``annotations``: ``bookmarks`` carry the notes; ``highlight`` entries with
    no bookmark of their own are added."""
    out: list[ImportedHighlight] = []
    seen: set[tuple[str, str]] = set()
    for raw in _list(data.get("bookmarks")):
        entry = _map(raw)
        text, note = _str(entry.get("notes")) or "", _str(entry.get("text"))
        kind = HighlightKind.HIGHLIGHT if entry.get("highlighted") else HighlightKind.BOOKMARK
        if kind is HighlightKind.BOOKMARK:
            text, note = "", None if note and _auto_text(entry, note) else note
        page = entry.get("page")
        out.append(_value(title, author, kind, text, note, entry,
                          page if isinstance(page, int) else None))  # fmt: skip
        seen.add((text, str(entry.get("pos0"))))
    for page, items in _map(data.get("highlight")).items():
        for raw in _list(items):
            entry = _map(raw)
            text = _str(entry.get("text")) or ""
            if text and (text, str(entry.get("pos0"))) not in seen:
                number = page if isinstance(page, int) else None
                kind = HighlightKind.HIGHLIGHT
                out.append(_value(title, author, kind, text, None, entry, number))
    return out


def _auto_text(entry: Mapping[Any, Any], text: str) -> bool:
    """Whether a page bookmark's ``text`` is KOReader's own label, not the reader's note: its
    chapter label (``notes``, "in Chapter 2") or the label made of it and the bookmark's time
    ("Page 3 in Chapter 2 @ 2023-05-01 10:00:00"), in whatever language the device used."""
    chapter, when = _str(entry.get("notes")), _str(entry.get("datetime"))
    return text == chapter or (when is not None and when in text)


def _value(
    title: str,
    author: str | None,
    kind: HighlightKind,
    text: str,
    note: str | None,
    entry: Mapping[Any, Any],
    page: int | None,
) -> ImportedHighlight:
    pos = entry.get("pos0") if isinstance(entry.get("pos0"), str) else entry.get("page")
    location = pos if isinstance(pos, str) else (f"page {page}" if page is not None else None)
    return ImportedHighlight(
        title=title,
        author=author,
        kind=kind,
        text=clip(text) or "",
        note=clip(note),
        chapter=clip(_str(entry.get("chapter"))),
        location=clip(location),
        page=page,
        created=clip(_str(entry.get("datetime"))),
        source=SOURCE_KOREADER,
        end_location=clip(_str(entry.get("pos1"))) if isinstance(pos, str) else None,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _map(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    """A Lua array (a dict keyed 1..n) in order."""
    if not isinstance(value, Mapping):
        return []
    return [value[k] for k in sorted(k for k in value if isinstance(k, int))]
