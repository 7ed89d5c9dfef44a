"""The format of a book file from its content, not its name (uploads can be named anything)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from folio.domain.books import BookFormat
from folio.domain.errors import IngestError, IngestErrorCode

_HTML_MARKS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")
_MARKDOWN_NAMES = (".md", ".markdown")


def sniff_format(path: Path, filename: str = "") -> BookFormat:
    """PDF, EPUB, HTML, Markdown or text, judged by the bytes (the name only tells Markdown
    from plain text). Raises ``IngestError(UNSUPPORTED)`` for anything else (images, archives,
    executables, ...)."""
    with path.open("rb") as f:
        head = f.read(8192)
    if head.startswith(b"%PDF-"):
        return BookFormat.PDF
    if head.startswith(b"PK\x03\x04"):
        if _is_epub(path):
            return BookFormat.EPUB
        raise _unsupported(filename, "a ZIP archive that is not an EPUB")
    if not head.strip():
        raise IngestError(f"{filename or 'The file'} is empty", code=IngestErrorCode.EMPTY)
    if b"\x00" in head:
        raise _unsupported(filename, "binary data")
    text = head.decode("utf-8", errors="replace")
    lowered = text.lstrip("\ufeff \t\r\n").lower().encode()
    if lowered.startswith(_HTML_MARKS) or b"<html" in lowered[:1024]:
        return BookFormat.HTML
    if filename.lower().endswith(_MARKDOWN_NAMES):
        return BookFormat.MARKDOWN
    return BookFormat.TXT


def _is_epub(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "mimetype" in names:
                with z.open("mimetype") as mimetype:  # a few bytes, whatever the header says
                    return mimetype.read(64).strip() == b"application/epub+zip"
            return "META-INF/container.xml" in names
    except (zipfile.BadZipFile, OSError, KeyError, NotImplementedError, EOFError):
        return False


def _unsupported(filename: str, what: str) -> IngestError:
    return IngestError(
        f"{filename or 'The file'} is {what}; folio reads EPUB, PDF, HTML, Markdown and text",
        code=IngestErrorCode.UNSUPPORTED,
    )
