"""Dispatch from a file to the parser of its format, with the checks every format shares.

Invariant: ``ParserRegistry.parse`` either returns a ``ParsedBook`` with text, or raises
``IngestError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from folio.adapters.parsers.plaintext import PlainTextParser
from folio.adapters.parsers.structure import corrupt
from folio.domain.books import BookFormat, ParsedBook
from folio.domain.errors import IngestError, IngestErrorCode
from folio.domain.ports import BookParser

EXTENSIONS: dict[str, BookFormat] = {
    ".txt": BookFormat.TXT,
    ".text": BookFormat.TXT,
    ".md": BookFormat.MARKDOWN,
    ".markdown": BookFormat.MARKDOWN,
    ".html": BookFormat.HTML,
    ".htm": BookFormat.HTML,
    ".xhtml": BookFormat.HTML,
    ".epub": BookFormat.EPUB,
    ".pdf": BookFormat.PDF,
}


class OnFirstUse:
    """A parser whose module (and format library) is imported when a file of its format is first
    parsed: adding an EPUB never pays for importing the PDF library."""

    def __init__(
        self, module: str, name: str, formats: tuple[BookFormat, ...], **options: Any
    ) -> None:
        self.formats = formats
        self._where = (f"folio.adapters.parsers.{module}", name)
        self._options = options
        self._parser: BookParser | None = None

    def parse(self, path: Path) -> ParsedBook:
        if self._parser is None:
            module, name = self._where
            self._parser = getattr(importlib.import_module(module), name)(**self._options)
        return self._parser.parse(path)


def _epub(**options: Any) -> BookParser:
    return OnFirstUse("epub", "EpubParser", (BookFormat.EPUB,), **options)


DEFAULT_PARSERS: tuple[BookParser, ...] = (
    PlainTextParser(),
    OnFirstUse("markdown_parser", "MarkdownParser", (BookFormat.MARKDOWN,)),
    OnFirstUse("html_parser", "HtmlParser", (BookFormat.HTML,)),
    _epub(),
    OnFirstUse("pdf", "PdfParser", (BookFormat.PDF,)),
)
_MAGIC_WINDOW = 1024


def detect_format(path: Path) -> BookFormat:
    """The format named by the file's extension; ``IngestError(UNSUPPORTED)`` for any other."""
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        supported = ", ".join(sorted(EXTENSIONS))
        raise IngestError(
            f"{path.name}: unsupported file type {path.suffix or '(none)'!r}"
            f" (supported: {supported})",
            code=IngestErrorCode.UNSUPPORTED,
            path=str(path),
        )
    return fmt


def _check_magic(path: Path, fmt: BookFormat, head: bytes) -> None:
    if fmt is BookFormat.PDF and b"%PDF-" not in head[:_MAGIC_WINDOW]:
        raise corrupt(path, "it does not start like a PDF file")
    if fmt is BookFormat.EPUB and not head.startswith(b"PK\x03\x04"):
        raise corrupt(path, "it is not a zip archive, which every EPUB is")


class ParserRegistry:
    """Parses any supported file with the parser registered for its format."""

    def __init__(self, parsers: Sequence[BookParser] = DEFAULT_PARSERS) -> None:
        self._parsers = {fmt: parser for parser in parsers for fmt in parser.formats}

    @property
    def formats(self) -> tuple[BookFormat, ...]:
        return tuple(self._parsers)

    def parse(self, path: Path) -> tuple[ParsedBook, BookFormat]:
        fmt = detect_format(path)
        parser = self._parsers.get(fmt)
        if parser is None:
            raise IngestError(
                f"{path.name}: no parser for {fmt.value} files",
                code=IngestErrorCode.UNSUPPORTED,
                path=str(path),
            )
        try:
            with path.open("rb") as f:
                head = f.read(_MAGIC_WINDOW)
        except FileNotFoundError as e:
            raise IngestError(
                f"{path} does not exist", code=IngestErrorCode.NOT_FOUND, path=str(path)
            ) from e
        except OSError as e:
            raise IngestError(
                f"{path} cannot be opened: {e.strerror or e}",
                code=IngestErrorCode.NOT_FOUND,
                path=str(path),
            ) from e
        if not head:
            raise IngestError(f"{path.name} is empty", code=IngestErrorCode.EMPTY, path=str(path))
        _check_magic(path, fmt, head)
        return self._run(parser, path), fmt

    @staticmethod
    def _run(parser: BookParser, path: Path) -> ParsedBook:
        try:
            return parser.parse(path)
        except IngestError:
            raise
        except Exception as e:
            # Last line of defence: a parser library failing in a way its adapter did not foresee
            # is still a file we cannot read, never a traceback for the user.
            raise corrupt(path, f"{type(e).__name__}: {e}") from e


_DEFAULT_REGISTRY = ParserRegistry()


def parse_book(path: Path) -> tuple[ParsedBook, BookFormat]:
    """Parse ``path`` with the default parsers. Raises ``IngestError`` only."""
    return _DEFAULT_REGISTRY.parse(path)


def bounded_parser(*, max_unpacked_bytes: int) -> ParserRegistry:
    """The default parsers, with archives (EPUB) bounded in what they may unpack to."""
    parsers = [p for p in DEFAULT_PARSERS if BookFormat.EPUB not in p.formats]
    return ParserRegistry([*parsers, _epub(max_unpacked_bytes=max_unpacked_bytes)])
