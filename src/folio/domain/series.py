"""A book's place in a series: its name and index, checked once for every way they are set (EPUB
metadata, Calibre, ``folio edit``, the API).

Invariant: a book has an index only when it has a series; an index is a finite number from 0 to
``MAX_SERIES_INDEX`` (Calibre's 2.5 for a novella between volumes 2 and 3 included).
"""

from __future__ import annotations

import math

from folio.domain.errors import BookError, BookErrorCode

MAX_SERIES_CHARS = 300
MAX_SERIES_INDEX = 10_000.0


def series_fields(series: str | None, index: float | None) -> tuple[str | None, float | None]:
    """``(series, index)`` tidied: whitespace collapsed, an empty name clearing both.

    Raises:
        BookError: ``INVALID_INPUT`` for a name over ``MAX_SERIES_CHARS``, an index outside 0 to
            ``MAX_SERIES_INDEX`` (or not a number), or an index without a series.
    """
    name = " ".join(series.split()) if series is not None else None
    if not name:
        if index is not None:
            raise BookError("A series index needs a series name", code=BookErrorCode.INVALID_INPUT)
        return None, None
    if len(name) > MAX_SERIES_CHARS:
        raise BookError(
            f"A series name is at most {MAX_SERIES_CHARS} characters (got {len(name)})",
            code=BookErrorCode.INVALID_INPUT,
        )
    if index is not None and not (math.isfinite(index) and 0 <= index <= MAX_SERIES_INDEX):
        raise BookError(
            f"A series index is a number from 0 to {MAX_SERIES_INDEX:g} (got {index})",
            code=BookErrorCode.INVALID_INPUT,
        )
    return name, None if index is None else float(index)


def parse_series_index(text: str | None) -> float | None:
    """A series index as metadata writes it ("3", "3.0", "2.5"); None when absent or not a
    number a reader would use (negative, infinite, over ``MAX_SERIES_INDEX``)."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 <= value <= MAX_SERIES_INDEX else None


def index_text(index: float | None) -> str:
    """``3`` for 3.0, ``2.5`` for 2.5, "" for None: how a reader writes a volume number."""
    if index is None:
        return ""
    return f"{index:g}"
