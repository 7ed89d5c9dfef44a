"""The addresses both OPDS versions write the same way: a feed's page, its RFC 5005 page links, a
book's kept file. The Atom (``opds_atom``) and JSON (``opds_json``) builders only dress them."""

from __future__ import annotations

from typing import Any

from folio.app.catalogue import Page
from folio.domain.books import Book


def page_href(href: str, number: int) -> str:
    """``href`` (which may hold a query) at page ``number`` (page 1 is ``href`` itself)."""
    return href if number == 1 else f"{href}{'&' if '?' in href else '?'}page={number}"


def page_links(page: Page[Any], href: str) -> list[tuple[str, str]]:
    """The ``(rel, href)`` pagination links of ``page`` of the feed at ``href``: first, previous
    (none on the first page), next (none on the last), last."""
    links = [("first", page_href(href, 1))]
    if page.number > 1:
        links.append(("previous", page_href(href, min(page.number - 1, page.last))))
    if page.number < page.last:
        links.append(("next", page_href(href, page.number + 1)))
    links.append(("last", page_href(href, page.last)))
    return links


def file_href(book: Book) -> str:
    """Where the catalogue serves ``book``'s kept file (its extension names the file's type)."""
    return f"/opds/books/{book.id}/file.{book.format.value}"
