"""One percentage everywhere: `folio books`, `folio show` (the position's description) and the chat
prompt round how much is read by one function, so a list and a book's page never differ by one
(18.53% was "18%" in the list, rounded twice, and "19%" on the book)."""

from __future__ import annotations

import pytest

from folio.domain.books import Book, BookFormat, Chapter, PositionKind, ReadingPosition
from folio.entrypoints.cli.books import _short_position
from folio.entrypoints.cli.chat import prompt_text


def _book(offset: int) -> Book:
    book = Book("b1", "A Book", None, BookFormat.TXT, "a.txt", "h", 0, 10_000,
                (Chapter(1, "Chapter 1", 0),))  # fmt: skip
    return book.with_position(ReadingPosition(offset, PositionKind.PERCENT, offset / 100))


@pytest.mark.parametrize(
    ("offset", "shown"), [(1853, "19%"), (1850, "18%"), (2250, "22%"), (40, "0.4%"), (9999, "100%")]
)
def test_the_list_the_book_and_the_prompt_show_one_percentage(offset: int, shown: str) -> None:
    book = _book(offset)
    assert book.describe_position() == f"through {shown} of the book (Chapter 1)"
    assert _short_position(book) == f"{shown} (Chapter 1)"
    no_chapters = Book("b2", "Other", None, BookFormat.TXT, "o.txt", "h2", 0, 10_000)
    no_chapters = no_chapters.with_position(ReadingPosition(offset, PositionKind.PERCENT))
    assert f"· {shown} ·" in prompt_text(no_chapters)
