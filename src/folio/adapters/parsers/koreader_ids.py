"""How KOReader names a book file and the places in it, computed at import.

- ``partial_md5``: KOReader's document id in its default "binary" mode (``util.partialMD5`` in
  koreader/frontend/util.lua): the MD5 of 1024-byte samples at offsets ``1024 << 2*i`` for
  ``i = -1 .. 10`` (LuaJIT's ``lshift(1024, -2)`` is 0), stopping at the first sample past the
  end of the file.
- ``filename_md5``: its "filename" mode (``KOSync:getFileNameDigest`` in
  plugins/kosync.koplugin/main.lua): the MD5 of the file's name.
- ``structure_md5``: for an EPUB, the MD5 of its package's unique identifier (the text of the
  ``dc:identifier`` that ``<package unique-identifier>`` names, else of the first one) and of the
  ``href`` of each spine item as the manifest writes it, in spine order, joined by newlines
  (UTF-8). The "structure" identifier proposed for KOReader's sync (koreader-sync-server#52;
  KOReader's own plugin, as of 2026-08, sends only ``metadata``): a copy whose metadata Calibre
  rewrote on export or "send to device" keeps it while its partial MD5 changes.
- ``epub_fragments``: for an EPUB, each DocFragment crengine makes of its spine, where its text
  lies in folio's text, and where each element and text node of its DOM starts, by crengine's
  path: ``crengine_dom``, whose docstring gives the rules and the crengine code they come from.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from lxml import etree

from folio.adapters.parsers.archive import BoundedArchive
from folio.adapters.parsers.crengine_dom import spine_fragments
from folio.adapters.parsers.epub import MAX_UNPACKED_BYTES, NS, EpubFormatError, open_package
from folio.domain.books import BookFormat
from folio.domain.errors import IngestError
from folio.domain.sync import DocumentIds, Fragment

_SAMPLE = 1024


def partial_md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as f:
        for i in range(-1, 11):
            f.seek(_SAMPLE << (2 * i) if i >= 0 else 0)
            sample = f.read(_SAMPLE)
            if not sample:
                break
            digest.update(sample)
    return digest.hexdigest()


def filename_md5(name: str) -> str:
    return hashlib.md5(name.encode("utf-8"), usedforsecurity=False).hexdigest()


def document_ids(path: Path, fmt: BookFormat | None = None) -> DocumentIds:
    structure = epub_structure_md5(path) if fmt is BookFormat.EPUB else ""
    return DocumentIds(partial_md5(path), filename_md5(path.name), structure)


def structure_md5(unique_identifier: str, spine_hrefs: list[str]) -> str:
    joined = "\n".join([unique_identifier.strip(), *spine_hrefs])
    return hashlib.md5(joined.encode("utf-8"), usedforsecurity=False).hexdigest()


def epub_structure_md5(path: Path) -> str:
    """The EPUB's structure digest (see the module docstring); ``""`` when it has no identifier
    or spine, or cannot be read as an EPUB."""
    try:
        with zipfile.ZipFile(path) as zipped:
            archive = BoundedArchive(zipped, budget=MAX_UNPACKED_BYTES, label=path.name)
            root = open_package(archive).root
    except (zipfile.BadZipFile, EpubFormatError, etree.LxmlError, ValueError, KeyError, OSError):
        return ""
    except IngestError:
        return ""
    unique = str(root.get("unique-identifier") or "")
    found = root.xpath("//opf:metadata/dc:identifier[@id=$id]", namespaces=NS, id=unique)
    found = found or root.xpath("//opf:metadata/dc:identifier", namespaces=NS)
    identifier = "".join(found[0].itertext()).strip() if found else ""
    hrefs = {
        str(item.get("id")): str(item.get("href", ""))
        for item in root.xpath("//opf:manifest/opf:item", namespaces=NS)
    }
    spine = [
        hrefs.get(str(i), "") for i in root.xpath("//opf:spine/opf:itemref/@idref", namespaces=NS)
    ]
    if not identifier or not spine:
        return ""
    return structure_md5(identifier, spine)


def epub_fragments(path: Path) -> list[Fragment]:
    """The spine documents of the EPUB at ``path`` (``[]`` when it cannot be read as one, within
    the parser's bound on what it may unpack: the book then syncs by percentage)."""
    try:
        with zipfile.ZipFile(path) as zipped:
            archive = BoundedArchive(zipped, budget=MAX_UNPACKED_BYTES, label=path.name)
            return spine_fragments(archive)
    except (zipfile.BadZipFile, EpubFormatError, etree.LxmlError, ValueError, KeyError):
        return []
    except IngestError:  # the archive unpacks past the bound
        return []


def identify(path: Path, fmt: BookFormat) -> tuple[DocumentIds, list[Fragment]]:
    """KOReader's ids of the file at ``path`` and, for an EPUB, its spine documents."""
    return document_ids(path, fmt), epub_fragments(path) if fmt is BookFormat.EPUB else []
