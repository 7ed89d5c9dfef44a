"""What every book file store does with a file's bytes: copy them in blocks, bounded, checking
that they hash to the content hash they are kept under."""

from __future__ import annotations

import hashlib
import re
from typing import BinaryIO, Protocol

from folio.domain.errors import IngestError, IngestErrorCode

BLOCK = 1 << 20
_HASH = re.compile(r"^[0-9a-f]{64}$")


class Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...


def copy_verified(source: BinaryIO, out: Writable, content_hash: str, max_bytes: int) -> int:
    """Copy ``source`` to ``out`` block by block; raises ``IngestError`` past ``max_bytes``
    (``TOO_LARGE``) or when the bytes do not hash to ``content_hash`` (``CORRUPT``). Returns the
    size."""
    digest = hashlib.sha256()
    size = 0
    while block := source.read(BLOCK):
        size += len(block)
        if size > max_bytes:
            raise IngestError(
                f"A book file is at most {max_bytes / 1048576:g} MB (setting max_book_mb)",
                code=IngestErrorCode.TOO_LARGE,
            )
        digest.update(block)
        out.write(block)
    if digest.hexdigest() != content_hash:
        raise IngestError(
            "The file changed while it was imported; add it again",
            code=IngestErrorCode.CORRUPT,
        )
    return size


def valid_hash(content_hash: str) -> bool:
    return bool(_HASH.match(content_hash))
