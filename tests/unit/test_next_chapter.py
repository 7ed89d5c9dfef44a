""" "I finished the next chapter" (``folio position --next``, ``/next``): the position moves through
the chapter the reader is in, front matter aside, and says so when there is nothing further."""

from __future__ import annotations

import pytest

from folio.domain.books import Book, BookFormat, Chapter, Page, ReadingPosition, SectionKind
from folio.domain.errors import BookError

LEN = 1000
CHAPTERS = (
    Chapter(1, "Contents", 0, SectionKind.FRONT_MATTER),
    Chapter(2, "Letter 1", LEN),
    Chapter(3, "Chapter 1", 2 * LEN),
    Chapter(4, "Chapter 2", 3 * LEN),
)
BOOK = Book(
    "b1", "A Novel", None, BookFormat.TXT, "n.txt", "h", 4, 4 * LEN, CHAPTERS,
    tuple(Page(n + 1, str(n + 1), n * LEN, (n + 1) * LEN) for n in range(4)),
)  # fmt: skip


def after_next(offset: int) -> str:
    book = BOOK.with_position(ReadingPosition(offset))
    return book.with_position(book.position_after_next_chapter()).describe_position()


def test_next_reads_through_the_chapter_the_reader_is_in() -> None:
    assert "Letter 1" in after_next(0)  # at the very start: the contents are not a chapter read
    assert "Chapter 1" in after_next(2 * LEN)  # Letter 1 finished: Chapter 1 is next
    assert "Chapter 1" in after_next(2 * LEN + 10)  # in the middle of Chapter 1
    assert "Chapter 2" in after_next(3 * LEN)


def test_next_is_refused_when_nothing_follows_or_nothing_is_hidden() -> None:
    with pytest.raises(BookError, match="no next chapter"):
        BOOK.with_position(ReadingPosition(4 * LEN)).position_after_next_chapter()
    with pytest.raises(BookError, match="set how far you have read first"):
        BOOK.position_after_next_chapter()
