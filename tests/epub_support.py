"""A minimal EPUB 2 for the xpointer tests: a cover page without text, then the chapters."""

from __future__ import annotations

import zipfile
from pathlib import Path


def minimal_epub(path: Path, chapters: list[str]) -> Path:
    """A minimal EPUB 2 whose spine is a cover page without text, then ``chapters`` (XHTML)."""
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters) + 1)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters) + 1))
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title></metadata>'
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    page = '<html xmlns="http://www.w3.org/1999/xhtml"><body>{}</body></html>'
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        z.writestr("c0.xhtml", page.format('<div><img src="cover.png"/></div>'))
        for i, body in enumerate(chapters, 1):
            z.writestr(f"c{i}.xhtml", page.format(body))
    return path
