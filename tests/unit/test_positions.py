"""Reading positions in the book's own words: which chapter a reader means, and how a position
is said back to them (and to the model)."""

from __future__ import annotations

import pytest

from folio.agent.prompt_builder import conversation_system_prompt
from folio.domain.books import Book, BookFormat, Chapter, Page, PositionKind, ReadingPosition
from folio.domain.chapter_labels import LabelPart, label_parts, parse_reference, to_number
from folio.domain.errors import BookError, BookErrorCode

CHAPTER_LEN = 1000


def make_book(titles: list[str], *, pages_per_chapter: int = 2) -> Book:
    chapters = tuple(Chapter(i, t, (i - 1) * CHAPTER_LEN) for i, t in enumerate(titles, 1))
    size = CHAPTER_LEN // pages_per_chapter
    total = len(titles) * CHAPTER_LEN
    pages = tuple(Page(n + 1, str(n + 1), n * size, (n + 1) * size) for n in range(total // size))
    return Book("b1", "A Novel", "Someone", BookFormat.TXT, "n.txt", "h", len(pages), total,
                chapters, pages)  # fmt: skip


FRANKENSTEIN = make_book(
    [f"Letter {n}" for n in range(1, 5)] + [f"Chapter {n}" for n in range(1, 25)]
)
PARTS = make_book(
    ["PART I, CHAPTER I. THE TRAIL", "CHAPTER II. THE SHE-WOLF", "PART II, CHAPTER I. THE LAIR",
     "CHAPTER II. THE GREY CUB", "CHAPTER III. THE LAW OF MEAT"]
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "number"),
    [("5", 5), ("V", 5), ("v", 5), ("five", 5), ("Fifth", 5), ("XLII", 42), ("iv", 4),
     ("twelfth", 12), ("Emma", None), ("mixed", None)],
)  # fmt: skip
def test_numbers_in_any_spelling(text: str, number: int | None) -> None:
    assert to_number(text) == number


def test_label_parts_read_the_numbered_divisions_of_a_title() -> None:
    assert label_parts("PART I, CHAPTER III. The Fight") == (
        LabelPart("part", 1),
        LabelPart("chapter", 3),
    )
    assert label_parts("XLII. The Whiteness of the Whale") == (LabelPart(None, 42),)
    assert label_parts("CHAPTER V.") == (LabelPart("chapter", 5),)
    assert label_parts("The Whiteness of the Whale") == ()
    assert label_parts("Preface") == ()


def test_a_reference_is_a_label_only_when_made_of_keywords_and_numbers() -> None:
    assert parse_reference("chapter v").parts == (LabelPart("chapter", 5),)
    assert parse_reference(" 7 ").parts == (LabelPart(None, 7),)
    assert parse_reference("the chapter about the whale").parts == ()


@pytest.mark.parametrize(
    "ref", ["5", "Chapter 5", "chapter 5", "CHAPTER V", "V", "five", "Chapter 5."]
)
def test_a_chapter_number_means_the_chapter_the_book_calls_so(ref: str) -> None:
    """Not the fifth entry of the table of contents (that would be Chapter 1, after 4 letters)."""
    position = FRANKENSTEIN.position_at_chapter(ref)
    chapter5 = FRANKENSTEIN.chapters[8]
    assert chapter5.title == "Chapter 5"
    assert position == ReadingPosition(FRANKENSTEIN.chapter_end(chapter5), PositionKind.CHAPTER, 9)


def test_a_bare_number_prefers_a_chapter_to_a_letter_and_letters_are_named_in_full() -> None:
    assert FRANKENSTEIN.find_chapters("2") == [FRANKENSTEIN.chapters[5]]
    assert FRANKENSTEIN.find_chapters("Letter 2") == [FRANKENSTEIN.chapters[1]]


def test_chapters_inside_parts_are_ambiguous_until_the_part_is_named() -> None:
    with pytest.raises(BookError) as caught:
        PARTS.with_position(PARTS.position_at_percent(100)).position_at_chapter("2")
    assert caught.value.code is BookErrorCode.AMBIGUOUS
    assert "CHAPTER II. THE SHE-WOLF" in caught.value.message
    assert "CHAPTER II. THE GREY CUB" in caught.value.message
    assert PARTS.find_chapters("part 2 chapter 2") == [PARTS.chapters[3]]
    # a part alone: through its last chapter
    assert PARTS.find_chapters("Part II") == [PARTS.chapters[4]]


def test_a_refused_chapter_names_no_chapter_the_reader_has_not_reached() -> None:
    """Issue 36: 'its chapters run ... Chapter LXVII. Which Contains Births, Marriages, and
    Deaths' told a reader at Chapter III the last chapter's title."""
    early = PARTS.with_position(PARTS.position_at_chapter("part 1 chapter 2"))
    with pytest.raises(BookError) as missing:
        early.chapter_named("99")
    message = missing.value.message
    assert "THE SHE-WOLF" in message and "later ones are not named here" in message
    assert not any(w in message for w in ("LAIR", "GREY CUB", "LAW OF MEAT", "3"))
    with pytest.raises(BookError) as several:
        early.chapter_named("2")
    message = several.value.message
    assert "CHAPTER II. THE SHE-WOLF (p. 3)" in message and "GREY CUB" not in message
    assert "and chapters not named here." in message
    assert "p. 7" not in message and "2 chapters" not in message  # no page, no count of them
    with pytest.raises(BookError) as whole:
        PARTS.with_position(PARTS.position_at_percent(100)).chapter_named("99")
    assert "LAW OF MEAT" in whole.value.message  # read to the end: every chapter is named


def test_a_book_whose_reader_has_not_said_how_far_they_are_names_no_chapter() -> None:
    """``folio add --position`` and the web page's upload row check the position against a book
    with none set yet: the reader is telling folio how far they are, so nothing is named."""
    for ref in ("99", "2"):
        with pytest.raises(BookError) as refused:
            PARTS.chapter_named(ref)
        message = refused.value.message
        assert not any(w in message for w in ("TRAIL", "SHE-WOLF", "LAIR", "GREY CUB", "MEAT"))
        assert "p. " not in message


def test_a_chapter_is_found_by_words_of_its_title() -> None:
    assert PARTS.find_chapters("the grey cub") == [PARTS.chapters[3]]
    assert PARTS.find_chapters("law of meat") == [PARTS.chapters[4]]
    assert PARTS.find_chapters("the lai") == []  # whole words only
    assert len(PARTS.find_chapters("the")) == 5  # ambiguous: every title has it


@pytest.mark.parametrize("ref", ["chapter 2", "Chapter II", "ch. 2", "chap 2", "2", "II"])
def test_a_title_numbered_bare_is_a_chapter(ref: str) -> None:
    """The Ball and the Cross titles its chapters "II. The Religion of the Stipendiary
    Magistrate": "chapter 2" was refused ("has no chapter 'chapter 2'")."""
    book = make_book(["I. A Discussion Somewhat in the Air", "II. The Religion", "III. Some Old"])
    assert book.find_chapters(ref) == [book.chapters[1]]
    assert FRANKENSTEIN.find_chapters("ch. 5") == [FRANKENSTEIN.chapters[8]]
    assert FRANKENSTEIN.find_chapters("letter 2") == [FRANKENSTEIN.chapters[1]]


def test_a_book_without_numbered_titles_takes_the_number_in_reading_order() -> None:
    book = make_book(["Loomings", "The Carpet-Bag", "The Spouter-Inn"])
    assert book.find_chapters("2") == [book.chapters[1]]
    assert book.find_chapters("Chapter 3") == [book.chapters[2]]


@pytest.mark.parametrize("ref", ["0", "Chapter 25", "Letter 5", "nothing like this", "x" * 201])
def test_an_unknown_chapter_is_refused_naming_what_exists(ref: str) -> None:
    with pytest.raises(BookError) as caught:
        FRANKENSTEIN.position_at_chapter(ref)
    assert caught.value.code is BookErrorCode.INVALID_POSITION
    if len(ref) < 200:
        assert "Letter 1, Letter 2, ... Chapter 24 (28)" in caught.value.message
    else:
        assert "at most 200 characters" in caught.value.message


def test_positions_are_said_in_the_books_own_words() -> None:
    book = FRANKENSTEIN
    at = book.with_position(book.position_at_chapter("Chapter 5"))
    assert at.describe_position() == "through Chapter 5 (p. 18 of 56, 32%)"
    assert at.position_chapter == book.chapters[8]
    page = book.with_position(book.position_at_page("7"))
    assert page.describe_position() == "through p. 7 of 56 (Chapter 0, 12%)".replace(
        "Chapter 0", "Letter 4"
    )
    percent = book.with_position(book.position_at_percent(50))
    assert percent.describe_position() == "through 50% of the book (Chapter 10, p. 28 of 56)"
    assert book.describe_position() == "the whole book"
    start = book.with_position(book.position_at_percent(0))
    assert start.describe_position() == "the very beginning (nothing read yet, 0%)"


def test_the_system_prompt_names_the_last_chapter_read_never_an_index() -> None:
    at = FRANKENSTEIN.with_position(FRANKENSTEIN.position_at_chapter("5"))
    prompt = conversation_system_prompt(at)
    assert 'The last chapter they have read is "Chapter 5"' in prompt
    assert 'everything after the end of "Chapter 5" is unread' in prompt
    assert "chapter 9" not in prompt.lower()
    assert "finished the book" in conversation_system_prompt(FRANKENSTEIN)


PLAY = make_book(
    ["Actus Primus. Scoena Prima", "Actus Primus, Scena Secunda", "Actus Secundus. Scena Prima",
     "Actus Secundus, Scena Secunda", "Actus Secundus, Scena Tertia"]
)  # fmt: skip


@pytest.mark.parametrize(
    ("ref", "index"),
    [("act 1 scene 2", 2), ("Act II, Scene 1", 3), ("act 2 scene 3", 5), ("Act 2", 5),
     ("act i", 2), ("Actus Secundus, Scena Secunda", 4)],
)  # fmt: skip
def test_a_plays_scenes_are_named_with_their_act_in_any_spelling(ref: str, index: int) -> None:
    """The First Folio's Latin ordinals are numbers; an act alone means through its last scene."""
    assert PLAY.find_chapters(ref) == [PLAY.chapters[index - 1]]
    assert to_number("Secunda") == 2 and to_number("quintus") == 5


def test_a_scene_several_acts_have_is_asked_for_with_its_act() -> None:
    with pytest.raises(BookError) as caught:
        PLAY.with_position(PLAY.position_at_percent(100)).position_at_chapter("scene 2")
    assert caught.value.code is BookErrorCode.AMBIGUOUS
    assert "with its part ('act 1 scene 2')" in caught.value.message


def test_an_ambiguous_title_in_a_book_without_parts_is_asked_for_by_more_of_it() -> None:
    """A Bible's "Kings" names four books: no 'part 2 chapter 5' to suggest, as none is numbered."""
    bible = make_book(["The First Book of the Kings", "The Second Book of the Kings", "Ezra"])
    with pytest.raises(BookError) as caught:
        bible.with_position(bible.position_at_percent(100)).position_at_chapter("Kings")
    message = caught.value.message
    assert caught.value.code is BookErrorCode.AMBIGUOUS
    assert "The Second Book of the Kings" in message
    assert message.endswith("Name the one you mean by more of its title.")
    assert bible.find_chapters("Ezra") == [bible.chapters[2]]
