"""Front and back matter: known by their headings in any book, unread until the book is
finished; illustration markup never part of the text."""

from __future__ import annotations

import pytest

from folio.adapters.parsers.structure import matter_headings, strip_illustrations
from folio.domain.books import (
    Book,
    BookFormat,
    Chapter,
    Page,
    PositionKind,
    ReadingPosition,
    SectionKind,
)
from folio.domain.sections import is_matter_heading, section_kind
from folio.domain.window import ReadingWindow


@pytest.mark.parametrize(
    ("heading", "kind"),
    [("PREFACE.", SectionKind.COMMENTARY),
     ("Introduction by George Saintsbury", SectionKind.COMMENTARY),
     ("Editor’s Note", SectionKind.COMMENTARY),
     ("FOREWORD", SectionKind.COMMENTARY),
     ("Contents", SectionKind.FRONT_MATTER),
     ("TABLE OF CONTENTS", SectionKind.FRONT_MATTER),
     ("[Illustration: List of Illustrations.]", SectionKind.FRONT_MATTER),
     ("Notes", SectionKind.BACK_MATTER),
     ("APPENDIX B. The Letters", SectionKind.BACK_MATTER),
     ("Transcriber's Note", SectionKind.BACK_MATTER),
     ("Chapter 5", SectionKind.STORY),
     ("Letter 2. To Mrs. Saville", SectionKind.STORY),
     ("Prologue", SectionKind.STORY),
     ("CHAPTER 42. Notes on the Whale", SectionKind.STORY),
     ("The Introduction of Mr. Collins to the whole of the assembled neighbourhood at the ball",
      SectionKind.STORY)],
)  # fmt: skip
def test_a_heading_says_what_its_section_is(heading: str, kind: SectionKind) -> None:
    assert section_kind(heading) is kind


def test_a_sentence_is_no_heading() -> None:
    assert is_matter_heading("PREFACE.")
    assert not is_matter_heading("preface to a long story, he said,")
    assert not is_matter_heading("Notes were passed between them all evening.")


def test_front_matter_headings_before_the_story_become_sections() -> None:
    text = (
        "A NOVEL\n\nby Someone\n\nPREFACE.\n\nThe ending is happy; the villain is the uncle.\n\n"
        "CONTENTS\n\n   Chapter I      1\n\n   Dedication      vii\n\nChapter I\n\nIt begins.\n"
    )
    chapters = [(text.index("Chapter I\n\nIt"), "Chapter I")]
    assert matter_headings(text, chapters) == [
        (text.index("PREFACE"), "PREFACE"),
        (text.index("CONTENTS"), "CONTENTS"),
    ]
    assert matter_headings(text, []) == []  # no story chapter: nothing to set apart


def test_illustration_markup_is_removed_but_a_heading_inside_it_kept() -> None:
    text = (
        "before\n\n[Illustration]\n\n[Illustration: “He came down to see the place”\n\n"
        "[_Copyright 1894 by George Allen._]]\n\nafter\n\n[Illustration: ·A NOVEL·\n\n\n"
        "Chapter I.]\n\nIt begins."
    )
    out = strip_illustrations(text)
    assert "Illustration" not in out and "Copyright" not in out and "He came" not in out
    assert "before" in out and "after" in out and "Chapter I.\n\nIt begins." in out


def _book(position: ReadingPosition) -> Book:
    chapters = (
        Chapter(1, "Preface", 0, SectionKind.COMMENTARY),
        Chapter(2, "Chapter 1", 100),
        Chapter(3, "Chapter 2", 200),
        Chapter(4, "Notes", 300, SectionKind.BACK_MATTER),
    )
    pages = tuple(Page(i + 1, str(i + 1), i * 50, (i + 1) * 50) for i in range(8))
    book = Book("b", "T", None, BookFormat.TXT, "t.txt", "h", 8, 400, chapters, pages)
    return book.with_position(position)


def test_front_matter_counts_as_unread_until_the_story_is_finished() -> None:
    reading = _book(ReadingPosition(150, PositionKind.PERCENT, 37.5))
    window = ReadingWindow(reading)
    assert reading.story_start == 100 and window.start == 100
    assert [c.title for c in window.hidden_sections()] == ["Preface"]
    assert reading.find_chapters("1") == [reading.chapters[1]]  # story chapters are numbered

    finished = ReadingWindow(_book(ReadingPosition(300, PositionKind.CHAPTER, 3.0)))
    assert finished.finished and finished.start == 0 and finished.hidden_sections() == []
    whole = ReadingWindow(_book(ReadingPosition()))
    assert whole.finished and whole.start == 0


def test_a_reader_who_includes_the_matter_sees_it_before_finishing() -> None:
    included = _book(ReadingPosition(150, PositionKind.PERCENT, 37.5, include_matter=True))
    window = ReadingWindow(included)
    assert not window.finished
    assert window.start == 0 and window.hidden_sections() == []
    assert included.describe_position().endswith(", front and back matter included")
    assert not _book(ReadingPosition(150, PositionKind.PERCENT, 37.5)).position.include_matter
