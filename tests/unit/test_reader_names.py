"""Same-titled books get names a reader can tell apart, and a reference may use such a name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from folio.adapters.embeddings.hashing import HashingEmbedder
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.library import Library
from folio.domain.books import Book, BookFormat, Page, reader_names
from folio.domain.errors import BookError, BookErrorCode

TEXT = "word " * 100


def book(book_id: str, title: str, fmt: BookFormat, source: str) -> Book:
    page = Page(1, "1", 0, len(TEXT))
    return Book(book_id, title, None, fmt, source, f"h-{book_id}", 1, len(TEXT), (), (page,))


def library(*books: Book) -> Library:
    store = InMemoryLibrary()
    for b in books:
        store.add(b, TEXT, [], HashingEmbedder(8).embed([]))
    return Library(store)


TXT = book("11111111aa", "Frankenstein", BookFormat.TXT, "frankenstein.txt")
EPUB = book("22222222bb", "FRANKENSTEIN", BookFormat.EPUB, "pg84.epub")
EPUB_2 = book("33333333cc", "Frankenstein", BookFormat.EPUB, "frankenstein-1831.epub")
EMMA = book("44444444dd", "Emma", BookFormat.EPUB, "emma.epub")


def test_a_title_no_other_book_has_is_its_name() -> None:
    assert reader_names([TXT, EMMA]) == {TXT.id: "Frankenstein", EMMA.id: "Emma"}


def test_same_titles_are_told_apart_by_format_then_file_then_id() -> None:
    names = reader_names([TXT, EPUB, EPUB_2, EMMA])
    assert names[TXT.id] == "Frankenstein (TXT)"
    assert names[EPUB.id] == "FRANKENSTEIN (EPUB, pg84.epub)"
    assert names[EPUB_2.id] == "Frankenstein (EPUB, frankenstein-1831.epub)"
    twin = replace(EPUB_2, id="55555555ee")
    assert reader_names([EPUB_2, twin])[twin.id] == (
        "Frankenstein (EPUB, frankenstein-1831.epub, 55555555)"
    )


def test_the_library_names_its_books_and_resolves_a_name() -> None:
    shelf = library(TXT, EPUB, EMMA)
    assert [b.name for b in shelf.list_books()] == [
        "Emma",
        "Frankenstein (TXT)",
        "FRANKENSTEIN (EPUB)",
    ]
    assert shelf.resolve("frankenstein (epub)").id == EPUB.id
    assert shelf.resolve("Frankenstein (TXT)").id == TXT.id
    assert shelf.get(EPUB.id).name == "FRANKENSTEIN (EPUB)"
    assert shelf.resolve("Emma").name == "Emma"


def test_a_short_title_with_the_format_names_a_book_with_a_long_title() -> None:
    long_txt = replace(TXT, title="Frankenstein; or, the Modern Prometheus")
    long_epub = replace(EPUB, title="Frankenstein; or, the Modern Prometheus")
    shelf = library(long_txt, long_epub, EMMA)
    assert shelf.resolve("Frankenstein (EPUB)").id == long_epub.id
    assert shelf.resolve("frankenstein txt").id == long_txt.id
    with pytest.raises(BookError) as caught:
        shelf.resolve("Modern Prometheus")  # both: the reader must say which
    assert caught.value.code == BookErrorCode.AMBIGUOUS


def test_an_ambiguous_reference_lists_the_names_to_use() -> None:
    with pytest.raises(BookError) as caught:
        library(TXT, EPUB).resolve("frank")
    assert caught.value.code == BookErrorCode.AMBIGUOUS
    message = caught.value.message
    assert "Frankenstein (TXT) (id 11111111)" in message
    assert "FRANKENSTEIN (EPUB) (id 22222222)" in message
    assert "Use its name as shown or the id." in message
