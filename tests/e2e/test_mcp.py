"""folio's MCP server through the official ``mcp`` SDK's own client: over stdio (``folio mcp`` as a
subprocess, as a desktop assistant runs it) and over streamable HTTP (mounted in a real ``folio
serve``, behind the API's tokens). Every book tool is bounded by the position the server holds."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, folio_env, ok_json, run_folio_in

BOOK_TOOLS = {"search_book", "read_passage", "list_chapters"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo book, read to 10%."""
    home = demo_book_home(tmp_path_factory, "mcp-home")
    return home


@pytest.fixture(scope="module")
def limit(home: Path) -> int:
    return int(
        ok_json(run_folio_in(home, "position", "frank", "--percent", "10", "--json"))["char_offset"]
    )


def stdio(home: Path) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "folio.entrypoints.cli.main", "mcp"],
        env=folio_env(home),
    )
    return Client(params)


def run(scenario: Callable[[Client], Awaitable[Any]], client: Client) -> Any:
    async def main() -> Any:
        async with client:
            return await scenario(client)

    return anyio.run(main)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content or json.loads(result.content[0].text))


def error_text(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


# --- stdio ----------------------------------------------------------------------------------------
def test_over_stdio_the_tools_are_listed_with_their_schemas(home: Path) -> None:
    async def scenario(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(scenario, stdio(home))}
    assert {"list_books", *BOOK_TOOLS} <= set(tools)
    for name in BOOK_TOOLS:
        schema = tools[name].input_schema
        assert "book" in schema["required"] and schema["properties"]["book"]["type"] == "string"
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint
    assert "query" in tools["search_book"].input_schema["required"]
    assert "position" not in json.dumps(tools["search_book"].input_schema["properties"])


def test_over_stdio_a_search_never_goes_past_the_readers_position(home: Path, limit: int) -> None:
    async def scenario(client: Client) -> Any:
        books = data(await client.call_tool("list_books", {}))["books"]
        found = await client.call_tool(
            "search_book", {"book": books[0]["id"], "query": "Clerval murdered", "k": 10}
        )
        by_title = await client.call_tool("list_chapters", {"book": "Frankenstein"})
        past = await client.call_tool("read_passage", {"book": "frank", "page_start": "150"})
        return books, data(found), data(by_title), past

    books, found, chapters, past = run(scenario, stdio(home))
    assert books[0]["position"].startswith("through 10% of the book (Chapter ")
    assert found["results"], "the first tenth mentions Clerval"
    assert all(p["char_end"] <= limit for p in found["results"])
    # an MCP client is a model: after the first two passages, each is cut to what answers (as
    # in a model's chat turn), its place still the whole passage's
    rest = found["results"][2:]
    assert rest and all(len(p["text"]) <= 720 for p in rest), [len(p["text"]) for p in rest]
    assert any("…" in p["text"] and p["char_end"] - p["char_start"] > 720 for p in rest)
    assert found["reading_limit"] == books[0]["position"]
    assert chapters["chapters"] and chapters["book"] == books[0]["id"]
    assert "past the reader's position" in error_text(past)


def test_over_stdio_errors_are_tool_errors(home: Path) -> None:
    async def scenario(client: Client) -> Any:
        return (
            await client.call_tool("search_book", {"book": "no such book", "query": "x"}),
            await client.call_tool("search_book", {"book": "frank"}),
            await client.call_tool("nonexistent", {}),
        )

    missing, no_query, unknown = run(scenario, stdio(home))
    assert "no such book" in error_text(missing).lower() or "no book" in error_text(missing).lower()
    assert "query" in error_text(no_query)
    assert "Unknown tool" in error_text(unknown)


# --- streamable HTTP in folio serve ---------------------------------------------------------------
@pytest.fixture(scope="module")
def server(home: Path, limit: int) -> Iterator[FolioServer]:
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


def over_http(server: FolioServer, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    return Client(streamable_http_client(f"{server.url}/mcp/", http_client=http))


def test_over_http_in_folio_serve_the_same_tools_answer_bounded_by_the_position(
    server: FolioServer, limit: int
) -> None:
    async def scenario(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        found = await client.call_tool("search_book", {"book": "frank", "query": "Clerval"})
        return tools, data(found)

    tools, found = run(scenario, over_http(server))
    assert {"list_books", *BOOK_TOOLS} <= {t.name for t in tools}
    assert found["results"] and all(p["char_end"] <= limit for p in found["results"])


def test_over_http_a_server_with_users_needs_a_token_and_scopes_the_books(tmp_path: Path) -> None:
    from folio.entrypoints.cli.demo import bundled_book

    ok_json(run_folio_in(tmp_path, "add", str(bundled_book()), "--json"))
    token = ok_json(run_folio_in(tmp_path, "users", "add", "ada", "--json"))["token"]
    with FolioServer(tmp_path, env={"FOLIO_PROVIDER": "offline"}) as s:
        refused = httpx2.post(f"{s.url}/mcp/", json={}, timeout=30)
        assert refused.status_code == 401

        async def scenario(client: Client) -> Any:
            books = data(await client.call_tool("list_books", {}))["books"]
            other = await client.call_tool("search_book", {"book": "frank", "query": "Clerval"})
            return books, other

        books, other = run(scenario, over_http(s, token))
        assert books == []  # the local user's book is not ada's
        assert other.is_error
