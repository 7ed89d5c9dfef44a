"""OPDS 1.2 documents (Atom feeds, an OpenSearch description) built with lxml: every title, name
and link is an element's text or attribute, escaped by the serializer, never pasted into markup.
Characters XML 1.0 cannot carry (control characters a file's metadata may hold) are dropped.

The shapes are those KOReader's OPDS browser reads (plugins/opds.koplugin, opdsbrowser.lua
``genItemTableFromCatalog``): Atom in the default namespace (its parser matches unprefixed
``feed``, ``entry``, ``link``, ``title``, ``author/name``), feed links whose ``type`` holds
``application/atom+xml`` (``next`` pages it), entries linking a subsection with a catalogue type
and a ``subsection`` or ``sort/new`` rel, books with an ``http://opds-spec.org/acquisition`` link
whose href ends with the file's extension (it names the download's type from it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from lxml import etree

from folio.app.catalogue import Group, Listed, Page
from folio.domain.book_files import media_type
from folio.entrypoints.api.opds_common import ACQUIRE, ACQUISITION, Listing, Nav, clean, stamp
from folio.entrypoints.api.opds_links import file_href, page_href, page_links

ATOM = "http://www.w3.org/2005/Atom"
OPDS = "http://opds-spec.org/2010/catalog"
DC = "http://purl.org/dc/terms/"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
NSMAP = {None: ATOM, "opds": OPDS, "dc": DC, "opensearch": OPENSEARCH}

NAVIGATION = "application/atom+xml;profile=opds-catalog;kind=navigation"
OPENSEARCH_TYPE = "application/opensearchdescription+xml"
ATOM_MEDIA_TYPE = "application/atom+xml;charset=utf-8"
SORT_NEW = "http://opds-spec.org/sort/new"


class Feed:
    """One Atom feed of the catalogue; the hrefs given (paths on this server) are written as
    they are."""

    def __init__(self, key: str, title: str, self_href: str, kind: str, updated: datetime) -> None:
        self.root = etree.Element(f"{{{ATOM}}}feed", nsmap=NSMAP)
        self._add(self.root, "id", f"urn:folio:opds:{key}")
        self._add(self.root, "title", title)
        self._add(self.root, "updated", stamp(updated))
        author = self._add(self.root, "author")
        self._add(author, "name", "folio")
        self.link("self", self_href, kind)
        self.link("start", "/opds", NAVIGATION)
        self.link("search", "/opds/opensearch.xml", OPENSEARCH_TYPE, title="Search the library")

    def _add(self, parent: etree._Element, name: str, text: str | None = None) -> etree._Element:
        element = etree.SubElement(parent, f"{{{ATOM}}}{name}")
        if text is not None:
            element.text = clean(text)
        return element

    def link(
        self,
        rel: str,
        href: str,
        kind: str,
        *,
        title: str | None = None,
        parent: etree._Element | None = None,
    ) -> None:
        link = etree.SubElement(self.root if parent is None else parent, f"{{{ATOM}}}link")
        link.set("rel", rel)
        link.set("href", clean(href))
        link.set("type", kind)
        if title is not None:
            link.set("title", clean(title))

    def pages(self, page: Page[Any], href: str, kind: str) -> None:
        """The pagination links (RFC 5005) and OpenSearch counts of ``page``; ``href`` is the
        feed's address without ``page`` (it may hold a query)."""
        for rel, at in page_links(page, href):
            self.link(rel, at, kind)
        for name, value in (
            ("totalResults", page.total),
            ("itemsPerPage", page.per_page),
            ("startIndex", page.start_index),
        ):
            etree.SubElement(self.root, f"{{{OPENSEARCH}}}{name}").text = str(value)

    def navigation(self, entries: Iterable[Nav], updated: datetime) -> None:
        for nav in entries:
            entry = self._add(self.root, "entry")
            self._add(entry, "title", nav.title)
            self._add(entry, "id", f"urn:folio:opds:{nav.key}")
            self._add(entry, "updated", stamp(updated))
            content = self._add(entry, "content", nav.summary)
            content.set("type", "text")
            self.link(nav.rel, nav.href, nav.kind, parent=entry)

    def books(self, listed: Iterable[Listed]) -> None:
        for item in listed:
            self._book(item)

    def _book(self, item: Listed) -> None:
        book = item.book
        entry = self._add(self.root, "entry")
        self._add(entry, "title", book.name)
        self._add(entry, "id", f"urn:folio:book:{book.id}")
        self._add(entry, "updated", stamp(book.created_at))
        if book.author:
            self._add(self._add(entry, "author"), "name", book.author)
        etree.SubElement(entry, f"{{{DC}}}format").text = media_type(book.format)
        if book.series:
            category = self._add(entry, "category")
            category.set("term", clean(book.series))
            category.set("label", clean(_series_label(book.series, book.series_index)))
        content = self._add(entry, "content", _summary(item))
        content.set("type", "text")
        if item.has_file:
            kind = media_type(book.format)
            self.link(ACQUIRE, file_href(book), kind, title=book.format.name, parent=entry)

    def groups(self, page: Page[Group], href: str, key: str, none_label: str) -> None:
        """One navigation entry per author or series (``key``: "author", "series"), to its books
        at ``href?name=...``."""
        for group in page.items:
            books = f"{group.count} book{'s' if group.count != 1 else ''}"
            query = urlencode({"name": group.name})
            nav = Nav(
                f"{key}:{quote(group.name)}", group.name or none_label, books, f"{href}?{query}"
            )
            self.navigation([nav], group.updated)

    def to_bytes(self) -> bytes:
        return bytes(etree.tostring(self.root, xml_declaration=True, encoding="utf-8"))


def _series_label(series: str, index: float | None) -> str:
    if index is None:
        return series
    number = int(index) if float(index).is_integer() else index
    return f"{series} #{number}"


def _summary(item: Listed) -> str:
    book = item.book
    parts = [book.format.name]
    if book.page_count:
        parts.append(f"{book.page_count} pages")
    if book.series:
        parts.append(_series_label(book.series, book.series_index))
    if not item.has_file:
        parts.append(
            "folio did not keep this file (imported before files were kept): add the same file "
            "to folio again to download it here"
        )
    return " · ".join(parts)


def opensearch_description(template: str) -> bytes:
    """The OpenSearch description whose ``Url`` template (``{searchTerms}``) gives an
    acquisition feed; KOReader substitutes its search box there."""
    root = etree.Element(f"{{{OPENSEARCH}}}OpenSearchDescription", nsmap={None: OPENSEARCH})
    for name, text in (
        ("ShortName", "folio"),
        ("Description", "Search your folio library by title, author or series"),
        ("InputEncoding", "UTF-8"),
        ("OutputEncoding", "UTF-8"),
    ):
        etree.SubElement(root, f"{{{OPENSEARCH}}}{name}").text = text
    url = etree.SubElement(root, f"{{{OPENSEARCH}}}Url")
    url.set("type", ACQUISITION)
    url.set("template", clean(template))
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))


def _latest(page: Page[Listed], default: datetime) -> datetime:
    return max((x.book.created_at or default for x in page.items), default=default)


class AtomCatalogue:
    """The catalogue's feeds as OPDS 1.2 Atom under ``/opds``; paths given are below it."""

    base = "/opds"
    media_type = ATOM_MEDIA_TYPE

    def root(self, entries: Iterable[Nav], updated: datetime) -> bytes:
        feed = Feed("root", "folio", self.base, NAVIGATION, updated)
        feed.navigation([replace(n, href=self.base + n.href) for n in entries], updated)
        return feed.to_bytes()

    def books(self, key: str, title: str, path: str, page: Page[Listed], up: str) -> bytes:
        href = self.base + path
        updated = _latest(page, datetime.now(UTC))
        feed = Feed(key, title, page_href(href, page.number), ACQUISITION, updated)
        feed.link("up", self.base + up, NAVIGATION)
        feed.pages(page, href, ACQUISITION)
        feed.books(page.items)
        return feed.to_bytes()

    def groups(self, key: str, title: str, path: str, page: Page[Group], listing: Listing) -> bytes:
        href = self.base + path
        feed = Feed(key, title, page_href(href, page.number), NAVIGATION, datetime.now(UTC))
        feed.link("up", self.base, NAVIGATION)
        feed.pages(page, href, NAVIGATION)
        feed.groups(page, self.base + listing.path, listing.key, listing.unnamed)
        return feed.to_bytes()
