"""With a model, the model does the language: in a turn of a provider with tools, the query the
model wrote reaches the index untouched (one search per ``search_book`` call, nothing of the
conversation added), no offline rule runs, and every reading-position bound holds.

The chat use case is wired by the real composition root, with the scripted provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.domain.books import Book, SearchHit
from folio.domain.llm import PromptRole
from tests.unit.test_book_tools import SECRET_WORDS
from tests.unit.test_chat import World


class RecordingSearcher:
    """The story's searcher, remembering each query that reaches it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.queries: list[str] = []

    def search(self, book: Book, query: str, *, k: int = 5) -> list[SearchHit]:
        self.queries.append(query)
        return self.inner.search(book, query, k=k)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
def world() -> World:
    return World()


def _recording(world: World) -> RecordingSearcher:
    recording = RecordingSearcher(world.story.searcher)
    world.story = replace(world.story, searcher=recording)
    return recording


QUESTIONS = [
    ("Who taught Victor chemistry?", "Victor's chemistry teacher at Ingolstadt"),
    ("what did he say about the old masters?", "Professor Waldman on the ancient masters"),
    ("and then?", "what Victor did after Waldman's lecture"),
]


def test_the_models_query_reaches_the_search_untouched_once_per_call_deep_in_a_conversation(
    world: World,
) -> None:
    recording = _recording(world)
    for question, query in QUESTIONS:
        provider = ScriptedChatProvider([tool_call("search_book", {"query": query}), "ok"])
        result = world.chat(provider).execute("c1", question)
        assert result.searches == (query,)
        # the index saw the model's words, once, and nothing of the reader's
        assert recording.queries == [query]
        recording.queries.clear()


_NO_OFFLINE_POLICY = """
import sys
from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from tests.unit.test_chat import World
world = World()
provider = ScriptedChatProvider([tool_call("search_book", {"query": "Waldman"}), "ok"])
world.chat(provider).execute("c1", "thanks! and what did he teach?")
print(sorted(m for m in sys.modules if m.startswith("folio.agent.offline")))
"""


def test_a_model_turn_never_loads_the_offline_policy() -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    done = subprocess.run(
        [sys.executable, "-c", _NO_OFFLINE_POLICY],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_rule_guardrail_is_off_for_model_turns_by_default(world: World) -> None:
    provider = ScriptedChatProvider(["I can only talk about the book, but happy to!"])
    result = world.chat(provider).execute("c1", "How do I bake sourdough bread?")
    assert not result.blocked and result.llm_calls == 1
    assert result.reasoning_steps[0] == "guardrail: guardrail off"


def test_every_spoiler_bound_holds_for_whatever_the_model_asks(world: World) -> None:
    """The model asks for the secrets past the position by name, by page and by passage: nothing
    of them reaches it, the answer's citations, or storage."""
    book = world.story.book
    limit = book.position.char_offset
    assert limit is not None
    past = book.page_at(limit).label
    provider = ScriptedChatProvider(
        [
            [
                tool_call("search_book", {"query": " ".join(SECRET_WORDS), "k": 10}),
                tool_call("read_passage", {"page_start": past}),
                tool_call("read_passage", {"chunk_id": "story-5"}),
                tool_call("list_chapters", {}),
            ],
            f'"{SECRET_WORDS[0]}" (p. {past})',
        ]
    )
    result = world.chat(provider).execute("c1", "What happens to William?")
    results = [m.content for m in world.messages() if m.role is PromptRole.TOOL_RESULT]
    assert len(results) == 4
    shown = []
    for content in results:
        data = json.loads(content).get("data") or {}
        passages = [*data.get("results", []), *([data["passage"]] if "passage" in data else [])]
        assert all(p["char_end"] <= limit for p in passages)
        shown += [p["text"] for p in passages]
    assert shown and not any(word in text for text in shown for word in SECRET_WORDS)
    assert all(c.char_end <= limit for c in result.citations)
