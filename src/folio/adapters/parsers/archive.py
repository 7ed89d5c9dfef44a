"""Reading members of a zip archive (an EPUB) with the bytes actually inflated counted.

A zip's headers may lie. ``zipfile`` stops a member at its declared size, but ``ZipFile.read``
inflates all of a member's compressed bytes in one call before cutting (a 4 MB member declared as
300 KB may briefly become gigabytes in memory). Here every member is streamed in small pieces,
with a running count over the whole archive and a ratio limit per member (what legitimate
EPUB content never reaches), and only stored or deflated members (the two methods an EPUB may use)
are read at all.

Invariant: no read holds more than ``PIECE`` inflated bytes beyond what it returns, and the total
returned over an archive's life is at most its budget.
"""

from __future__ import annotations

import zipfile

from folio.domain.errors import IngestError, IngestErrorCode

PIECE = 256 * 1024
# Deflate reaches ~1000:1 on a run of one byte; text and markup stay far below 100:1.
MAX_RATIO = 100
RATIO_FREE_BYTES = 1024 * 1024  # small members may compress as they like
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class ArchiveBombError(IngestError):
    """The archive inflates to more than its bound, or far more than its compressed size."""


class BoundedArchive:
    """``read(name)`` like ``ZipFile.read``, within ``budget`` inflated bytes in total."""

    def __init__(self, archive: zipfile.ZipFile, *, budget: int, label: str) -> None:
        self._archive = archive
        self._left = budget
        self._budget = budget
        self._label = label

    def namelist(self) -> list[str]:
        return self._archive.namelist()

    def read(self, name: str) -> bytes:
        """The member's bytes. Raises ``KeyError`` (no such member), ``zipfile.BadZipFile``
        (damaged, or a method an EPUB may not use) or ``ArchiveBombError``."""
        info = self._archive.getinfo(name)
        if info.compress_type not in _METHODS:
            raise zipfile.BadZipFile(f"{name} uses compression method {info.compress_type}")
        out = bytearray()
        with self._archive.open(info) as member:
            while piece := member.read(PIECE):
                out += piece
                self._count(name, len(piece), len(out), info.compress_size)
        return bytes(out)

    def _count(self, name: str, size: int, inflated: int, compressed: int) -> None:
        self._left -= size
        if self._left < 0:
            raise ArchiveBombError(
                f"{self._label} unpacks to more than {self._budget / 1048576:g} MB; an EPUB may"
                " unpack to at most that (setting max_unpacked_mb, FOLIO_MAX_UNPACKED_MB)",
                code=IngestErrorCode.TOO_LARGE,
            )
        if inflated > RATIO_FREE_BYTES and inflated > MAX_RATIO * max(compressed, 1):
            raise ArchiveBombError(
                f"{self._label}: {name} inflates to more than {MAX_RATIO} times its compressed"
                " size, which no book does (a zip bomb)",
                code=IngestErrorCode.TOO_LARGE,
            )
