"""A reading position carried to a book's new edition: through the same chapter, right after the
same text, and, where neither can be found, moved back, never forward."""

from __future__ import annotations

from folio.domain.books import Book, BookFormat, Chapter, Page, PositionKind, ReadingPosition
from folio.domain.editions import Carried, carry_position


def edition(chapters: list[tuple[str, str]]) -> tuple[Book, str]:
    """A book of ``(title, body)`` chapters, one page per chapter, and its text."""
    text, found, pages = "", [], []
    for n, (title, body) in enumerate(chapters, start=1):
        start = len(text)
        text += f"{title}\n\n{body}\n\n"
        found.append(Chapter(n, title, start))
        pages.append(Page(n, str(n), start, len(text)))
    book = Book("b", "B", None, BookFormat.TXT, "b.txt", "h", len(pages), len(text),
                tuple(found), tuple(pages))  # fmt: skip
    return book, text


ONE = " ".join(f"one{i}" for i in range(80))
TWO = " ".join(f"two{i}" for i in range(80))
THREE = " ".join(f"three{i}" for i in range(80))


def test_a_chapter_position_stays_through_the_chapter_of_the_same_title() -> None:
    old, old_text = edition([("Chapter 1", ONE), ("Chapter 2", TWO), ("Chapter 3", THREE)])
    new, new_text = edition([("Chapter 1", ONE + " An added paragraph."), ("Chapter 2", TWO),
                             ("Chapter 3", THREE)])  # fmt: skip
    old = old.with_position(old.position_at_chapter("2"))

    carried = carry_position(old, old_text, new, new_text)

    assert carried.how is Carried.CHAPTER
    assert carried.position.char_offset == new.chapter_end(new.chapters[1])
    assert new.with_position(carried.position).describe_position().startswith("through Chapter 2")


def test_a_percentage_lands_right_after_the_same_text() -> None:
    old, old_text = edition([("Chapter 1", ONE), ("Chapter 2", TWO)])
    new, new_text = edition([("Prologue", THREE), ("Chapter 1", ONE), ("Chapter 2", TWO)])
    offset = old_text.index("two40") + len("two40")
    old = old.with_position(ReadingPosition(offset, PositionKind.PERCENT, 60.0, source="Kobo"))

    carried = carry_position(old, old_text, new, new_text)

    assert carried.how is Carried.TEXT
    assert new_text[: carried.position.char_offset].endswith("two40")
    assert carried.position.source == "Kobo" and carried.position.kind is PositionKind.PERCENT


def test_text_that_cannot_be_found_moves_the_reader_back_never_forward() -> None:
    old, old_text = edition([("Chapter 1", ONE), ("Chapter 2", TWO)])
    rewritten = " ".join(f"new{i}" for i in range(80))
    new, new_text = edition([("Chapter 1", ONE), ("Chapter 2", rewritten)])
    offset = old_text.index("two40")
    old = old.with_position(ReadingPosition(offset, PositionKind.PAGE, 2.0))

    carried = carry_position(old, old_text, new, new_text)

    assert carried.how is Carried.CHAPTER_START
    assert carried.position.char_offset == new.chapters[1].char_start

    renamed, renamed_text = edition([("Part One", ONE), ("Part Two", rewritten)])
    guessed = carry_position(old, old_text, renamed, renamed_text)
    assert guessed.how is Carried.FRACTION
    assert guessed.position.char_offset is not None
    assert guessed.position.char_offset <= offset * len(renamed_text) // len(old_text)


def test_the_whole_book_and_nothing_read_stay_as_they_were() -> None:
    old, old_text = edition([("Chapter 1", ONE)])
    new, new_text = edition([("Chapter 1", ONE + " More.")])
    assert carry_position(old, old_text, new, new_text).position.char_offset is None
    finished = old.with_position(old.position_at_percent(100))
    assert carry_position(finished, old_text, new, new_text).position.char_offset == len(new_text)
