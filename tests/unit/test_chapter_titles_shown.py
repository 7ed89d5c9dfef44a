"""Unread chapters: a title that only numbers its chapter is shown, a descriptive one withheld;
each chapter carries its first and last page."""

from __future__ import annotations

from folio.domain.books import Book, BookFormat, Chapter, Page
from folio.domain.chapter_labels import is_bare_label
from folio.entrypoints.serialize import book_detail

TEXT_CHARS = 3000


def book() -> Book:
    pages = tuple(Page(n, str(n), (n - 1) * 500, n * 500) for n in range(1, 7))
    chapters = (
        Chapter(1, "Chapter 1", 0),
        Chapter(2, "Chapter 2. The Murder of William", 1000),
        Chapter(3, "CHAPTER III", 2000),
    )
    whole = Book("b1", "T", None, BookFormat.TXT, "t.txt", "h", 6, TEXT_CHARS, chapters, pages)
    return whole.with_position(whole.position_at_chapter("1"))


def test_an_unread_title_is_shown_only_when_it_just_numbers_the_chapter() -> None:
    titles = [c["title"] for c in book_detail(book())["chapters"]]
    assert titles == ["Chapter 1", None, "CHAPTER III"]
    revealed = [c["title"] for c in book_detail(book(), reveal_unread=True)["chapters"]]
    assert revealed[1] == "Chapter 2. The Murder of William"


def test_each_chapter_has_its_first_and_last_page() -> None:
    pages = [(c["page"], c["page_end"]) for c in book_detail(book())["chapters"]]
    assert pages == [("1", "2"), ("3", "4"), ("5", "6")]


def test_bare_labels() -> None:
    assert all(map(is_bare_label, ["Chapter XIII", "LETTER 4", "Part 2, Chapter 3", "XIII."]))
    assert not any(map(is_bare_label, ["XIII. The Fight", "The Whale", "Chapter 5 The Storm"]))
