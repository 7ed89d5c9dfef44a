"""Reader tools (the story so far, the people met so far) and how offline mode uses them: all
bounded by the reading position."""

from __future__ import annotations

import pytest

from folio.agent.offline.extractive import about_folio, reader_answer, reader_call
from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext
from folio.agent.tools.reader import find_people, key_sentences
from folio.domain.passages import PEOPLE, RECAP, PeopleList, Recap
from tests.unit.test_book_tools import SECRET_WORDS, StoryLibrary, make_story


@pytest.fixture
def story() -> StoryLibrary:
    return make_story()


def run(story: StoryLibrary, name: str, **arguments: object):
    return default_registry().execute(name, ToolContext(book=story.book), story.services(),
                                      arguments)  # fmt: skip


def test_the_recap_covers_each_chapter_read_and_nothing_after(story: StoryLibrary) -> None:
    result = run(story, RECAP)
    assert result.success and isinstance(result.data, Recap)
    chapters = [p.chapter for p in result.data.passages]
    assert chapters == ["Chapter 1", "Chapter 2"]  # read to page 4: chapter 3 is unread
    text = " ".join(p.text for p in result.data.passages)
    assert not any(word in text for word in SECRET_WORDS)
    limit = story.book.position.char_offset
    assert all(p.char_end <= limit for p in result.data.passages)
    for p in result.data.passages:
        assert " ".join(story.text[p.char_start : p.char_end].split()) == p.text


def test_a_recap_of_one_chapter_and_refusal_of_an_unread_one(story: StoryLibrary) -> None:
    one = run(story, RECAP, chapter="2")
    assert one.success and {p.chapter for p in one.data.passages} == {"Chapter 2"}
    unread = run(story, RECAP, chapter="Chapter 3")
    assert not unread.success and unread.error_code == "NOT_ALLOWED"
    assert "past the reader's position" in (unread.error or "")


def test_people_so_far_are_counted_up_to_the_position_only(story: StoryLibrary) -> None:
    result = run(story, PEOPLE)
    assert result.success and isinstance(result.data, PeopleList)
    names = [p.name for p in result.data.people]
    assert any("Victor" in n for n in names)
    assert not any(word in n for n in names for word in SECRET_WORDS)


def test_names_are_words_the_text_capitalises_mid_sentence() -> None:
    text = (
        "Then Anna met Tom. Later, Anna and Tom walked. She saw Anna smile; Tom laughed. "
        "The Rain fell. Anna waited. Tom said that rain was cold, rain again, rain."
    )
    people = find_people(text, 0)
    assert [name for name, _, _ in people] == ["Anna", "Tom"]
    assert people[0][1] == 4 and people[0][2] == text.index("Anna")


def test_key_sentences_keep_the_texts_offsets() -> None:
    text = "Short one. " + "The whale swam far and the whale dived deep below the grey sea. " * 3
    for start, end, sentence in key_sentences(text, 100, 2):
        assert text[start - 100 : end - 100] == sentence


@pytest.mark.parametrize(
    ("question", "call"),
    [("What has happened so far?", (RECAP, {})),
     ("Can you summarize chapter 3?", (RECAP, {"chapter": "chapter 3"})),
     ("Who are the main characters?", (PEOPLE, {})),
     ("which characters have we met? list the people", (PEOPLE, {})),
     ("What happened to Clerval?", None),
     ("Who is Elizabeth?", None)],
)  # fmt: skip
def test_offline_mode_picks_the_reader_tool_a_question_asks_for(question, call) -> None:
    assert reader_call(question, {RECAP, PEOPLE, "search_book"}) == call


@pytest.mark.parametrize(
    "question",
    [
        "What can you do?",
        "who are you?",
        "How does this work?",
        "what is folio",
        "How do I use you",
    ],
)
def test_questions_about_folio_itself_are_recognised(question: str) -> None:
    assert about_folio(question)
    assert not about_folio("What can Victor do about the creature?")


def test_offline_recap_answer_quotes_with_places(story: StoryLibrary) -> None:
    answer = reader_answer(run(story, RECAP).outcome())
    assert answer.startswith("The story up to p. 4 of 6")
    assert "- Chapter 1, p. " in answer


def test_a_bare_what_happened_is_a_recap_first_and_a_follow_up_in_a_conversation() -> None:
    tools = {RECAP, PEOPLE}
    assert reader_call("What happened?", tools) == (RECAP, {})
    assert reader_call("What happened?", tools, in_conversation=True) is None
    assert reader_call("What has happened so far?", tools, in_conversation=True) == (RECAP, {})
    assert reader_call("What happens if they lose?", tools) is None
