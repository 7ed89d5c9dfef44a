"""A question naming a chapter ("What happened in Part II, Chapter IV?"): the reference is read in
the book's own terms, is no one's name, and the recap of a book in parts covers what it names or
says which chapters it could mean (only those the reader has reached)."""

from __future__ import annotations

import logging

import pytest

from folio.agent.offline.strategy import asked_names
from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext
from folio.domain.books import Chapter, Chunk, Page
from folio.domain.chapter_labels import reference_in, without_references
from folio.domain.passages import RECAP, Recap
from tests.unit.test_book_tools import StoryLibrary, _book, _stored


@pytest.mark.parametrize(
    ("message", "reference"),
    [
        ("What happened in Part II, Chapter IV?", "Part II, Chapter IV"),
        ("what happened in part 2 chapter 4", "part 2 chapter 4"),
        ("What happens in chapter 8?", "chapter 8"),
        ("Can you recap Chapter one?", "Chapter one"),
        ("What happens in Act I, Scene 2?", "Act I, Scene 2"),
        ("Sum up ch. 6 please", "ch. 6"),
        ("Why does Macbeth act I wonder?", None),  # the pronoun after a verb
        ("What happens in chapter 2 of part 2?", "chapter 2 of part 2"),
        ("what happened in part I?", "part I"),
        ("the part I liked best", None),
        ("Who wrote the letter one day?", None),  # a number in words, in prose
        ("Who is Victor?", None),
        ("What happened on page 5?", None),
    ],
)
def test_the_chapter_a_message_names_is_read_as_written(message: str, reference: str | None):
    assert reference_in(message) == reference
    blanked = without_references(message)
    assert len(blanked) == len(message)
    assert (blanked == message) == (reference is None)


def test_a_chapter_reference_is_no_one_s_name() -> None:
    assert asked_names("What happened in Chapter 5?") == []
    assert asked_names("What did Victor do in Part II, Chapter IV?") == ["Victor"]
    assert asked_names("Who is Captain Ahab?") == ["Captain Ahab"]


PARTS = [
    ("Part I, Chapter I. The Trail", "The sled ran down the frozen river all day."),
    ("Part I, Chapter II. The She-Wolf", "The she-wolf drew the dogs away from the fire."),
    ("Part II, Chapter I. The Lair", "The cub was born in a cave under the bank."),
    ("Part II, Chapter II. The Grey Cub", "The grey cub learned the wall of the world."),
    ("Part III, Chapter I. The Makers of Fire", "Grey Beaver named him and tied him up."),
]


def parts_story() -> StoryLibrary:
    """A book in parts, each numbering its chapters from one, read to Part II, Chapter II."""
    text, pages, chunks, chapters = "", [], [], []
    for number, (title, body) in enumerate(PARTS, start=1):
        start = len(text)
        text += f"{title}\n\n{body}\n\n"
        pages.append(Page(number, str(number), start, len(text)))
        chapters.append(Chapter(number, title, start))
        chunks.append(Chunk(f"wf-{number}", "wf", number - 1, text[start:], start, len(text),
                            number, number, title, number))  # fmt: skip
    book = _book("wf", "The Wild", text, chapters, pages)
    return _stored(book.with_position(book.position_at_chapter("part 2 chapter 2")), text, chunks)


def recap(story: StoryLibrary, chapter: str):
    ctx = ToolContext(book=story.book)
    return default_registry().execute(RECAP, ctx, story.services(), {"chapter": chapter})


def test_a_part_s_recap_covers_every_chapter_of_it_read() -> None:
    story = parts_story()
    result = recap(story, "part 1")
    assert result.success and isinstance(result.data, Recap)
    assert {p.chapter for p in result.data.passages} == {
        "Part I, Chapter I. The Trail",
        "Part I, Chapter II. The She-Wolf",
    }
    one = recap(story, "Part II, Chapter I")
    assert {p.chapter for p in one.data.passages} == {"Part II, Chapter I. The Lair"}


def test_a_chapter_number_several_parts_use_is_asked_back_naming_only_chapters_reached() -> None:
    result = recap(parts_story(), "chapter 1")
    assert not result.success and result.error_code == "AMBIGUOUS"
    error = result.error or ""
    assert "Part I, Chapter I. The Trail" in error and "Part II, Chapter I. The Lair" in error
    assert "Makers of Fire" not in error  # Part III is past the position: never named
    assert "'part 1 chapter 1'" in error  # how to say which


def test_a_chapter_the_book_lacks_is_told_with_the_chapters_it_has_reached() -> None:
    result = recap(parts_story(), "chapter 8")
    assert not result.success and result.error_code == "NOT_FOUND"
    error = result.error or ""
    assert "has no chapter 'chapter 8'" in error and "Part I, Chapter I. The Trail" in error
    assert "Makers of Fire" not in error
    past = recap(parts_story(), "part 3")
    assert not past.success and past.error_code == "NOT_ALLOWED"
    assert "Makers of Fire" not in (past.error or "")


def test_a_chapter_number_read_in_one_part_only_is_that_chapter() -> None:
    """Emma's "chapter 10", read in its first volume only: that chapter's recap, not a question
    back listing the later volumes' chapter 10."""
    story = parts_story()
    result = recap(story, "chapter 2")  # Part I's and Part II's chapter 2 are both read
    assert not result.success and result.error_code == "AMBIGUOUS"
    book = story.book.with_position(story.book.position_at_chapter("part 2 chapter 1"))
    ctx = ToolContext(book=book)
    one = default_registry().execute(RECAP, ctx, story.services(), {"chapter": "chapter 2"})
    assert one.success and {p.chapter for p in one.data.passages} == {
        "Part I, Chapter II. The She-Wolf"
    }


def test_a_recap_of_a_part_is_headed_as_the_reader_named_it() -> None:
    from folio.agent.offline.strategy import reader_answer
    from folio.domain.passages import ToolOutcome

    data = recap(parts_story(), "part 1").data
    answer = reader_answer(ToolOutcome(True, payload=data), "part 1")
    assert answer.startswith("Part 1, in the book's words:\n- Part I, Chapter I. The Trail")
    assert reader_answer(ToolOutcome(True, payload=data)).startswith("The story up to")


def test_a_chapter_of_a_part_is_that_one() -> None:
    result = recap(parts_story(), "chapter 2 of part 2")
    assert result.success and {p.chapter for p in result.data.passages} == {
        "Part II, Chapter II. The Grey Cub"
    }


def test_a_refusal_is_logged_as_an_answer_not_a_fault(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="folio.agent.tools"):
        refused = recap(parts_story(), "part 3")
    assert not refused.success
    [record] = [r for r in caplog.records if "tool=recap_story" in r.getMessage()]
    assert record.levelno == logging.INFO


def test_a_chapter_asked_back_is_said_as_it_is() -> None:
    """No "I cannot do that:" before a question back or a chapter the book lacks."""
    from folio.agent.offline.strategy import reader_answer
    from folio.domain.passages import ToolOutcome

    for chapter in ("chapter 1", "chapter 8"):
        failed = recap(parts_story(), chapter)
        answer = reader_answer(ToolOutcome(False, error=failed.error, error_code=failed.error_code))
        assert answer == failed.error and not answer.startswith("I cannot do that")
    past = recap(parts_story(), "part 3")
    told = reader_answer(ToolOutcome(False, error=past.error, error_code=past.error_code))
    assert told.startswith("I cannot do that: part 3 lies past the reader's position")
