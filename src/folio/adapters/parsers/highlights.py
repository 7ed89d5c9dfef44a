"""Which reader wrote a highlights file: a KOReader ``.sdr`` folder or ``metadata.*.lua``, else a
Kindle ``My Clippings.txt``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from folio.adapters.parsers.kindle_clippings import read_clippings
from folio.adapters.parsers.koreader_highlights import read_koreader
from folio.domain.highlights import HighlightError, HighlightErrorCode, ImportedHighlight


def read_highlights(path: Path, *, max_bytes: int | None = None) -> list[ImportedHighlight]:
    """The entries of ``path``; a KOReader file without the book's title takes it from its
    ``.sdr`` folder's name (KOReader names it after the book's file). A file larger than
    ``max_bytes`` (default ``MAX_FILE_BYTES``) is refused."""
    if not path.exists():
        raise HighlightError(f"No such file or folder: {path}", code=HighlightErrorCode.NOT_FOUND)
    # both readers decode with errors="replace": an undecodable byte is no UnicodeError
    if path.is_dir() or path.suffix.lower() == ".lua":
        found = read_koreader(path, max_bytes=max_bytes)
        folder = path if path.is_dir() else path.parent
        stem = folder.name.removesuffix(".sdr") if folder.name.endswith(".sdr") else ""
        return [replace(h, title=h.title or stem) for h in found]
    return read_clippings(path, max_bytes=max_bytes)
