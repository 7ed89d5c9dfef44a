"""The sentence that says who a name is, for the first line of "Who is X?"."""

from __future__ import annotations

import pytest

from folio.agent.offline.definitions import asked_name, definition, sentences
from folio.domain.passages import Passage


def passage(text: str, start: int = 0) -> Passage:
    return Passage("c", "Chapter 2", "21", "21", start, start + len(text), text)


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("Who is Henry Clerval?", "Henry Clerval"),
        ("who was Mr. Kirwin", "Kirwin"),
        ("Tell me about Elizabeth.", "Elizabeth"),
        ("What is Ingolstadt?", "Ingolstadt"),
        ("Who is his friend?", None),
        ("Who was the old man?", None),
        ("Why did Victor leave Geneva?", None),
    ],
)
def test_the_name_a_who_is_question_asks_about(question: str, name: str | None) -> None:
    assert asked_name(question) == name


def test_the_copula_sentence_with_the_whole_name_defines_it() -> None:
    found = definition(
        "Henry Clerval",
        [
            passage("During all that time Henry was my only nurse. I saw Clerval again.", 900),
            passage("Henry Clerval was the son of a merchant of Geneva. He was a boy.", 100),
        ],
    )
    assert found is not None and found[0] == "Henry Clerval was the son of a merchant of Geneva."


def test_apposition_and_titles_define_a_name_but_an_object_does_not() -> None:
    text = (
        "He was sent to Mr. Kirwin, a magistrate of the town, at once. "
        "The father of Safie was a Turk."
    )
    found = definition("Kirwin", [passage(text)])
    assert found is not None and found[0].startswith("He was sent to Mr. Kirwin, a magistrate")
    assert definition("Safie", [passage(text)]) is None


def test_a_title_or_an_initial_does_not_end_a_sentence() -> None:
    assert sentences("Come to Mr. Kirwin now. M. Waldman smiled.") == [
        "Come to Mr. Kirwin now.",
        "M. Waldman smiled.",
    ]


def test_no_definition_without_a_defining_sentence() -> None:
    assert definition("Justine", [passage("Nothing about her here. The lake was calm.")]) is None
