"""Golden conversations for the evidence a turn gathers offline (issue 35), over the bundled
Frankenstein read up to Chapter 5, through the real ``Container`` and the shipped embedder:

- a quote asked for after four questions on other subjects is found (its passage is cited), not
  drowned by the earlier questions;
- a question naming someone the conversation has not talked about is answered about them (this
  one held before too: it guards the new-topic rule);
- a question about what happens after the position gets one plain sentence and no quote;
- a follow-up after that new subject leans on it alone, not on the subjects before it.

The first and the third failed before issue 35's changes (the query was the question plus every
earlier question; a later event got quotes).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from folio.domain.books import Book
from tests.integration.test_golden_conversations import (
    Library,
    assert_turn_properties,
    library,  # noqa: F401  (the fixture)
    normalise,
    play,
    quoted,
)

pytestmark = pytest.mark.slow

STUDIES = ("Who is Elizabeth?", "Where does Victor study?", "Who is his professor there?",
           "What does he build?")  # fmt: skip


@pytest.fixture
def chapter_5(library: Library) -> Iterator[Book]:  # noqa: F811
    book = library.set_chapter(5)
    try:
        yield book
    finally:
        library.set_chapter(None)


def test_a_quote_after_four_questions_is_found_and_cited(
    library: Library,  # noqa: F811
    chapter_5: Book,
) -> None:
    phrase = "I had worked hard for nearly two years"
    played = play(library, [*STUDIES, f'Where does it say "{phrase}"?'])
    last = played[-1].result
    assert not last.answer.startswith("Nothing"), last.answer
    assert normalise(phrase) in normalise(quoted(last.answer)[0]), last.answer
    assert last.citations[0].chapter == "Chapter 5", last.citations
    assert_turn_properties(library, played, chapter_5.position.char_offset)


def test_a_new_name_after_other_subjects_is_answered_about_that_person(
    library: Library,  # noqa: F811
    chapter_5: Book,
) -> None:
    played = play(library, [*STUDIES, "Who is Clerval?"])
    last = played[-1].result
    quotes = quoted(last.answer)
    assert quotes and "Clerval" in quotes[0], last.answer
    assert_turn_properties(library, played, chapter_5.position.char_offset)


def test_a_follow_up_after_a_new_subject_leans_on_it_not_on_the_subjects_before(
    library: Library,  # noqa: F811
    chapter_5: Book,
) -> None:
    """After four questions about Victor's studies, "Who is Margaret?" starts a new subject (it is
    searched on its own: Walton's sister, to whom the letters are written); "Where does she live?"
    is then searched with it and nothing of the studies, and answered from the letters. Before,
    its query held all six questions and found Victor's Ingolstadt."""
    played = play(library, [*STUDIES, "Who is Margaret?", "Where does she live?"])
    switch, last = played[-2].result, played[-1].result
    assert switch.searches[-1] == "Who is Margaret?", switch.searches
    assert last.searches == ("Where does she live? Who is Margaret?",), last.searches
    assert last.citations, last.answer
    assert all(c.chapter.startswith("Letter") for c in last.citations), last.citations
    assert_turn_properties(library, played, chapter_5.position.char_offset)


def test_a_question_about_later_events_gets_one_plain_sentence(
    library: Library,  # noqa: F811
    chapter_5: Book,
) -> None:
    played = play(library, ["Who is Elizabeth?", "Does Victor marry Elizabeth in the end?"])
    last = played[-1].result
    assert last.answer == (
        "Nothing up to Chapter 5 answers this, and I cannot look past where you have read."
    )
    assert last.citations == ()


def test_a_follow_up_naming_no_one_is_answered_about_the_subject_before(
    library: Library,  # noqa: F811
    chapter_5: Book,
) -> None:
    """The demo's second turn: "What happens to him?" names no one, so its sentences are ranked
    with the question before it; it quotes Clerval, not "Nothing up to Chapter 5 answers this"."""
    played = play(library, ["Who is Henry Clerval?", "What happens to him?"])
    last = played[-1].result
    quotes = quoted(last.answer)
    assert quotes, last.answer
    assert any("Clerval" in q or "Henry" in q for q in quotes), last.answer
    assert_turn_properties(library, played, chapter_5.position.char_offset)
