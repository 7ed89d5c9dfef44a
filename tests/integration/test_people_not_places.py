"""The people met so far, on real books: people, not the places the story happens in, each
person once under the titles that tell them apart (Mr. and Mrs. Bennet are two people), and
nothing the reader has not reached. Real SQLite, the real import, books from ../shared."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from folio.agent.tools.base import ToolContext, ToolServices
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.passages import PEOPLE, PeopleList, Person

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def library(books_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    home = tmp_path_factory.mktemp("people-not-places")
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    for name in (
        "pg1342_pride_and_prejudice.txt",
        "pg84_frankenstein.txt",
        "pg910_white_fang.txt",
        "austen-persuasion.txt",
    ):
        container.ingest.execute(books_dir / name)
    yield container


def _people(container: Container, source: str, chapter: str) -> PeopleList:
    [book] = [b for b in container.library.list_books() if b.source_name == source]
    book = container.library.set_position(book.id, chapter=chapter)
    services = ToolServices(container.searcher, container.books, container.chunk_index)
    result = container.tools.execute(PEOPLE, ToolContext(book=book), services, {})
    assert result.success and isinstance(result.data, PeopleList)
    return result.data


def test_pride_and_prejudice_people_not_places(library: Container) -> None:
    found = _people(library, "pg1342_pride_and_prejudice.txt", "Chapter XII")
    names = [p.name for p in found.people]
    assert not {"Netherfield", "Meryton", "Longbourn", "Pemberley", "London"} & set(names)
    assert "Mr Bennet" in names and "Mrs Bennet" in names  # two people, not one "Bennet"
    assert {"Elizabeth", "Jane", "Mr Darcy", "Mr Bingley", "Miss Bingley"} <= set(names)
    people = {p.name: p for p in found.people}
    assert "Miss Eliza" in people["Elizabeth"].aliases  # "Eliza" begins "Elizabeth"
    assert "Bingley" in people["Mr Bingley"].aliases  # spoken of as "he"
    assert "Wickham" not in repr(found)  # met in Chapter XV


def test_frankenstein_people_not_places(library: Container) -> None:
    found = _people(library, "pg84_frankenstein.txt", "Chapter 5")
    names = [p.name for p in found.people]
    assert not {"Ingolstadt", "Geneva", "Archangel", "Italy"} & set(names)
    assert {"Clerval", "Elizabeth"} <= set(names)
    assert "Justine" not in repr(found)  # met in Chapter 6
    # Victor tells Chapters 1-5 (named three times, in speeches to him): first, as the narrator;
    # no one else narrates (the people of Pride and Prejudice, Persuasion: none)
    assert names[0] == "Victor" and found.people[0].narrates
    assert not any(p.narrates for p in found.people[1:])
    for source, chapter in (("pg1342_pride_and_prejudice.txt", "Chapter XII"),
                            ("austen-persuasion.txt", "Chapter 8")):  # fmt: skip
        third = _people(library, source, chapter)
        assert not any(p.narrates for p in third.people)
        assert third.first_person is not None and third.first_person < 0.01  # told as "she"
    assert found.first_person is not None and found.first_person > 0.03  # told as "I"


def test_white_fang_two_men_are_two_people(library: Container) -> None:
    found = _people(library, "pg910_white_fang.txt", "The Law of Meat")
    people = {p.name: p for p in found.people}
    assert {"Henry", "Bill", "One Eye"} <= set(people)  # "...the mouth of Bill. Henry rose"
    assert people["Henry"].aliases == () and people["Bill"].aliases == ()


def test_persuasion_a_husband_and_the_mrs_of_his_name_are_two_people(library: Container) -> None:
    """Chapter 8: Charles Musgrove and "Mrs Charles Musgrove" (Mary, his wife) are not one
    person, though the book speaks of its "Mrs" names only faintly as "she"."""
    found = _people(library, "austen-persuasion.txt", "Chapter 8")
    people = {p.name: p for p in found.people}
    assert "Charles Musgrove" in people["Charles"].aliases
    assert not {"Mrs Charles", "Mrs Charles Musgrove"} & set(people["Charles"].aliases)
    assert {"Anne", "Captain Wentworth", "Lady Russell", "Mrs Musgrove"} <= set(people)


def _one(container: Container, source: str, chapter: str, name: str) -> Person:
    """The people tool's lookup of one name, at ``chapter`` of the book read from ``source``."""
    [book] = [b for b in container.library.list_books() if b.source_name == source]
    book = container.library.set_position(book.id, chapter=chapter)
    services = ToolServices(container.searcher, container.books, container.chunk_index)
    result = container.tools.execute(PEOPLE, ToolContext(book=book), services, {"name": name})
    assert result.success and isinstance(result.data, PeopleList)
    [person] = result.data.people
    return person


def test_a_protagonists_name_comes_up_in_most_of_the_text_read(library: Container) -> None:
    """Persuasion at Chapter 8: Anne is in most of what was read, Captain Wentworth in far
    less (``Person.share``: the offline agent tells a protagonist's new name by it)."""
    from folio.agent.offline.strategy import MIN_SHARE

    def share(name: str) -> float:
        return _one(library, "austen-persuasion.txt", "Chapter 8", name).share

    anne, wentworth = share("Anne"), share("Captain Wentworth")
    assert anne >= MIN_SHARE > wentworth > 0, (anne, wentworth)


def test_someone_first_named_in_a_speech_is_also_told_where_the_story_names_them(
    library: Container,
) -> None:
    """Pride and Prejudice at Chapter XII: Charlotte is first named in Mrs. Bennet's speech
    ("..., Charlotte,"); ``Person.told`` is the first sentence the story names her in its own
    voice. Mr. Darcy is first named in narration: nothing more to tell."""

    def person(name: str) -> Person:
        return _one(library, "pg1342_pride_and_prejudice.txt", "Chapter XII", name)

    charlotte = person("Charlotte Lucas")
    assert "Charlotte" in charlotte.first.text and charlotte.told is not None
    assert charlotte.told.char_start > charlotte.first.char_start
    assert "Charlotte" in charlotte.told.text
    assert person("Mr. Darcy").told is None


def test_a_place_looked_up_by_name_is_told_as_a_place(library: Container) -> None:
    """Pride and Prejudice at Chapter V: "Netherfield" is a place as the book uses it (the
    offline answer then gives no person's introduction), and a model reads so in the result."""
    from folio.domain.passages import ToolOutcome, decode_tool_result

    netherfield = _one(library, "pg1342_pride_and_prejudice.txt", "Chapter V", "Netherfield")
    darcy = _one(library, "pg1342_pride_and_prejudice.txt", "Chapter V", "Mr. Darcy")
    assert netherfield.place and not darcy.place
    sent = ToolOutcome(True, payload=PeopleList((netherfield, darcy), "through Chapter V"))
    people = json.loads(sent.to_json())["data"]["people"]
    assert people[0]["place"] is True and "place" not in people[1]
    read = decode_tool_result(sent.to_json()).payload
    assert isinstance(read, PeopleList) and [p.place for p in read.people] == [True, False]
