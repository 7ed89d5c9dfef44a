"""A golden offline conversation of a reader in Pride and Prejudice (through Chapter X), the book on
which ten ordinary reader questions once got no useful answer: who a person is leads with that
person (not a relative sharing the surname), small talk is answered without a search and never
joins a later search, a person the book brings in later gets an honest "not yet" with no hint,
no sentence is quoted twice, and nothing past the position is cited.

Real SQLite, the real ingest and chat use cases and the default embedder (which tells small talk),
on the first sixteen chapters of the novel (the shared data set): enough text past the position
for a later person to exist, a quarter of the import time of the whole book.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir
from folio.agent.citations import listed_quotes
from folio.app.chat import TurnResult
from folio.bootstrap import Container
from folio.config import load_settings
from tests.excerpts import KNOWN_VECTORS, pride_and_prejudice_excerpt
from tests.shared_homes import computed_once

QUESTIONS = [
    "Who is Miss Bingley?",  # 0 not her brother, Mr. Bingley
    "thanks, that helps!",  # 1 small talk
    "Who is Charlotte Lucas?",  # 2 her introduction, not her mother, Lady Lucas
    "Where does she live?",  # 3 a pronoun follow-up
    "Who is Wickham?",  # 4 first met in Chapter XV: not yet
    "Why does Elizabeth dislike Mr. Darcy?",  # 5 a why question
]


@pytest.fixture(scope="module")
def turns(
    real_model: None, books_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[TurnResult], int]:
    """The conversation, played once for the whole run (the import is most of its cost)."""

    def play(root: Path) -> tuple[list[TurnResult], int]:
        excerpt = pride_and_prejudice_excerpt(books_dir, root / "pride_and_prejudice.txt")
        env = {"FOLIO_HOME": str(root / "home")}
        embedder = OnnxEmbedder(packaged_model_dir(), root / "models", known_vectors=KNOWN_VECTORS)
        container = Container(
            load_settings(env=env, conversation_store="sqlite"), embedder=embedder
        )
        book = container.ingest.execute(excerpt).book
        book = container.library.set_position(book.id, chapter="Chapter 10")
        assert book.position.char_offset is not None
        chat = container.chat(provider="offline")
        conversation = container.conversations.create(book.id, "golden pride")
        played = [chat.execute(conversation.id, q) for q in QUESTIONS]
        container.close()
        return played, book.position.char_offset

    return computed_once(tmp_path_factory, "golden-pride", play)


def quotes(turn: TurnResult) -> list[str]:
    return listed_quotes(turn.answer)


def test_who_is_leads_with_the_person_asked_about(turns: tuple[list[TurnResult], int]) -> None:
    played, _ = turns
    bingley, charlotte = quotes(played[0]), quotes(played[2])
    assert bingley and "Miss Bingley" in bingley[0], played[0].answer
    # her introduction first (Chapter V names her only as "the eldest of them"), then her name
    assert charlotte and charlotte[0].startswith("The eldest of them, a sensible"), played[2].answer
    assert any(re.search(r"Charlotte|Miss Lucas", q) for q in charlotte[1:]), played[2].answer
    assert not any(q.startswith("Lady Lucas") for q in charlotte), played[2].answer


def test_small_talk_is_never_searched_nor_joins_a_later_search(
    turns: tuple[list[TurnResult], int],
) -> None:
    played, _ = turns
    assert played[1].searches == () and '"' not in played[1].answer
    assert all("thanks" not in q.lower() for t in played for q in t.searches)


def test_a_later_person_is_not_yet_met_with_no_hint(turns: tuple[list[TurnResult], int]) -> None:
    played, _ = turns
    first_line = played[4].answer.splitlines()[0]
    assert first_line == "Nothing up to Chapter X mentions Wickham.", played[4].answer
    assert "later" not in played[4].answer


def test_a_pronoun_follow_up_searches_with_the_readers_question(
    turns: tuple[list[TurnResult], int],
) -> None:
    played, _ = turns
    assert any("Charlotte Lucas" in q for q in played[3].searches), played[3].searches


def test_no_quote_twice_and_nothing_past_the_position(turns: tuple[list[TurnResult], int]) -> None:
    played, limit = turns
    for turn in played:
        assert max(Counter(quotes(turn)).values(), default=1) == 1, turn.answer
        assert all(s.char_end <= limit for s in turn.citations), turn.citations
