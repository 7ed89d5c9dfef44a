"""A turn whose caller went away is not stored, even when it is past its last event."""

from __future__ import annotations

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.app.cancellation import TurnCancelled, commit_only_if
from tests.unit.test_chat import World


def _turn(world: World, still_wanted: bool) -> object:
    provider = ScriptedChatProvider(
        [tool_call("search_book", {"query": "Victor studies"}), "He studied at Ingolstadt."]
    )
    uow = commit_only_if(world.store.unit_of_work, lambda: still_wanted)
    return world.chat(provider, uow=uow).execute("c1", "Where did Victor study?")


def test_a_turn_no_longer_wanted_at_its_commit_stores_nothing() -> None:
    world = World()
    with pytest.raises(TurnCancelled):
        _turn(world, still_wanted=False)
    assert world.messages() == [] and world.turns() == []


def test_a_turn_still_wanted_is_stored_whole() -> None:
    world = World()
    _turn(world, still_wanted=True)
    assert [t.turn_number for t in world.turns()] == [1]
    assert len(world.messages()) == 4  # question, tool call, tool result, answer
