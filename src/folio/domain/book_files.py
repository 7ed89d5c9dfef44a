"""The imported book files, kept as they were imported (served over OPDS byte for byte, so that an
e-reader's digest of the downloaded file is the one folio computed at import).

A file is kept under its content hash (the sha256 a ``Book`` carries as ``content_hash``): two
books with the same bytes (two users' copies) share one stored file, which stays while any book
in the library still has that hash. A store never holds half a file: a reader sees the whole
file or none.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from folio.domain.books import BookFormat

# The media types e-readers know the formats by (KOReader's DocumentRegistry maps them back).
MEDIA_TYPES = {
    BookFormat.EPUB: "application/epub+zip",
    BookFormat.PDF: "application/pdf",
    BookFormat.TXT: "text/plain",
    BookFormat.MARKDOWN: "text/markdown",
    BookFormat.HTML: "text/html",
}


def media_type(fmt: BookFormat) -> str:
    return MEDIA_TYPES.get(fmt, "application/octet-stream")


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A kept file being read: its size and its bytes, in blocks (the iterator releases what it
    holds once exhausted or collected)."""

    size: int
    blocks: Iterator[bytes]


class BookFileStore(Protocol):
    """Where a library keeps its books' files."""

    def put(self, content_hash: str, source: Path) -> None:
        """Keep the bytes of ``source`` under ``content_hash`` (nothing to do when they are kept
        already). Raises ``IngestError``: ``CORRUPT`` when the bytes do not hash to
        ``content_hash`` (the file changed during the import), ``TOO_LARGE`` past the store's
        bound; ``StorageError`` when the store cannot be written."""
        ...

    def stored(self, content_hashes: Iterable[str]) -> set[str]:
        """Which of ``content_hashes`` have a kept file."""
        ...

    def open(self, content_hash: str) -> StoredFile | None:
        """The kept file, or ``None`` (a book imported before files were kept)."""
        ...

    def release(self, content_hash: str) -> None:
        """A book with this content was removed: delete the file unless a book of the library
        (any user's) still has this content."""
        ...
