"""Small EPUB books written by tests: chapters of plain paragraphs, with series metadata as EPUB 3
(``belongs-to-collection`` + ``group-position``) or Calibre (``calibre:series`` meta) writes it."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def _series_meta(series: str | None, index: str | None, style: str) -> str:
    if series is None:
        return ""
    if style == "calibre":
        out = f'<meta name="calibre:series" content="{escape(series)}"/>'
        return out + (f'<meta name="calibre:series_index" content="{index}"/>' if index else "")
    out = f'<meta property="belongs-to-collection" id="c1">{escape(series)}</meta>'
    out += '<meta refines="#c1" property="collection-type">series</meta>'
    return out + (f'<meta refines="#c1" property="group-position">{index}</meta>' if index else "")


def _xhtml(heading: str, paragraphs: Sequence[str]) -> str:
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    return (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>{escape(heading)}</title></head><body><h1>{escape(heading)}</h1>{body}"
        "</body></html>"
    )


def write_epub(
    path: Path,
    title: str,
    chapters: Sequence[tuple[str, Sequence[str]]],
    *,
    author: str = "A. Writer",
    series: str | None = None,
    index: str | None = None,
    style: str = "epub3",
) -> Path:
    """An EPUB at ``path``: one spine document per chapter (its heading, then its paragraphs)."""
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>{escape(title)}</dc:title><dc:creator>{escape(author)}</dc:creator>"
        f"{_series_meta(series, index, style)}</metadata>"
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/book.opf", opf)
        for i, (heading, paragraphs) in enumerate(chapters):
            z.writestr(f"OEBPS/c{i}.xhtml", _xhtml(heading, paragraphs))
    return path
