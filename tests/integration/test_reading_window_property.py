"""Property: whatever the volume and the reading position, nothing outside the reading window
reaches the reader or the model, through any surface.

A generated series (``tests.window_series``: three volumes of one series, the second with an
editor's introduction, and a book of another series) is imported into a real SQLite library
through the composition root. Every paragraph carries its own marker word. For random volumes and
positions (chapters, percentages, the whole volume; the earlier volumes' own positions random too,
as they do not matter), every in-process surface is driven and its output searched for markers the
reader has not read: the search use case, ``Library.read``, each book tool through the MCP
server's own call path, a chat turn with a scripted model (every message sent to it, the model's
chapter recaps included, and the answer's citations), the history replayed in later turns of one
conversation whose position moves both ways, and an offline turn. The process-level surfaces
(CLI, HTTP, OpenAI-compatible, MCP over HTTP) are driven with fewer examples in
``tests/e2e/test_reading_window_surfaces.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.errors import BookError
from folio.domain.llm import PromptMessage, ToolDefinition
from folio.domain.users import ResourceKind
from folio.entrypoints.mcp.server import call as mcp_call
from tests.window_series import (
    CHAPTERS,
    VOLUMES,
    all_markers,
    allowed_markers,
    leaks,
    marker,
    without_queries,
    write_series,
)

EXAMPLES = 30


@dataclass
class Saga:
    container: Container
    books: list[Book]  # by volume number
    texts: dict[int, str]
    conversations: dict[int, str]  # one conversation per volume, its history growing


@pytest.fixture(scope="module")
def saga(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Saga]:
    home = tmp_path_factory.mktemp("window")
    env = {"FOLIO_HOME": str(home / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    books = [container.ingest.execute(v.path).book for v in write_series(home / "books")]
    texts = {i: container.books.get_text(b.id) for i, b in enumerate(books)}
    conversations = {
        i: container.conversations.create(b.id, f"volume {i}").id for i, b in enumerate(books)
    }
    yield Saga(container, books, texts, conversations)


def _positions() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.integers(1, CHAPTERS).map(lambda c: {"chapter": str(c)}),
        st.floats(0, 100, allow_nan=False).map(lambda p: {"percent": p}),
        st.just({"reset": True}),
    )


def _set(saga: Saga, volume: int, position: dict[str, Any]) -> Book:
    return saga.container.library.set_position(saga.books[volume].id, **position)


def _story_end(book: Book) -> int:
    story = [c for c in book.chapters if c.is_story]
    return book.chapter_end(story[-1])


def _queries(rng: random.Random) -> list[str]:
    markers = sorted(all_markers())
    return [*rng.sample(markers, 6), " ".join(markers), "harbour road morning"]


# --- the surfaces ---------------------------------------------------------------------------------
def _search_outputs(saga: Saga, book: Book, queries: Sequence[str]) -> list[str]:
    library, searcher = saga.container.library, saga.container.searcher
    window = library.window(book)
    out = []
    for q in queries:
        for hit in searcher.search(book, q, k=10, window=window):
            out += [hit.chunk.text, hit.snippet, hit.location]
    return out


def _read_outputs(saga: Saga, book: Book, rng: random.Random) -> list[str]:
    out = []
    for _ in range(6):
        start = rng.randrange(0, book.char_count)
        try:
            out.append(saga.container.library.read(book.id, start, start + 3000).text)
        except BookError as e:
            out.append(e.message)
    return out


def _tool_calls(book: Book, rng: random.Random, queries: Sequence[str]) -> list[tuple[str, dict]]:
    page = str(rng.randint(1, max(1, book.page_count)))
    return [
        *(("search_book", {"query": q, "k": 10}) for q in queries),
        ("read_passage", {"page_start": page, "page_end": str(int(page) + 2)}),
        ("list_chapters", {}),
        ("recap_story", {}),
        ("recap_story", {"chapter": str(rng.randint(1, CHAPTERS))}),
        ("people_so_far", {}),
    ]


def _mcp_outputs(saga: Saga, book: Book, calls: Sequence[tuple[str, dict]]) -> list[str]:
    scope = saga.container.for_user(None)
    out = []
    for name, arguments in calls:
        result = mcp_call(scope, saga.container, name, {"book": book.id, **arguments})
        out.append(without_queries(result.model_dump_json()))
    return out


def _model(calls: Sequence[tuple[str, dict]]) -> ScriptedChatProvider:
    """A model that calls each tool once, then answers; asked without tools (a chapter recap),
    it answers with a recap of its own words."""
    plan = [tool_call(name, arguments) for name, arguments in calls]

    def step(messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition] | None) -> Any:
        if not tools:
            return "The chapter goes by quietly."
        return plan.pop(0) if plan else "That is what the book says so far."

    return ScriptedChatProvider([step] * (len(calls) + 60))


def _chat_outputs(saga: Saga, volume: int, calls: Sequence[tuple[str, dict]]) -> list[str]:
    provider = _model(calls)
    chat = saga.container.overridden(provider=provider).chat()
    result = chat.execute(saga.conversations[volume], "What has happened so far?")
    # what the model was sent: its own tool calls' arguments are its words, not the book's
    sent = [without_queries(m.content) for c in provider.calls for m in c.messages]
    cited = [f"{s.location} {s.quote}" for s in result.citations]
    return [*sent, result.answer, *cited]


def _offline_outputs(saga: Saga, volume: int) -> list[str]:
    chat = saga.container.chat("offline")
    result = chat.execute(saga.conversations[volume], "Who walked along the harbour road?")
    return [result.answer, *(f"{s.location} {s.quote}" for s in result.citations)]


# --- the property ---------------------------------------------------------------------------------
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a chat is slow
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    volume=st.integers(0, VOLUMES),
    position=_positions(),
    others=st.lists(_positions(), min_size=VOLUMES + 1, max_size=VOLUMES + 1),
    seed=st.integers(0, 2**16),
)
def test_nothing_outside_the_reading_window_reaches_the_reader_or_the_model(
    saga: Saga,
    volume: int,
    position: dict[str, Any],
    others: list[dict[str, Any]],
    seed: int,
) -> None:
    for v, other in enumerate(others):
        if v != volume:
            _set(saga, v, other)
    book = _set(saga, volume, position)
    # the other series' book: its own text only, never the saga's
    texts, current = (saga.texts, volume) if volume < VOLUMES else ({0: saga.texts[volume]}, 0)
    allowed = allowed_markers(texts, current, book.position.char_offset, _story_end(book))
    rng = random.Random(seed)
    queries = _queries(rng)
    # the model's own queries name no marker: history replays them as the model wrote them
    calls = _tool_calls(book, rng, ["harbour road morning", "kind and patient"])
    surfaces = {
        "search": _search_outputs(saga, book, queries),
        "read": _read_outputs(saga, book, rng),
        "tools (MCP call path)": _mcp_outputs(saga, book, _tool_calls(book, rng, queries)),
        "chat with a model (history, recaps, citations)": _chat_outputs(saga, volume, calls),
        "offline chat": _offline_outputs(saga, volume),
    }
    for surface, outputs in surfaces.items():
        for output in outputs:
            leaked = leaks(output, allowed)
            where = output[max(0, output.find(min(leaked, default="")) - 300) :][:600]
            assert not leaked, (
                f"{surface} showed {sorted(leaked)} at {book.describe_position()}: ...{where}..."
            )


def test_chatting_with_volume_three_searches_the_earlier_volumes_and_cites_them(saga: Saga) -> None:
    for v in range(VOLUMES):
        _set(saga, v, {"chapter": "1"})  # the earlier volumes' own positions do not matter
    book = _set(saga, 2, {"chapter": "2"})
    earlier = marker(0, CHAPTERS, 0)  # volume 1's last chapter
    provider = ScriptedChatProvider([tool_call("search_book", {"query": earlier}), "Found."])
    chat = saga.container.overridden(provider=provider).chat()
    conversation = saga.container.conversations.create(book.id, "series")
    result = chat.execute(conversation.id, f"Who is {earlier}?")
    system = provider.calls[0].messages[0].content
    assert 'earlier volumes ("Harbour Saga One"; "Harbour Saga Two") in full' in system
    assert result.citations and result.citations[0].volume == "Harbour Saga One"
    assert result.citations[0].location.startswith(f"Harbour Saga One, Chapter {CHAPTERS}, p.")
    assert earlier in result.citations[0].quote
    people = mcp_call(saga.container.for_user(None), saga.container, "people_so_far",
                      {"book": book.id})  # fmt: skip
    assert marker(0, 1, 0) in people.model_dump_json()  # met in volume 1
    recap = mcp_call(
        saga.container.for_user(None), saga.container, "recap_story", {"book": book.id}
    )
    assert "Harbour Saga One" in recap.model_dump_json()


def test_another_readers_volume_of_the_series_is_never_in_the_window(
    tmp_path: Path,
) -> None:
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    one, two = (container.ingest.execute(v.path).book for v in write_series(tmp_path)[:2])
    ann, _ = container.users.add("ann")
    bob, _ = container.users.add("bob")
    container.ownership.set_owner(ResourceKind.BOOK, one.id, bob.id)  # volume 1 is Bob's
    container.ownership.set_owner(ResourceKind.BOOK, two.id, ann.id)  # volume 2 is Ann's
    ann_scope = container.for_user(ann.id)
    window = ann_scope.library.window(ann_scope.books.get(two.id))
    assert window.earlier == ()
    hits = ann_scope.searcher.search(window.book, marker(0, 1, 0), k=10, window=window)
    assert all(h.chunk.book_id == two.id for h in hits)
    bob_scope = container.for_user(bob.id)
    container.ownership.set_owner(ResourceKind.BOOK, two.id, bob.id)  # both Bob's: now a series
    assert [b.id for b in bob_scope.library.window(bob_scope.books.get(two.id)).earlier] == [one.id]
