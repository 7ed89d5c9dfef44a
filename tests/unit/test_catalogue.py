"""The catalogue use case (recent, by author, by series, search, pages, files) on the in-memory
library and file store, and the OPDS Atom it renders to (links KOReader follows, escaping)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree

from folio.adapters.storage.memory.book_files import InMemoryBookFiles
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.catalogue import Catalogue, Listed
from folio.app.library import Library
from folio.domain.books import Book, BookFormat
from folio.domain.errors import BookError
from folio.entrypoints.api.opds_atom import ACQUIRE, ACQUISITION, ATOM, OPENSEARCH, Feed

T0 = datetime(2026, 1, 1, tzinfo=UTC)
A = f"{{{ATOM}}}"


def _book(n: int, title: str, author: str | None = None, **fields: object) -> Book:
    digest = hashlib.sha256(title.encode()).hexdigest()
    return Book(
        id=f"b{n}", title=title, author=author, format=BookFormat.EPUB, source_name=f"{n}.epub",
        content_hash=digest, page_count=10, char_count=100,
        created_at=T0 + timedelta(days=n), **fields,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture
def catalogue(tmp_path: Path) -> tuple[Catalogue, InMemoryBookFiles]:
    store = InMemoryLibrary()
    books = [
        _book(1, "Frankenstein", "Mary Shelley"),
        _book(2, "The Last Man", "Mary Shelley"),
        _book(3, "Emma", "Jane Austen"),
        _book(4, "Persuasion", "Jane Austen", series="Novels", series_index=2.0),
        _book(5, "Sense and Sensibility", "Jane Austen", series="Novels", series_index=1.0),
        _book(6, "Anonymous Tales"),
    ]
    for book in books:
        store.add(book, "text", [])
    files = InMemoryBookFiles(in_use=lambda h: True)
    for book in books[:5]:  # the last was imported before files were kept
        path = tmp_path / book.source_name
        path.write_bytes(book.title.encode())
        files.put(book.content_hash, path)
    return Catalogue(Library(store), files, per_page=2), files


def _titles(items: list[Listed]) -> list[str]:
    return [x.book.title for x in items]


def test_recent_lists_the_last_added_first_a_page_at_a_time(
    catalogue: tuple[Catalogue, InMemoryBookFiles],
) -> None:
    cat, _ = catalogue
    first, third = cat.recent(1), cat.recent(3)
    assert _titles(first.items) == ["Anonymous Tales", "Sense and Sensibility"]
    assert (first.total, first.last, third.start_index) == (6, 3, 5)
    assert _titles(third.items) == ["The Last Man", "Frankenstein"]
    assert cat.recent(4).items == []


def test_authors_and_series_group_the_books(catalogue: tuple[Catalogue, InMemoryBookFiles]) -> None:
    cat, _ = catalogue
    wide = Catalogue(cat._library, cat._files)  # one page
    authors = [(g.name, g.count) for g in wide.authors().items]
    assert authors == [("Jane Austen", 3), ("Mary Shelley", 2), ("", 1)]
    assert [(g.name, g.count) for g in wide.series().items] == [("Novels", 2)]
    assert _titles(wide.in_series("novels").items) == ["Sense and Sensibility", "Persuasion"]
    assert _titles(wide.by_author("mary  shelley").items) == ["Frankenstein", "The Last Man"]
    assert _titles(wide.by_author("").items) == ["Anonymous Tales"]


def test_search_matches_every_word_of_title_author_or_series_else_the_closest_titles(
    catalogue: tuple[Catalogue, InMemoryBookFiles],
) -> None:
    cat = Catalogue(catalogue[0]._library, catalogue[1])
    assert _titles(cat.search("shelley man").items) == ["The Last Man"]
    assert _titles(cat.search("austen novels").items) == ["Persuasion", "Sense and Sensibility"]
    assert _titles(cat.search("Frankenstien").items) == ["Frankenstein"]  # misspelt
    assert cat.search("   ").items == [] and cat.search("zzzz qqqq").items == []


def test_a_book_without_a_kept_file_is_listed_without_one(
    catalogue: tuple[Catalogue, InMemoryBookFiles],
) -> None:
    cat, _ = catalogue
    listed = {x.book.title: x.has_file for x in Catalogue(cat._library, cat._files).all().items}
    assert listed["Anonymous Tales"] is False and listed["Emma"] is True
    book, stored = cat.file("b3")
    assert book.title == "Emma" and b"".join(stored.blocks) == b"Emma"
    with pytest.raises(BookError) as raised:
        cat.file("b6")
    assert raised.value.is_not_found


def test_the_feed_links_pages_and_files_as_koreader_reads_them(
    catalogue: tuple[Catalogue, InMemoryBookFiles],
) -> None:
    cat, _ = catalogue
    page = cat.recent(2)
    feed = Feed("recent", "Recently added", "/opds/recent?page=2", ACQUISITION, T0)
    feed.pages(page, "/opds/recent", ACQUISITION)
    feed.books(page.items)
    root = etree.fromstring(feed.to_bytes())
    assert root.tag == f"{A}feed" and root.nsmap[None] == ATOM  # unprefixed, as KOReader matches
    links = {link.get("rel"): link.get("href") for link in root.findall(f"{A}link")}
    assert links["next"] == "/opds/recent?page=3" and links["previous"] == "/opds/recent"
    assert root.findtext(f"{{{OPENSEARCH}}}totalResults") == "6"
    entries = root.findall(f"{A}entry")
    assert [e.findtext(f"{A}title") for e in entries] == ["Persuasion", "Emma"]
    acquire = entries[0].find(f"{A}link[@rel='{ACQUIRE}']")
    assert acquire is not None and acquire.get("type") == "application/epub+zip"
    assert acquire.get("href") == "/opds/books/b4/file.epub"


def test_titles_are_escaped_and_characters_xml_cannot_hold_are_dropped() -> None:
    book = _book(1, 'Tom & Jerry <b>"bold"</b>\x00\x1b', "A\x07uthor")
    feed = Feed("x", "t", "/opds/x", ACQUISITION, T0)
    feed.books([Listed(book, False)])
    data = feed.to_bytes()
    entry = etree.fromstring(data).find(f"{A}entry")
    assert entry is not None
    assert entry.findtext(f"{A}title") == 'Tom & Jerry <b>"bold"</b>'
    assert entry.findtext(f"{A}author/{A}name") == "Author"
    assert entry.find(f"{A}link[@rel='{ACQUIRE}']") is None  # no kept file: no download
    assert b"<b>" not in data
