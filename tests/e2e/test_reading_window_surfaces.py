"""Property, through the processes a reader uses: whatever the volume and the reading position,
nothing outside the reading window reaches the reader or the model through the CLI, the HTTP
API, the OpenAI-compatible API or MCP over HTTP.

The generated series of ``tests.window_series`` is added with the real CLI into one data
directory, served by a real ``folio serve`` (the scripted model, the hashing embedder). For a few
random volumes and positions (each process-level example costs seconds; the same property runs
with many more examples in-process in ``tests/integration/test_reading_window_property.py``),
the position is set with ``folio position`` and then: ``folio search``, ``folio read``,
``folio show`` and a ``folio chat`` turn; the API's search, text and book routes and a turn
whose stored messages (what the model was sent) are read back; an OpenAI-client chat completion
with its citations; and every book tool over MCP. No marker word from past the position, from
unread matter or from a later volume may appear in any of it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import openai
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in
from tests.window_series import (
    CHAPTERS,
    VOLUMES,
    all_markers,
    allowed_markers,
    leaks,
    without_queries,
    write_series,
)

EXAMPLES = 3
V1 = "/api/v1"
SCRIPT = {
    "steps": [
        [
            {"tool": "search_book", "arguments": {"query": "harbour road morning", "k": 10}},
            {"tool": "list_chapters", "arguments": {}},
            {"tool": "people_so_far", "arguments": {}},
        ],
        "That is what the book says so far.",
    ]
}
QUERY = " ".join(sorted(all_markers()))  # every marker: a search may only find those read


@dataclass
class Served:
    home: Path
    server: FolioServer
    books: list[dict[str, Any]]  # by volume number
    texts: dict[int, str]
    script: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("window-home")
    for volume in write_series(tmp_path_factory.mktemp("window-books")):
        ok(run_folio_in(home, "add", str(volume.path)))
    by_title = {b["title"]: b for b in ok_json(run_folio_in(home, "books", "--json"))}
    titles = [v.title for v in write_series(tmp_path_factory.mktemp("titles"))]
    books = [by_title[t] for t in titles]
    with FolioServer(home, script=SCRIPT) as server:
        texts = {i: _text(server, b["id"]) for i, b in enumerate(books)}
        yield Served(home, server, books, texts, server.script_path)


def _text(server: FolioServer, book_id: str) -> str:
    """The whole stored text, read with the position reset (the test's own oracle)."""
    httpx.put(f"{server.url}{V1}/books/{book_id}/position", json={"reset": True}, timeout=30)
    out, start = [], 0
    while True:
        r = httpx.get(
            f"{server.url}{V1}/books/{book_id}/text",
            params={"start": start, "end": start + 20_000},
            timeout=30,
        )
        if r.status_code != 200:
            return "".join(out)
        out.append(r.json()["text"])
        start = r.json()["char_end"]


def _cli(served: Served, *args: str) -> str:
    env = {"FOLIO_PROVIDER": "scripted", "FOLIO_SCRIPT": str(served.script)}
    result = run_folio_in(served.home, *args, env=env)
    return result.stdout + result.stderr


def _cli_outputs(served: Served, book_id: str, page: int) -> list[str]:
    return [
        _cli(served, "search", book_id, QUERY, "-k", "10", "--json"),
        _cli(served, "read", book_id, "--page", str(page)),
        _cli(served, "show", book_id, "--json"),
        _cli(served, "chat", book_id, "--new", "--message", "What happened so far?", "--json"),
    ]


def _http_outputs(served: Served, book_id: str, rng: random.Random) -> list[str]:
    with httpx.Client(base_url=served.server.url, timeout=60) as client:
        start = rng.randrange(0, 5000)
        span = {"start": start, "end": start + 4000}
        out = [
            client.get(f"{V1}/books/{book_id}/search", params={"q": QUERY, "k": 10}).text,
            client.get(f"{V1}/books/{book_id}/text", params=span).text,
            client.get(f"{V1}/books/{book_id}").text,
        ]
        created = client.post(f"{V1}/conversations", json={"book_id": book_id})
        cid = created.json()["conversation_id"]
        turn = client.post(f"{V1}/conversations/{cid}/messages", json={"message": "So far?"})
        stored = client.get(f"{V1}/conversations/{cid}", params={"verbose": True})
        return [*out, turn.text, without_queries(stored.text)]


def _openai_outputs(served: Served, book_id: str) -> list[str]:
    client = openai.OpenAI(
        base_url=f"{served.server.url}/v1", api_key="unused-locally", max_retries=0
    )
    answer = client.chat.completions.create(
        model=book_id, messages=[{"role": "user", "content": "What happened so far?"}]
    )
    return [answer.model_dump_json()]


def _mcp_outputs(served: Served, book_id: str, page: int) -> list[str]:
    calls = [
        ("search_book", {"query": QUERY, "k": 10}),
        ("read_passage", {"page_start": str(page), "page_end": str(page + 2)}),
        ("list_chapters", {}),
        ("recap_story", {}),
        ("people_so_far", {}),
    ]

    async def main() -> list[str]:
        http = httpx2.AsyncClient(timeout=60)
        async with Client(
            streamable_http_client(f"{served.server.url}/mcp/", http_client=http)
        ) as c:
            results = [await c.call_tool(name, {"book": book_id, **args}) for name, args in calls]
        return [without_queries(r.model_dump_json()) for r in results]

    return anyio.run(main)


def _position_args(position: tuple[str, Any]) -> list[str]:
    kind, value = position
    return ["--reset"] if kind == "reset" else [f"--{kind}", str(value)]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    volume=st.integers(0, VOLUMES),
    position=st.one_of(
        st.tuples(st.just("chapter"), st.integers(1, CHAPTERS)),
        st.tuples(st.just("percent"), st.integers(0, 100)),
        st.tuples(st.just("reset"), st.none()),
    ),
    seed=st.integers(0, 2**16),
)
def test_no_process_surface_shows_anything_outside_the_reading_window(
    served: Served, volume: int, position: tuple[str, Any], seed: int
) -> None:
    book_id = served.books[volume]["id"]
    set_to = ok_json(run_folio_in(served.home, "position", book_id, *_position_args(position),
                                  "--json"))  # fmt: skip
    limit = set_to["char_offset"]
    story_end = len(served.texts[volume])  # the last section of each generated book is a chapter
    texts, current = (served.texts, volume) if volume < VOLUMES else ({0: served.texts[volume]}, 0)
    allowed = allowed_markers(texts, current, limit, story_end)
    rng = random.Random(seed)
    page = rng.randint(1, 4)
    surfaces = {
        "CLI": _cli_outputs(served, book_id, page),
        "HTTP": _http_outputs(served, book_id, rng),
        "OpenAI-compatible": _openai_outputs(served, book_id),
        "MCP over HTTP": _mcp_outputs(served, book_id, page),
    }
    for surface, outputs in surfaces.items():
        for output in outputs:
            leaked = leaks(without_queries(output), allowed)
            assert not leaked, f"{surface} showed {sorted(leaked)} at {set_to['description']}"


def test_the_series_is_read_from_the_epubs(served: Served) -> None:
    assert [(b["series"], b["series_index"]) for b in served.books] == [
        ("Harbour Saga", 1.0),
        ("Harbour Saga", 2.0),
        ("Harbour Saga", 3.0),
        ("Lantern Tales", 1.0),
    ]
    # the question's words are searched across volume 1 and volume 2 up to its position
    ok(run_folio_in(served.home, "position", served.books[1]["id"], "--chapter", "1"))
    hits = json.loads(_cli(served, "search", served.books[1]["id"], QUERY, "-k", "10", "--json"))
    assert {h["volume"] for h in hits} == {None, "Harbour Saga One"}
    assert any(h["location"].startswith("Harbour Saga One, Chapter") for h in hits)
    # a citation's volume is read there, in full; a later volume never
    url = f"{served.server.url}{V1}/books/{served.books[1]['id']}/text"
    span = {"start": 0, "end": 2000}
    earlier = httpx.get(url, params={**span, "volume": served.books[0]["id"]}, timeout=30)
    assert earlier.status_code == 200 and earlier.json()["volume"] == "Harbour Saga One"
    later = httpx.get(url, params={**span, "volume": served.books[2]["id"]}, timeout=30)
    assert later.status_code == 400 and "not an earlier volume" in later.json()["error"]["message"]
