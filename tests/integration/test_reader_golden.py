"""A golden offline conversation of a reader early in Frankenstein (through Chapter 5): a character
question, a pronoun follow-up, the story so far, the main characters, a later event (honestly "not
yet"), a why question, a description, small talk in several wordings, a question about folio, and a
quote lookup deep in the conversation. Real SQLite, the real ingest and chat use cases, the bundled
book and the default embedder (which tells small talk)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from folio.app.chat import TurnResult
from folio.bootstrap import Container
from folio.config import load_settings
from tests.e2e.conftest import DemoRun, copy_home


@pytest.fixture(scope="module")
def reader(
    demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Container, str, int]]:
    home = copy_home(demo_run[0], tmp_path_factory.mktemp("reader-golden") / "home")
    env = {"FOLIO_HOME": str(home)}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    [book] = container.library.list_books()
    book = container.library.set_position(book.id, chapter="Chapter 5")
    assert book.position.char_offset is not None
    yield container, book.id, book.position.char_offset


@pytest.fixture(scope="module")
def turns(reader: tuple[Container, str, int]) -> list[TurnResult]:
    container, book_id, _ = reader
    chat = container.chat(provider="offline")
    conversation = container.conversations.create(book_id, "golden reader")
    questions = [
        "Hi!",  # 1 small talk
        "Who is Elizabeth Lavenza?",  # 2 a character
        "Where did she grow up?",  # 3 a pronoun follow-up
        "What has happened so far?",  # 4 the story so far
        "Who are the main characters?",  # 5 the people met so far
        "Who is Justine?",  # 6 met only in Chapter 6: not yet
        "Why did Victor go to Ingolstadt?",  # 7 why
        "Describe Professor Waldman",  # 8 a description
        "Cheers, that was useful.",  # 9 small talk, another wording
        "What can you do?",  # 10 about folio itself
        "ok great",  # 11 small talk again
        'Where does it say "the ancient teachers of this science"?',  # 12 a deep quote lookup
    ]
    return [chat.execute(conversation.id, q) for q in questions]


def _sources_end(result: TurnResult) -> list[int]:
    return [s.char_end for s in result.turn.sources]


def test_nothing_past_chapter_5_is_ever_cited(
    reader: tuple[Container, str, int], turns: list[TurnResult]
) -> None:
    limit = reader[2]
    assert all(end <= limit for t in turns for end in _sources_end(t))


def test_small_talk_and_folio_questions_never_quote_the_book(turns: list[TurnResult]) -> None:
    for number in (1, 9, 10, 11):
        turn = turns[number - 1]
        assert turn.searches == () and '"' not in turn.answer, turn.answer
    assert "reading companion" in turns[9].answer


def test_a_character_and_a_pronoun_follow_up(turns: list[TurnResult]) -> None:
    assert "Elizabeth" in turns[1].answer and "(Chapter" in turns[1].answer
    assert any("Elizabeth" in q for q in turns[2].searches)  # "she" is Elizabeth


def test_the_story_so_far_and_the_people_met_so_far(turns: list[TurnResult]) -> None:
    recap = turns[3].answer
    assert recap.startswith("The story up to Chapter 5")
    assert "Chapter 5, p." in recap and "Chapter 6" not in recap
    people = turns[4].answer
    assert "Elizabeth" in people and "Clerval" in people and "Justine" not in people
    # the lexicon reads "to England" as it reads "to him"; the embedder knows the word
    listed = [
        line[2:].split(" (")[0].split(",")[0] for line in people.splitlines() if line[:2] == "- "
    ]
    assert "Clerval" in listed and not {"England", "America"} & set(listed), listed


def test_a_later_character_gets_an_honest_not_yet(turns: list[TurnResult]) -> None:
    # honest, and no hint at what lies past the position
    assert turns[5].answer.startswith("Nothing up to Chapter 5 mentions Justine.")
    assert "later" not in turns[5].answer.splitlines()[0]


def test_why_description_and_a_deep_quote_lookup_find_their_passages(
    turns: list[TurnResult],
) -> None:
    assert "Ingolstadt" in turns[6].answer
    assert "Waldman" in turns[7].answer
    assert "ancient teachers of this science" in turns[11].answer
    assert "Chapter 3" in turns[11].answer


def test_who_is_quotes_the_sentence_where_the_book_introduces_them(
    reader: tuple[Container, str, int],
) -> None:
    container, book_id, _ = reader
    conversation = container.conversations.create(book_id, "who is")
    chat = container.chat(provider="offline")
    answer = chat.execute(conversation.id, "Who is Henry Clerval?").answer
    first = '- "Henry Clerval was the son of a merchant of Geneva." (Chapter 2'
    assert first in answer


def test_a_short_question_in_the_books_own_words_is_never_refused(
    reader: tuple[Container, str, int],
) -> None:
    """ "Who drowns?" names nothing and is close to no passage as a whole, but the book uses its
    word (as "drowned": the index matches word forms): a question about the story, answered."""
    container, book_id, _ = reader
    chat = container.chat(provider="offline")
    redirect = "I can only help with questions about"
    for question in ("Who drowns?", "Who disappears?"):
        conversation = container.conversations.create(book_id, question)
        result = chat.execute(conversation.id, question)
        assert not result.answer.startswith(redirect), (question, result.answer)
        assert result.searches
