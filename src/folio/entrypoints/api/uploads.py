"""An uploaded file written to disk a chunk at a time, refused (413 ``TOO_LARGE``, naming its
setting) as soon as it passes its bound: no upload is held in memory or kept whole past it."""

from __future__ import annotations

from pathlib import Path

from fastapi import UploadFile

from folio.entrypoints.api.errors import ApiError

CHUNK_BYTES = 1024 * 1024


async def save_upload(file: UploadFile, path: Path, *, max_bytes: int, too_large: str) -> None:
    """Write ``file`` to ``path``; over ``max_bytes``, stop and raise a 413 saying ``too_large``
    (the caller removes what was written)."""
    size = 0
    with path.open("wb") as out:
        while chunk := await file.read(CHUNK_BYTES):
            size += len(chunk)
            if size > max_bytes:
                raise ApiError(413, "TOO_LARGE", too_large)
            out.write(chunk)
