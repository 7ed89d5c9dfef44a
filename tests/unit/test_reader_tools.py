"""Reader tools (the story so far, the people met so far) and how offline mode uses them: all
bounded by the reading position."""

from __future__ import annotations

import re

import pytest

from folio.agent.offline.strategy import reader_answer
from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext
from folio.agent.tools.reader import MAX_NAME_CHARS, _narrates
from folio.domain.books import PositionKind, ReadingPosition
from folio.domain.lexicon import Lexicon, describing, singular
from folio.domain.passages import (
    LIST_CHAPTERS,
    PEOPLE,
    RECAP,
    Passage,
    PeopleList,
    Person,
    Recap,
    decode_payload,
    encode_payload,
    passages_in,
)
from folio.domain.summary import rank_chapter
from tests.unit.test_book_tools import SECRET_WORDS, StoryLibrary, make_story


@pytest.fixture
def story() -> StoryLibrary:
    return make_story()


def run(story: StoryLibrary, tool: str, **arguments: object):
    return default_registry().execute(tool, ToolContext(book=story.book), story.services(),
                                      arguments)  # fmt: skip


def test_the_recap_covers_each_chapter_read_and_nothing_after(story: StoryLibrary) -> None:
    result = run(story, RECAP)
    assert result.success and isinstance(result.data, Recap)
    chapters = [p.chapter for p in result.data.passages]
    # read to page 4: chapter 3 is unread
    assert list(dict.fromkeys(chapters)) == ["Chapter 1", "Chapter 2"]
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


def test_names_are_words_the_text_capitalises_mid_sentence_with_their_titled_forms() -> None:
    text = (
        "Then Anna met Mr. Tom Reed. Later, Anna and Tom walked. She saw Anna smile; Tom laughed. "
        "The Rain fell. Anna waited for Miss Reed. Tom said that rain was cold, rain again. "
        "Poor Anna met Mr. Reed and Miss Reed, and Mr. Gale met Miss Gale."
    )
    lexicon = Lexicon.of(text)
    names = {n.name: n for n, _, _ in lexicon.people(0, len(text), 10)}
    assert "Anna" in names and "Rain" not in names and "Poor" not in names
    assert names["Anna"].mentions(0, len(text)) == 5
    assert lexicon.find("Miss Reed") is not lexicon.find("Mr. Reed")  # a title makes a name
    assert lexicon.find("Poor Anna") is names["Anna"]


def test_one_name_is_looked_up_in_the_text_read_only(story: StoryLibrary) -> None:
    result = run(story, PEOPLE, name="Clerval")
    [clerval] = result.data.people
    assert "Clerval" in clerval.name and clerval.first.char_end <= story.book.position.char_offset
    unmet = run(story, PEOPLE, name="Justine")  # met only past the position
    assert unmet.success and unmet.data.people == ()
    assert "mentions Justine" in (unmet.data.note or "")


def test_a_family_named_in_the_plural_is_the_name_the_book_uses(story: StoryLibrary) -> None:
    """ "How did she come to live with the Frankensteins?" was answered "Nothing up to Chapter 12
    mentions Frankensteins.": a name not met is looked up again without its plural ending."""
    [clerval] = run(story, PEOPLE, name="Clervals").data.people
    assert "Clerval" in clerval.name
    assert "mentions Justines" in (run(story, PEOPLE, name="Justines").data.note or "")
    assert (singular("the Frankensteins"), singular("Bennets'"), singular("Ross")) == (
        "the Frankenstein", "Bennet", None)  # fmt: skip


def test_a_misspelt_name_is_the_nearest_name_read_and_says_so(story: StoryLibrary) -> None:
    """ "Who is Mr Knightly?" at Emma's Chapter XVIII was "Nothing ... mentions Mr Knightly."."""
    result = run(story, PEOPLE, name="Victer")
    [victor] = result.data.people
    assert victor.name == "Victor" and result.data.misspelt == "Victer"
    assert "mentions Victer; the nearest name read is Victor" in (result.data.note or "")
    again = decode_payload(encode_payload(result.data))
    assert isinstance(again, PeopleList) and (again.misspelt, again.note) == (
        "Victer", result.data.note)  # fmt: skip
    for unmet in ("Justine", "Jistine", "Vernon"):  # met only past the position; no one alike
        assert run(story, PEOPLE, name=unmet).data.people == (), unmet
    assert run(story, PEOPLE, name="Victor").data.misspelt is None


def test_a_name_found_by_one_word_with_another_misspelt_says_so() -> None:
    """ "Who is Harriet Smyth?" found Harriet by her given name and said nothing of "Smyth"."""
    from folio.domain.books import Chapter, Page
    from tests.unit.test_book_tools import _book, _stored

    text = (
        "Emma liked Harriet Smith, and Harriet smiled at Emma. Then Harriet Smith left, and "
        "Emma sat with Harriet by the fire; she said that Harriet was kind. "
    ) * 3
    book = _book("emma", "Emma", text, [Chapter(1, "Chapter 1", 0)], [Page(1, "1", 0, len(text))])
    story = _stored(book.with_position(book.position_at_page("1")), text, [])
    result = run(story, PEOPLE, name="Harriet Smyth").data
    assert [p.name for p in result.people] == ["Harriet Smith"]
    assert result.misspelt == "Harriet Smyth"
    assert "the nearest name read is Harriet Smith" in (result.note or "")
    assert run(story, PEOPLE, name="Harriet Smith").data.misspelt is None


def test_ranked_sentences_keep_the_texts_offsets() -> None:
    text = "Short one. " + "The whale swam far and the whale dived deep below the grey sea. " * 3
    ranked = rank_chapter(text, 5, len(text), None, keep=2)
    assert ranked and all(r.start >= 5 for r in ranked)
    for r in ranked:
        assert text[r.start : r.end].startswith("The whale") and text[r.end - 1] == "."


def test_offline_recap_answer_quotes_with_places(story: StoryLibrary) -> None:
    answer = reader_answer(run(story, RECAP).outcome())
    assert answer.startswith("The story up to p. 4 of 6")
    assert "- Chapter 1, p. " in answer
    one = reader_answer(run(story, RECAP, chapter="Chapter 2").outcome())  # "this chapter"
    assert one.startswith("Chapter 2, in the book's words:") and "Chapter 1" not in one


def test_asked_where_they_are_the_reader_is_told_their_position(story: StoryLibrary) -> None:
    """ "Where am I in the book?" was answered with unrelated quotes under "I cannot look past
    where you have read"."""
    answer = reader_answer(run(story, LIST_CHAPTERS).outcome())
    where = story.book.describe_position()
    assert answer == (
        f"Your reading position: {where}. Chapters reached: 2, the last Chapter 2 (from p. 3)."
    )


def test_a_person_is_first_met_in_the_story_not_in_a_heading_or_a_bracketed_note() -> None:
    """The Wisdom of Father Brown: Hirsch was "first met" in the heading "The Duel of Dr
    Hirsch", Father Brown in the transcriber's title line; the first sentence of the story that
    names them is where the reader met them. Nor the book's title on its title page (an EPUB's
    "Frankenstein; or, the Modern Prometheus": Frankenstein was "first met" there)."""
    from folio.domain.books import Chapter, Page
    from tests.unit.test_book_tools import _book, _stored

    body = (
        "They were both pupils of the great Dr Hirsch, scientist and moralist. Dr Hirsch taught "
        "them, and he smiled at the door. Then Dr Lee came, and he sat by the fire; Dr Lee and "
        "Dr Hirsch spoke of the war, and he left the room by the window. Dr Lee went. "
    ) * 3
    title = "Dr Lee; or, the Modern Duellist"
    parts = [title, "[The Tale of Dr Lee by A. Writer 1914]", "I. The Duel of Dr Hirsch", body]
    text = "\n\n".join(parts) + "\n\n"
    heading = text.index("I. The")
    book = _book("duel", title, text, [Chapter(1, "I. The Duel of Dr Hirsch", heading)],
                 [Page(1, "1", 0, len(text))])  # fmt: skip
    story = _stored(book.with_position(book.position_at_page("1")), text, [])
    result = run(story, PEOPLE)
    firsts = {p.name: p.first.text for p in result.data.people}
    assert firsts["Dr Hirsch"].startswith("They were both pupils of the great Dr Hirsch")
    assert firsts["Dr Lee"].startswith("Then Dr Lee came")
    [hirsch] = run(story, PEOPLE, name="Hirsch").data.people
    assert hirsch.first.text.startswith("They were both pupils")


def test_a_first_mention_s_sentence_never_runs_over_a_chapter_s_start() -> None:
    """A PDF's text has no blank lines: England was "first met" in the title page, contents and
    "Letter 1" heading run together with "_To Mrs. Saville, England._" as one sentence."""
    from folio.domain.books import Chapter, Page
    from tests.unit.test_book_tools import _book, _stored

    front = "The Tale\nby A. Writer\n CONTENTS\n Letter 1\n Letter 2\n"
    body = (
        "To Mrs. Saville, England.\nI write from the north, where Walton sailed with Mr Lee; "
        "Walton and Mr Lee spoke of England, and he smiled at the fire. Then Walton sat down, "
        "and Mr Lee came to the door and he left the room by the window.\n"
    ) * 3
    text = front + "Letter 1\n" + body
    book = _book("pdf", "The Tale", text, [Chapter(1, "Letter 1", len(front))],
                 [Page(1, "1", 0, len(text))])  # fmt: skip
    story = _stored(book.with_position(book.position_at_page("1")), text, [])
    [walton] = run(story, PEOPLE, name="Walton").data.people
    assert walton.first.text.startswith("I write from the north, where Walton sailed")
    # the title page run into the contents is no sentence of the story either (a PDF's
    # "Frankenstein; or, the Modern Prometheus by Mary ... CONTENTS Letter 1 ...")
    titled = "Walton; or, the Modern Sailor"
    text = f"{titled} by A. Writer\n CONTENTS\n Letter 1\n Letter 2\n" + "Letter 1\n" + body
    chapters = [Chapter(1, "Letter 1", text.index("Letter 1\nTo"))]
    book = _book("pdf2", titled, text, chapters, [Page(1, "1", 0, len(text))])
    story = _stored(book.with_position(book.position_at_page("1")), text, [])
    [walton] = run(story, PEOPLE, name="Walton").data.people
    assert walton.first.text.startswith("I write from the north, where Walton sailed")
    [england] = run(story, PEOPLE, name="England").data.people
    assert england.first.text == "To Mrs. Saville, England."


def test_a_name_looked_up_is_bounded(story: StoryLibrary) -> None:
    """A name, not a passage: at most ``MAX_NAME_CHARS`` characters reach the lookup."""
    assert run(story, PEOPLE, name="C" * MAX_NAME_CHARS).success
    refused = run(story, PEOPLE, name="C" * (MAX_NAME_CHARS + 1))
    assert not refused.success and "too long" in (refused.error or "")


def _mentions(text: str, name: str) -> list[int]:
    return [m.start() for m in re.finditer(rf"\b{name}\b", text)]


def test_a_narrator_is_named_only_in_speech_that_addresses_them_in_a_story_told_as_i() -> None:
    """Someone the story calls "I": every mention in others' speech, most of them addressing
    them, and the narration around in the first person. Not someone only talked about, nor a
    name only speech uses in a story told in the third person."""
    told = (
        "I was born in a grey town by the sea, and my father kept the lamp there.\n\n"
        "“My dear Victor, do not waste your time upon this,” said he.\n\n"
        "I went out alone that night, and I thought of my mother.\n\n"
        "“Victor, he is gone!” cried my cousin, and I ran to meet her.\n\n"
        "I did not sleep. “Come, Victor; we must go,” she said at dawn.\n\n"
        "“Justine is ill,” she wrote. “Justine was always kind to us.” I read it twice.\n\n"
        "“Justine will not come,” I said to my father, and I went in.\n\n"
    )
    texts = [(0, told)]
    assert _narrates(texts, _mentions(told, "Victor"))
    assert not _narrates(texts, _mentions(told, "Justine"))  # talked about, never addressed
    third = told.replace("my father", "his father").replace("I ", "he ").replace("my ", "his ")
    assert not _narrates([(0, third)], _mentions(third, "Victor"))  # a story told as "he"
    assert not _narrates(texts, _mentions(told, "Victor")[:2])  # too few mentions to tell
    narrated = told + "Victor walked home alone, and Victor slept. Victor woke late.\n\n"
    assert not _narrates([(0, narrated)], _mentions(narrated, "Victor"))  # the story names him


def test_a_narrator_who_names_themselves_may_be_called_by_name_in_the_narration() -> None:
    """Ishmael names himself ("Call me Ishmael."): the narration that calls him by name ("So,
    wherever you go, Ishmael, said I to myself") is his. An invocation in a poem told as "I"
    ("Sing, O Muse,") names no narrator, nor does a letter writer's "Believe me, Margaret,"."""
    ishmael = (
        "Call me Ishmael. Some years ago I went to sea, and my purse was empty.\n\n"
        "So, wherever you go, Ishmael, said I to myself, I must find a bed for the night.\n\n"
        "But go on, Ishmael, said I at last; and I went on down the street alone.\n\n"
        "Ha, Ishmael, muttered I, backing out; this is no inn for me and my bag.\n\n"
    )
    assert _narrates([(0, ishmael)], _mentions(ishmael, "Ishmael"))
    muse = ishmael.replace("Call me Ishmael.", "I sing of the sea.").replace("Ishmael", "Muse")
    assert not _narrates([(0, muse)], _mentions(muse, "Muse"))
    letters = (
        "I write to you from the north, and my heart is full.\n\n"
        "Believe me, Margaret, I am well; I think of you and of my home.\n\n"
        "Farewell, Margaret, I must go up on deck; I shall write again.\n\n"
        "Yes, Margaret, I am happy; and I send my love to you all.\n\n"
    )
    assert not _narrates([(0, letters)], _mentions(letters, "Margaret"))  # the one written to
    given = ishmael.replace("Call me Ishmael.", "He gave me Ishmael's letter.")
    assert not _narrates([(0, given)], _mentions(given, "Ishmael"))  # someone else's letter


def test_who_narrates_is_kept_in_the_people_list_s_json() -> None:
    opening = Passage(None, "Chapter 1", "16", "16", 0, 26, "I am by birth a Genevese.")
    victor = Person("Victor", 3, opening, told=opening, narrates=True)
    data = PeopleList((victor,), "through Chapter 5", first_person=0.07)
    [back] = decode_payload(encode_payload(data)).people  # type: ignore[union-attr]
    assert back.narrates and back.told == opening
    assert decode_payload(encode_payload(data)).first_person == 0.07  # type: ignore[union-attr]
    assert passages_in(data) == (opening, opening)  # where first met, and first told of


def test_where_the_story_says_who_someone_is_is_kept_with_them() -> None:
    """A one-name lookup carries the first sentence of narration that says who they are (their
    name, then "was" and what they are; a noun phrase set off by commas; a role said to be
    theirs): not in a speech, not one naming someone else before them."""
    text = (
        "Chapter 1. The Ship\n\nThe riggers left, and a night-cap came for Stubb at noon. "
        "“Stubb was a fool,” said Peleg. Then Peleg and Stubb, the old mate, went below. "
        "Peleg laughed at Stubb. Stubb was the second mate of the ship. Stubb smoked. "
        "Stubb was a merry man from Cape Cod. Peleg watched Stubb, and Stubb slept.\n\n"
    )
    story = _ship("whale", text)
    result = run(story, PEOPLE, name="Stubb")
    [stubb] = result.data.people
    assert stubb.described is not None
    assert stubb.described.text == "Stubb was the second mate of the ship."
    back = decode_payload(encode_payload(result.data)).people[0]  # type: ignore[union-attr]
    assert back.described is not None and back.described.text == stubb.described.text
    assert stubb.described in passages_in(result.data)  # cited as the people tool's passage
    before = text.index("Stubb was the second mate")  # read up to it: never that sentence
    read = _person_read_to(story, "Stubb", before)
    assert read.described is None or read.described.char_end <= before


def _ship(book_id: str, text: str) -> StoryLibrary:
    """``text``, one chapter on one page, read to its end (no passages indexed)."""
    from folio.domain.books import Chapter, Page
    from tests.unit.test_book_tools import _book, _stored

    book = _book(book_id, book_id.title(), text, [Chapter(1, "Chapter 1. The Ship", 0)],
                 [Page(1, "1", 0, len(text))])  # fmt: skip
    return _stored(book.with_position(book.position_at_page("1")), text, [])


def _person_read_to(story: StoryLibrary, name: str, offset: int) -> Person:
    """The people tool's ``name`` with the book read up to ``offset``."""
    ctx = ToolContext(book=story.at(ReadingPosition(offset, PositionKind.PERCENT, 50.0)))
    [person] = default_registry().execute(PEOPLE, ctx, story.services(), {"name": name}).data.people
    return person


def test_a_speech_says_who_someone_is_when_the_story_s_voice_never_does() -> None:
    """Met only through what others say of them ("Captain Ahab is the Captain of this ship."),
    a person is described by the first speech saying who they are; read further, to where the
    story says it in its own voice, by that."""
    text = (
        "Chapter 1. The Ship\n\nI asked Peleg where Ahab was to be found. "
        "“Aye, Ahab is the captain of this ship,” said Peleg. I went ashore and slept. "
        "Ahab was a grey old man with a scar.\n\n"
    )
    story = _ship("pequod", text)
    [ahab] = run(story, PEOPLE, name="Ahab").data.people
    assert ahab.described is not None and ahab.described.text.startswith("Ahab was a grey")
    heard = _person_read_to(story, "Ahab", text.index("Ahab was a grey"))
    assert heard.described is not None and "captain of this ship" in heard.described.text


def test_a_speech_addressing_or_asking_about_someone_does_not_say_who_they_are() -> None:
    """Of a speech, only a statement ("X is a/the ..."): not someone spoken to ("Ahab, the boat
    is ready!"), nor a question about them; the first statement of several."""
    text = (
        "Chapter 1. The Ship\n\nWe waited for Ahab and then for Ahab again. "
        "“Ahab, the boat is ready!” cried Stubb. "
        "“Do you think Ahab is a good captain?” asked Flask. "
        "“Ahab is the captain of this ship,” said Peleg. "
        "“Ahab is a grand old man,” said Bildad.\n\n"
    )
    story = _ship("pequod", text)
    [ahab] = run(story, PEOPLE, name="Ahab").data.people
    assert ahab.described is not None and "captain of this ship" in ahab.described.text
    asked = _person_read_to(story, "Ahab", text.index("“Ahab is the captain"))
    assert asked.described is None


def test_describing_finds_a_name_said_to_be_something() -> None:
    said = describing("Flask", "Mr Flask")
    for text in (
        "The third mate was Flask, a native of Tisbury.",
        "Next was Flask, an unmixed Indian.",
        "Mr. Flask was a short, stout young fellow.",
        "Flask, the third mate, laughed.",
        "Flask, Lady Middleton's nephew, was there.",
        "Flask, of Tisbury, in the Vineyard, was a native of it.",
    ):
        assert said.search(text), text
    for text in ("Flask, his two sisters and Bill came.", "Flask seemed a pyramid.",
                 "In understanding, Flask was the superior.", "Flasks were the best."):  # fmt: skip
        assert not said.search(text), text
