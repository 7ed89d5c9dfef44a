"""What kind of message the reader sent, told by the shipped embedder (all-MiniLM-L6-v2): asking
for the story so far or the people met in words the examples do not use goes to that tool;
ordinary questions about a book, including ones about "the story" or what happened when, stay
book questions; only a question sure to ask past the position is one about later events."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir
from folio.agent.offline.kinds import BOOK, LATER, THANKS, MessageKinds
from folio.agent.offline.strategy import asked_names
from folio.domain.passages import LIST_CHAPTERS, PEOPLE, RECAP


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> MessageKinds:
    cache: Path = tmp_path_factory.mktemp("kinds")
    return MessageKinds(OnnxEmbedder(packaged_model_dir(), cache, recent_vectors=0), asked_names)


@pytest.mark.parametrize(
    "message",
    [
        "What is the story so far?",
        "brief summary of the plot up to here",
        # written apart from the examples; the single nearest example at 0.75 routed none
        "What has happened in the book so far?",
        "Can you sum up the story so far?",
        "Give me a summary",
        "Summarise the book up to my position",
        "I've been away from the book for a while, what happened?",
        "Outline the plot up to now",
    ],
)
def test_asking_for_the_story_so_far_in_other_words_gets_the_recap(
    kinds: MessageKinds, message: str
) -> None:
    assert kinds.kind(message) == RECAP


@pytest.mark.parametrize(
    "message", ["Who are the characters?", "Who's who in this book?", "Who have I met so far?"]
)
def test_asking_for_the_people_in_other_words_gets_the_people_met(
    kinds: MessageKinds, message: str
) -> None:
    assert kinds.kind(message) == PEOPLE


@pytest.mark.parametrize(
    "message",
    [
        "what is the setting of the story?",
        "What happened at the ball?",
        "What happened after the storm?",
        "Why did the story's narrator leave home?",
        "Who tells the story?",
        "Who is Mr Darcy?",
        "Who is murdered?",
        "In which chapter is Marianne introduced?",  # was the recap
    ],
)
def test_questions_about_the_book_stay_book_questions(kinds: MessageKinds, message: str) -> None:
    assert kinds.kind(message) == BOOK


@pytest.mark.parametrize("message", ["ok thanks", "ok thanks!", "thank you so much", "hmm"])
def test_small_talk_far_from_any_question_is_small_talk(kinds: MessageKinds, message: str) -> None:
    """Less close to the examples than the bar (0.43 for "ok thanks"), but far closer to them
    than to any question about a book: answered as small talk, not searched."""
    assert kinds.kind(message) == THANKS


@pytest.mark.parametrize(
    ("asks", "message", "told"),
    [
        ("asks_next", "What did he do then?", True),
        ("asks_next", "What did Todhunter do then?", True),
        ("asks_next", "What happened after that?", True),
        ("asks_next", "What did he do?", False),
        ("asks_next", "Why did he leave?", False),
        ("asks_next", "Where did they go after that?", False),
        ("asks_narrator", "Who is the narrator?", True),
        ("asks_narrator", "Who is telling this story?", True),
        ("asks_narrator", "Who tells the tale?", True),
        ("asks_narrator", "Who is Victor?", False),
        ("asks_narrator", "Who told her that?", False),
        ("asks_narrator", "Where does the story take place?", False),
    ],
)
def test_asking_what_came_right_after_or_who_tells_the_story_is_told(
    kinds: MessageKinds, asks: str, message: str, told: bool
) -> None:
    assert getattr(kinds, asks)(message) is told


@pytest.mark.parametrize(
    "message", ["How?", "Why?", "What?", "and?", "Who?", "where?", "thanks! how?", "ok, why?"]
)
def test_a_short_question_stays_a_book_question(kinds: MessageKinds, message: str) -> None:
    assert kinds.kind(message) == BOOK


@pytest.mark.parametrize(
    "message",
    [
        "What happened next?",
        "What happened then?",
        "What did Victor do after that?",
        # present tense, asked of the text read: a refusal must be sure
        "What happens to him?",
        "What happens then?",
    ],
)
def test_asking_what_happened_next_in_the_text_read_is_not_about_later_events(
    kinds: MessageKinds, message: str
) -> None:
    """The embedder puts "What happened next?" 0.82 from "what happens next?": only the
    closer of the two kinds decides, so a question about what was read is answered."""
    assert not kinds.asks_later(message)
    assert kinds.kind(message) == BOOK


@pytest.mark.parametrize(
    "message",
    [
        "How does it all end?",
        "Does Marianne end up marrying Willoughby?",
        "What happens in the last chapter?",
    ],
)
def test_a_question_about_later_events_is_told(kinds: MessageKinds, message: str) -> None:
    assert kinds.asks_later(message)
    assert kinds.kind(message) == LATER


@pytest.mark.parametrize(
    "message",
    [  # written apart from the examples, none refused outright
        "Spoil the ending for me.",
        "What will happen to Marianne?",
        "What's the twist at the end?",
        "Does the creature kill Victor in the end?",
        "Is Colonel Brandon going to marry Marianne?",
        "Is Willoughby coming back?",
        "Will Marianne recover?",
    ],
)
def test_a_question_that_may_ask_about_later_events_is_told_so(
    kinds: MessageKinds, message: str
) -> None:
    assert kinds.may_ask_later(message) and not kinds.asks_later(message)


@pytest.mark.parametrize(
    "message",
    [
        "What happened next?",
        "What did Victor do after that?",
        "What happens to him?",
        "Why did Willoughby leave Barton so suddenly?",
        "How did Father Brown work out that there was no Mr Glass?",
        "What did he do then?",
        "Which chapter does Willoughby first appear in?",
        "In which chapter is Marianne introduced?",
        "Where does Lucy Steele come into the story?",
    ],
)
def test_a_question_about_the_text_read_is_not_told_it_may_ask_later(
    kinds: MessageKinds, message: str
) -> None:
    assert not kinds.may_ask_later(message)


def test_each_name_is_masked_as_one_someone() -> None:
    """The examples ask of "someone"; a name of two words was "someone someone" ("Does someone
    catch someone someone?"), and "Mr. Knightley" "someone. someone"."""
    from folio.agent.offline.kinds import masked

    question = "Does Ahab catch Moby Dick, or does Mr. Knightley?"
    assert masked(question, asked_names(question)) == "Does someone catch someone, or does someone?"


@pytest.mark.parametrize(
    ("message", "asks"),
    [
        # written apart from the examples
        ("Tell me about Marianne", True),
        ("Who was Colonel Brandon again?", True),
        ("What is Willoughby's character like?", True),
        ("Who is Marianne?", True),
        ("What did Marianne do?", False),
        ("Why did Willoughby leave?", False),
        ("How old is Colonel Brandon?", False),
        ("What does Marianne think of Colonel Brandon?", False),
        ("Tell me about Marianne's fall", False),
        ("tell me about the weather", False),  # names no one
        # where someone first comes in: answered by their introduction ("Which chapter does
        # Willoughby first appear in?" was told it may ask past the position)
        ("Which chapter does Willoughby first appear in?", True),
        ("In which chapter is Marianne introduced?", True),
        ("When do we first meet Colonel Brandon?", True),
    ],
)
def test_asking_who_someone_is_in_other_words_is_told(
    kinds: MessageKinds, message: str, asks: bool
) -> None:
    assert kinds.asks_who(message) is asks


@pytest.mark.parametrize(
    ("message", "kind", "this_chapter"),
    [
        # written apart from the examples: the chapter just read is the recap's (of that chapter),
        # the next one later events' ("What happened in this chapter?" was refused as about
        # later events)
        ("What happens in this chapter?", RECAP, True),
        # nearest "what happened in the chapters I read?": the story so far, not told apart
        ("What happened in the chapter I just read?", RECAP, None),
        ("Can you recap this chapter for me?", RECAP, True),
        ("Can you sum up the story so far?", RECAP, False),
        ("Give me a summary", RECAP, False),
        ("What will happen in the next chapter?", LATER, None),
        # the reader's own position, not the story ("What chapter am I on?" got the recap)
        ("which page am I at", LIST_CHAPTERS, None),
        ("Where are we?", LIST_CHAPTERS, None),
        ("Where is he?", BOOK, None),
        ("what chapter is this?", LIST_CHAPTERS, None),
    ],
)
def test_the_chapter_read_and_the_reader_s_position_are_told_from_later_events(
    kinds: MessageKinds, message: str, kind: str, this_chapter: bool | None
) -> None:
    assert kinds.kind(message) == kind
    if this_chapter is not None:
        assert kinds.asks_this_chapter(message) is this_chapter
