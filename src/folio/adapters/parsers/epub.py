"""EPUB books, read with zipfile + lxml: container.xml -> OPF -> spine documents in reading order.

Chapters come from the EPUB 3 navigation document's toc, else the EPUB 2 NCX, else the
documents' headings. Title and author come from the OPF's ``dc:title`` / ``dc:creator``; the
series from EPUB 3's ``belongs-to-collection`` (with its ``group-position``), else Calibre's
``calibre:series`` / ``calibre:series_index`` meta. The navigation document itself is not part of
the text.

Invariant: the text is the spine documents' texts joined by a blank line, and every chapter offset
points into the document (and at the element) its toc entry links to.
"""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

from lxml import etree

from folio.adapters.parsers.archive import BoundedArchive
from folio.adapters.parsers.html_text import HtmlText, extract_text, parse_html_document
from folio.adapters.parsers.structure import build_parsed_book, chapters_from_headings, corrupt
from folio.domain.books import BookFormat, ParsedBook
from folio.domain.errors import IngestError, IngestErrorCode
from folio.domain.series import parse_series_index

NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
}
_XML = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
SEPARATOR = "\n\n"


class EpubFormatError(Exception):
    """The archive is a zip but not a readable EPUB (missing container, OPF or spine)."""


@dataclass(frozen=True, slots=True)
class _Document:
    href: str  # path inside the archive
    start: int  # offset of its text in the book
    content: HtmlText


@dataclass(frozen=True, slots=True)
class EpubPackage:
    """An EPUB's package document: where it is, its XML root, its manifest."""

    opf_path: str
    root: etree._Element
    manifest: dict[str, tuple[str, str, str]]  # id -> (archive path, media type, properties)


def _xml(archive: BoundedArchive, name: str) -> etree._Element:
    try:
        data = archive.read(name)
    except KeyError as e:
        raise EpubFormatError(f"{name} is missing") from e
    root = etree.fromstring(data, _XML)
    if root is None:
        raise EpubFormatError(f"{name} is not XML")
    return root


def open_package(archive: BoundedArchive) -> EpubPackage:
    """The package document (OPF) that ``META-INF/container.xml`` names: its path, root and
    manifest (``EpubFormatError`` when either is missing or not XML)."""
    container = _xml(archive, "META-INF/container.xml")
    paths = container.xpath("//c:rootfile/@full-path", namespaces=NS)
    if not paths:
        raise EpubFormatError("container.xml names no package document")
    opf_path = str(paths[0])
    root = _xml(archive, opf_path)
    base = posixpath.dirname(opf_path)
    manifest = {
        str(item.get("id")): (
            posixpath.normpath(posixpath.join(base, unquote(item.get("href", "")))),
            item.get("media-type", ""),
            item.get("properties", ""),
        )
        for item in root.xpath("//opf:manifest/opf:item", namespaces=NS)
    }
    return EpubPackage(opf_path, root, manifest)


def _metadata(package: EpubPackage, name: str) -> str | None:
    values = package.root.xpath(f"//opf:metadata/dc:{name}/text()", namespaces=NS)
    return str(values[0]).strip() if values else None


def _series(package: EpubPackage) -> tuple[str, float | None] | None:
    """The series the package names and the book's index in it (None when it names none)."""
    collections = package.root.xpath(
        "//opf:metadata/opf:meta[@property='belongs-to-collection']", namespaces=NS
    )
    found = []
    for meta in collections:
        refines = {
            str(r.get("property")): (r.text or "").strip()
            for r in package.root.xpath(
                "//opf:metadata/opf:meta[@refines=$ref]", namespaces=NS, ref=f"#{meta.get('id')}"
            )
        }
        name = " ".join((meta.text or "").split())
        if name and refines.get("collection-type", "series") == "series":
            found.append((name, parse_series_index(refines.get("group-position"))))
    if found:
        return found[0]
    calibre = {
        str(m.get("name")): str(m.get("content") or "")
        for m in package.root.xpath("//opf:metadata/opf:meta[@name]", namespaces=NS)
    }
    name = " ".join(calibre.get("calibre:series", "").split())
    return (name, parse_series_index(calibre.get("calibre:series_index"))) if name else None


def nav_path(package: EpubPackage) -> str | None:
    """The archive path of the EPUB 3 navigation document, if the manifest has one."""
    return next((p for p, _, props in package.manifest.values() if "nav" in props.split()), None)


def _spine_documents(archive: BoundedArchive, package: EpubPackage) -> list[_Document]:
    nav = nav_path(package)
    docs: list[_Document] = []
    offset = 0
    for idref in package.root.xpath("//opf:spine/opf:itemref/@idref", namespaces=NS):
        entry = package.manifest.get(str(idref))
        if entry is None or entry[0] == nav or "html" not in entry[1]:
            continue
        try:
            data = archive.read(entry[0])
        except KeyError:
            continue  # listed but missing: KOReader shows the rest (crengine_dom), folio too
        content = extract_text(parse_html_document(data))
        if not content.text.strip():
            continue
        start = offset + (len(SEPARATOR) if docs else 0)
        docs.append(_Document(entry[0], start, content))
        offset = start + len(content.text)
    if not docs:
        raise EpubFormatError("its spine lists no readable document")
    return docs


def _resolve(docs: list[_Document], base: str, href: str) -> int | None:
    path, fragment = urldefrag(unquote(href))
    target = posixpath.normpath(posixpath.join(posixpath.dirname(base), path)) if path else base
    for doc in docs:
        if doc.href == target:
            return doc.start + (doc.content.ids.get(fragment, 0) if fragment else 0)
    return None


def _epub_type(el: etree._Element) -> str:
    # lxml's HTML parser keeps "epub:type" as a plain attribute name; its XML parser namespaces it.
    return el.get("epub:type") or el.get(f"{{{NS['epub']}}}type") or ""


def _toc_entries(
    archive: BoundedArchive, package: EpubPackage
) -> tuple[str, list[tuple[str, str]]]:
    """The toc's (title, href) entries in order, and the file they are relative to."""
    nav = nav_path(package)
    if nav is not None:
        root = parse_html_document(archive.read(nav))
        tocs = [n for n in root.iter("nav") if "toc" in _epub_type(n)]
        tocs = tocs or list(root.iter("nav"))
        if tocs:
            links = [
                (" ".join(a.text_content().split()), a.get("href", "")) for a in tocs[0].iter("a")
            ]
            return nav, links
    ncx = next((p for p, media, _ in package.manifest.values() if "ncx" in media), None)
    if ncx is not None:
        root = _xml(archive, ncx)
        points = root.xpath("//ncx:navPoint", namespaces=NS)
        links = [
            (
                " ".join(p.xpath("string(ncx:navLabel/ncx:text)", namespaces=NS).split()),
                str(p.xpath("string(ncx:content/@src)", namespaces=NS)),
            )
            for p in points
        ]
        return ncx, links
    return package.opf_path, []


def _chapters(
    archive: BoundedArchive, package: EpubPackage, docs: list[_Document], title: str | None
) -> list[tuple[int, str]]:
    base, entries = _toc_entries(archive, package)
    chapters = [
        (start, name)
        for name, href in entries
        if name and (start := _resolve(docs, base, href)) is not None
    ]
    if chapters:
        return chapters
    headings = [
        (h.level, doc.start + h.char_start, h.title) for doc in docs for h in doc.content.headings
    ]
    return chapters_from_headings(headings, book_title=title)


MAX_UNPACKED_BYTES = 400 * 1024 * 1024


class EpubParser:
    """EPUB 2/3. ``max_unpacked_bytes`` bounds what the archive may unpack to: checked from its
    directory before any member is read, then counted from the bytes actually inflated while each
    member streams, with a ratio limit per member (``archive.BoundedArchive``: headers that lie
    cannot make a read hold more than a small piece beyond its bound)."""

    formats: tuple[BookFormat, ...] = (BookFormat.EPUB,)

    def __init__(self, *, max_unpacked_bytes: int = MAX_UNPACKED_BYTES) -> None:
        self._max_unpacked = max_unpacked_bytes

    def parse(self, path: Path) -> ParsedBook:
        try:
            with zipfile.ZipFile(path) as zipped:
                self._check_size(path, zipped)
                archive = BoundedArchive(zipped, budget=self._max_unpacked, label=path.name)
                package = open_package(archive)
                docs = _spine_documents(archive, package)
                title = _metadata(package, "title")
                chapters = _chapters(archive, package, docs, title)
                author = _metadata(package, "creator")
                series = _series(package)
        except zipfile.BadZipFile as e:
            raise corrupt(path, f"it is not a valid EPUB (zip) archive ({e})") from e
        except EpubFormatError as e:
            raise corrupt(path, f"it is not a valid EPUB: {e}") from e
        except (etree.LxmlError, ValueError, EOFError, zipfile.LargeZipFile, zlib.error) as e:
            raise corrupt(path, f"its EPUB contents are damaged ({e})") from e
        text = SEPARATOR.join(doc.content.text for doc in docs)
        return build_parsed_book(
            path, text, chapters=chapters, title=title, author=author, series=series
        )

    def _check_size(self, path: Path, archive: zipfile.ZipFile) -> None:
        # The declared total: a first refusal before anything is inflated (the bytes actually
        # inflated are counted by BoundedArchive while members are read).
        unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > self._max_unpacked:
            raise IngestError(
                f"{path.name} would unpack to {unpacked / 1048576:.0f} MB; an EPUB may unpack to"
                f" at most {self._max_unpacked / 1048576:g} MB (setting max_unpacked_mb,"
                " FOLIO_MAX_UNPACKED_MB)",
                code=IngestErrorCode.TOO_LARGE,
                path=str(path),
            )
