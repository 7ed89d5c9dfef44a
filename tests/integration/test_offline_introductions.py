"""Who someone is, offline, on the real text of Frankenstein read through Chapter 5: the answer
leads with the sentence that introduces the person, not with a sentence that merely names them;
"Victor's friend" is someone other than Victor; how two people met leads with the introduction of
the one who comes in later; "what happened next?" leads with the sentence after the last answer's
first quote; Victor, who tells the story, is said to, and a question about him is read as he
tells it (in the first person); and no answer leads with a question. (Pride and
Prejudice's "Who is Charlotte Lucas?", on the shared data set, is in
test_golden_pride_and_prejudice.py.)

Real SQLite, tools and chat use cases and the packaged embedder, on a copy of the home the run's
demo imported the bundled book into (``demo_run``): no import of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.agent.citations import listed_quotes
from folio.app.chat import TurnResult
from folio.bootstrap import Container
from folio.config import load_settings
from tests.e2e.conftest import DemoRun, copy_home
from tests.shared_homes import computed_once

pytestmark = pytest.mark.slow

CONVERSATIONS = (
    ("Who is Elizabeth?",),
    ("Who is Victor's friend from Geneva?",),
    ("Who is Henry Clerval?", "What happens to him?"),
    ("Who is Victor's professor?", "What happens to him?"),
    ("How did Victor meet Clerval?",),
    ("What happened on that dreary night of November?", "What happened next?"),
    ("What happened on that dreary night of November?", "ok thanks", "What happened next?"),
    ("Who is Victor?",),
    ("How did Victor's mother die?",),
    ("Who is the narrator?",),
)


@pytest.fixture(scope="module")
def turns(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> list[list[TurnResult]]:
    def play(root: Path) -> list[list[TurnResult]]:
        home = copy_home(demo_run[0], root / "home")
        container = Container(load_settings(env={"FOLIO_HOME": str(home)}))
        [book] = container.library.list_books()
        container.library.set_position(book.id, chapter="Chapter 5")
        chat = container.chat(provider="offline")
        played = []
        for questions in CONVERSATIONS:
            conversation = container.conversations.create(book.id, "introductions")
            played.append([chat.execute(conversation.id, q) for q in questions])
        container.close()
        return played

    return computed_once(tmp_path_factory, "offline-introductions", play)


def quotes(turn: TurnResult) -> list[str]:
    return listed_quotes(turn.answer)


def test_who_is_x_leads_with_the_sentence_that_introduces_them(
    turns: list[list[TurnResult]],
) -> None:
    elizabeth = quotes(turns[0][0])
    assert elizabeth and elizabeth[0].startswith(
        "They consulted their village priest, and the result was that Elizabeth Lavenza became"
    ), turns[0][0].answer
    clerval = quotes(turns[2][0])
    assert clerval and clerval[0] == "Henry Clerval was the son of a merchant of Geneva."


def test_how_two_people_met_leads_with_where_the_later_comes_in(
    turns: list[list[TurnResult]],
) -> None:
    """Victor is met in Chapter 1, Clerval in Chapter 2: they meet where Clerval comes in (the
    sentences about "a meeting" in Chapter 5 led before)."""
    met = quotes(turns[4][0])
    assert met and met[0] == "Henry Clerval was the son of a merchant of Geneva.", turns[4][
        0
    ].answer
    assert "narrates" not in turns[4][0].answer  # Victor narrates, but it asks how they met


def test_someones_friend_is_another_person_found_by_the_sentences_around_him(
    turns: list[list[TurnResult]],
) -> None:
    friend = quotes(turns[1][0])
    assert friend and "Clerval" in friend[0], turns[1][0].answer


def test_no_answer_leads_with_a_question(turns: list[list[TurnResult]]) -> None:
    for played in turns:
        for turn in played:
            said = quotes(turn)
            assert not said or not said[0].rstrip("”\"’'").endswith("?"), turn.answer


def test_what_happened_next_leads_with_what_follows_the_last_answers_first_quote(
    turns: list[list[TurnResult]],
) -> None:
    """The sentence after the one the answer before quoted first, read around it in the book
    (its search finds the night's scene, and its words would put that sentence first again)."""
    night, then = (quotes(turn) for turn in turns[5])
    assert night and night[0].startswith("It was on a dreary night of November"), night
    assert then and then[0].startswith("With an anxiety that almost amounted to agony"), then
    assert any(c.name == "read_passage" and c.success for c in turns[5][1].tool_calls)
    # small talk between: the answer before it that quoted the book
    thanks, again = turns[6][1], quotes(turns[6][2])
    assert not quotes(thanks) and again == then, thanks.answer


def test_the_narrator_is_said_to_tell_the_story_and_asked_about_in_the_first_person(
    turns: list[list[TurnResult]],
) -> None:
    """Victor tells Chapters 1-5 and only others' speech names him ("My dear Victor,"): asked
    who he is, the answer says he is the narration's "I" and quotes how his story opens; asked
    how his mother died, it is searched and ranked as "How did my mother die?" (then as asked)
    and quotes her death in Chapter 3, not speeches addressing him."""
    who = turns[7][0].answer
    assert who.startswith("Victor narrates the story you have read: the “I” of its narration."), who
    assert quotes(turns[7][0])[0].startswith("I am by birth a Genevese"), who  # his own opening
    died = quotes(turns[8][0])
    told = ("On the third day my mother sickened", "She died calmly")
    assert any(q.startswith(told) for q in died), turns[8][0].answer
    assert not any("Victor" in q for q in died), turns[8][0].answer
    searched = [c.arguments["query"] for c in turns[8][0].tool_calls if c.name == "search_book"]
    assert searched[-1] == "How did my mother die? How did Victor's mother die?"


def test_asked_who_narrates_the_people_met_say(turns: list[list[TurnResult]]) -> None:
    """No search: the people met, of whom Victor narrates, and how his story opens, cited."""
    turn = turns[9][0]
    assert turn.answer.startswith("Victor narrates the story you have read"), turn.answer
    assert quotes(turn)[0].startswith("I am by birth a Genevese")
    assert not turn.searches and [c.name for c in turn.tool_calls] == ["people_so_far"] * 2
    assert [c.page_start for c in turn.citations] == ["16"]
