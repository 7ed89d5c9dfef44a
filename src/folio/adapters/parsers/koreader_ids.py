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
- ``epub_fragments``: for an EPUB, each spine document as crengine numbers it
  (``/body/DocFragment[N]``, N counting the spine's (X)HTML items), where its text lies in
  folio's text (the EPUB parser's own layout: documents joined by a blank line, the navigation
  document and empty documents left out), and for each element and text node, by crengine's path
  (``/body/div/p[3]``, ``.../text()[2]``: an index only where siblings share the name), how many
  non-blank characters of the document come before it.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from lxml import etree

from folio.adapters.parsers.archive import BoundedArchive
from folio.adapters.parsers.epub import (
    MAX_UNPACKED_BYTES,
    NS,
    SEPARATOR,
    EpubFormatError,
    _nav_path,
    _package,
)
from folio.adapters.parsers.html_text import body_of, extract_text, parse_html_document
from folio.adapters.parsers.structure import strip_illustrations
from folio.domain.books import BookFormat
from folio.domain.errors import IngestError
from folio.domain.sync import DocumentIds, Fragment

_SAMPLE = 1024
# The elements whose text folio's HTML reader skips (html_text._SKIP): not counted either.
_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "math"}
    | {"iframe", "object", "button", "select"}
)


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
            root = _package(archive).root
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
            return _fragments(archive)
    except (zipfile.BadZipFile, EpubFormatError, etree.LxmlError, ValueError, KeyError):
        return []
    except IngestError:  # the archive unpacks past the bound
        return []


def _fragments(archive: BoundedArchive) -> list[Fragment]:
    package = _package(archive)
    nav = _nav_path(package)
    fragments: list[Fragment] = []
    offset, index, joined = 0, 0, False
    for idref in package.root.xpath("//opf:spine/opf:itemref/@idref", namespaces=NS):
        entry = package.manifest.get(str(idref))
        if entry is None or "html" not in entry[1]:
            continue
        index += 1
        if entry[0] == nav:
            continue
        root = parse_html_document(archive.read(entry[0]))
        text = extract_text(root).text
        if not text.strip():
            continue
        start = offset + (len(SEPARATOR) if joined else 0)
        joined, offset = True, start + len(text)
        anchors, nonblank, raw = _anchors(body_of(root))
        density = nonblank / raw if raw else 1.0
        fragments.append(Fragment(index, start, offset, anchors, density))
    return fragments


def _anchors(body: etree._Element) -> tuple[dict[str, int], int, int]:
    """crengine path -> non-blank characters before it, and the document's non-blank and total
    characters."""
    anchors: dict[str, int] = {}
    counts = [0, 0]  # non-blank, all

    def count(text: str | None) -> None:
        if text:
            kept = strip_illustrations(text)
            counts[0] += sum(1 for c in kept if not c.isspace())
            counts[1] += len(kept)

    def walk(el: etree._Element, path: str) -> None:
        anchors.setdefault(path, counts[0])
        texts = _text_paths(el, path)
        if el.text and el.text.strip():
            anchors.setdefault(texts.pop(0), counts[0])
        count(el.text)
        for child, child_path in _child_paths(el, path):
            if child_path is not None:
                walk(child, child_path)
            if child.tail and child.tail.strip():
                anchors.setdefault(texts.pop(0), counts[0])
            count(child.tail)

    walk(body, "/body")
    return anchors, counts[0], counts[1]


def _local(el: etree._Element) -> str | None:
    return str(etree.QName(el).localname).lower() if isinstance(el.tag, str) else None


def _child_paths(el: etree._Element, path: str) -> list[tuple[etree._Element, str | None]]:
    """Each child with its crengine path (``None`` for what folio does not read: comments,
    scripts, styles)."""
    names = [_local(child) for child in el]
    seen: dict[str, int] = {}
    out: list[tuple[etree._Element, str | None]] = []
    for child, name in zip(el, names, strict=True):
        if name is None or name in _SKIPPED:
            out.append((child, None))
            continue
        seen[name] = seen.get(name, 0) + 1
        suffix = f"[{seen[name]}]" if names.count(name) > 1 else ""
        out.append((child, f"{path}/{name}{suffix}"))
    return out


def _text_paths(el: etree._Element, path: str) -> list[str]:
    """The paths of ``el``'s non-blank text nodes, in order (``text()``, or ``text()[n]`` when
    there are several)."""
    pieces = [el.text, *(child.tail for child in el)]
    total = sum(1 for p in pieces if p and p.strip())
    if total == 1:
        return [f"{path}/text()"]
    return [f"{path}/text()[{n}]" for n in range(1, total + 1)]


def identify(path: Path, fmt: BookFormat) -> tuple[DocumentIds, list[Fragment]]:
    """KOReader's ids of the file at ``path`` and, for an EPUB, its spine documents."""
    return document_ids(path, fmt), epub_fragments(path) if fmt is BookFormat.EPUB else []
