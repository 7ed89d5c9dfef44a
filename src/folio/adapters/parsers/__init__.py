"""Book parsers (the ``BookParser`` port) and ``parse_book``, which picks one by extension.

``parse_book`` checks that the file exists, that its extension is supported and that its first bytes
match the format, then runs the parser. Whatever goes wrong comes out as an ``IngestError``
(NOT_FOUND, UNSUPPORTED, CORRUPT or EMPTY) with a one-line reason; never another exception.
"""

from __future__ import annotations

from folio.adapters.parsers.registry import (
    DEFAULT_PARSERS,
    EXTENSIONS,
    ParserRegistry,
    bounded_parser,
    detect_format,
    parse_book,
)

__all__ = [
    "DEFAULT_PARSERS",
    "EXTENSIONS",
    "ParserRegistry",
    "bounded_parser",
    "detect_format",
    "parse_book",
]
