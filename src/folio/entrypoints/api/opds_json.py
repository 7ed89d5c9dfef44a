"""The same catalogue as OPDS 2.0 JSON (``application/opds+json``) under ``/opds/v2``: feeds with
``metadata``, ``links`` (self, start, up, a templated search, RFC 5005 pages), ``navigation`` and
``publications``, each publication with an acquisition link to the kept file.

KOReader's browser (opdsbrowser.lua ``genItemTableFromCatalog2``) reads ``navigation[].href``,
``publications[].metadata.title/author``, ``links[].rel`` (``search``: ``{?query}`` becomes
``?query=``), and each publication's link whose rel starts with the acquisition relation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from folio.app.catalogue import Group, Listed, Page
from folio.domain.book_files import media_type
from folio.entrypoints.api.opds_common import ACQUIRE, Listing, Nav, clean, stamp
from folio.entrypoints.api.opds_links import file_href, page_href, page_links

OPDS_JSON = "application/opds+json"


def _link(rel: str, href: str, **more: Any) -> dict[str, Any]:
    return {"rel": rel, "href": href, "type": OPDS_JSON, **more}


class JsonCatalogue:
    """The catalogue's feeds as OPDS 2.0 under ``/opds/v2``; paths given are below it."""

    base = "/opds/v2"
    media_type = OPDS_JSON

    def _feed(self, title: str, href: str, up: str | None, **more: Any) -> dict[str, Any]:
        links = [
            _link("self", href),
            _link("start", self.base),
            _link("search", self.base + "/search{?query}", templated=True),
        ]
        if up is not None:
            links.append(_link("up", self.base + up))
        return {"metadata": {"title": clean(title)}, "links": links, **more}

    def _pages(self, feed: dict[str, Any], page: Page[Any], href: str) -> None:
        feed["metadata"].update(
            numberOfItems=page.total, itemsPerPage=page.per_page, currentPage=page.number
        )
        feed["links"].extend(_link(rel, at) for rel, at in page_links(page, href))

    def root(self, entries: Iterable[Nav], updated: datetime) -> bytes:
        navigation = [
            {"href": self.base + n.href, "title": n.title, "type": OPDS_JSON, "rel": n.rel}
            for n in entries
        ]
        feed = self._feed("folio", self.base, None, navigation=navigation)
        feed["metadata"]["modified"] = stamp(updated)
        return _dump(feed)

    def books(self, key: str, title: str, path: str, page: Page[Listed], up: str) -> bytes:
        href = self.base + path
        feed = self._feed(title, page_href(href, page.number), up)
        self._pages(feed, page, href)
        feed["publications"] = [_publication(item) for item in page.items]
        return _dump(feed)

    def groups(self, key: str, title: str, path: str, page: Page[Group], listing: Listing) -> bytes:
        href = self.base + path
        feed = self._feed(title, page_href(href, page.number), "")
        self._pages(feed, page, href)
        feed["navigation"] = [
            {
                "href": f"{self.base}{listing.path}?{urlencode({'name': g.name})}",
                "title": clean(g.name or listing.unnamed),
                "type": OPDS_JSON,
                "rel": "subsection",
                "properties": {"numberOfItems": g.count},
            }
            for g in page.items
        ]
        return _dump(feed)


def _publication(item: Listed) -> dict[str, Any]:
    book = item.book
    metadata: dict[str, Any] = {
        "@type": "http://schema.org/Book",
        "identifier": f"urn:folio:book:{book.id}",
        "title": clean(book.name),
        "modified": stamp(book.created_at),
    }
    if book.author:
        metadata["author"] = {"name": clean(book.author)}
    if book.series:
        position = {"position": book.series_index} if book.series_index is not None else {}
        metadata["belongsTo"] = {"series": {"name": clean(book.series), **position}}
    links = []
    if item.has_file:
        links.append(
            {
                "rel": ACQUIRE,
                "href": file_href(book),
                "type": media_type(book.format),
                "title": book.format.name,
            }
        )
    return {"metadata": metadata, "links": links, "images": []}


def _dump(feed: dict[str, Any]) -> bytes:
    return json.dumps(feed, ensure_ascii=False).encode("utf-8")
