"""One turn stream for every streaming surface: what a streamed turn owes its client holds the
same on folio's SSE (``/api``, which the web page uses) and on the OpenAI-compatible chunks
(``/v1``). Each test runs on both:

- a client that leaves while a fast answer is still being sent stores nothing (a real
  ``folio serve``; the answer is generated at once and sent slowly);
- the request id names every log line of the turn (JSON logs of a real ``folio serve``);
- a client that leaves before the first byte frees its turn slot: with one turn at a time per
  user, the user's next turn is not refused with 429. The app is driven in-process through ASGI
  2.4, as a server does it whose client has gone after sending its request: ``receive`` says so
  and ``send`` raises ``OSError``, so the response never starts (over a socket, the moment
  between the body read and the first byte cannot be hit at will).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from httpx_sse import connect_sse
from starlette.requests import ClientDisconnect

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import demo_book_home, folio_env

V1 = "/api/v1"
FAST_ANSWER = {"steps": [" ".join(["quick"] * 20000)]}  # generated at once, sent slowly
JSON_LOGS = ("--log-format", "json", "--log-level", "info")


@dataclass(frozen=True)
class Surface:
    """How one surface streams a stored turn: its path and request body, and how its client
    reads the first words of the answer and then leaves."""

    name: str
    path: Callable[[str], str]
    body: Callable[[str, str, str], dict[str, Any]]  # (book id, conversation id, question)
    read_a_little_then_leave: Callable[[FolioServer, str, str, dict[str, str]], None]


def _api_leave(server: FolioServer, book_id: str, cid: str, headers: dict[str, str]) -> None:
    body = API.body(book_id, cid, "Tell me everything")
    with (
        httpx.Client(base_url=server.url, timeout=60, headers=headers) as c,
        connect_sse(c, "POST", API.path(cid), json=body) as source,
    ):
        assert next(iter(source.iter_sse())).event == "delta"


def _openai_leave(server: FolioServer, book_id: str, cid: str, headers: dict[str, str]) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused-locally", max_retries=0)
    stream = client.chat.completions.create(
        model=book_id,
        messages=[{"role": "user", "content": "Tell me everything"}],
        stream=True,
        extra_body={"folio_conversation_id": cid},
        extra_headers=headers,
    )
    with stream:
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break  # the first words of the answer: leave


API = Surface(
    "api",
    lambda cid: f"{V1}/conversations/{cid}/messages",
    lambda book_id, cid, question: {"message": question, "stream": True},
    _api_leave,
)
OPENAI = Surface(
    "v1",
    lambda cid: "/v1/chat/completions",
    lambda book_id, cid, question: {
        "model": book_id,
        "messages": [{"role": "user", "content": question}],
        "stream": True,
        "folio_conversation_id": cid,
    },
    _openai_leave,
)
SURFACES = pytest.mark.parametrize("surface", [API, OPENAI], ids=lambda s: s.name)


def turns_of(c: httpx.Client, cid: str) -> list[int]:
    r = c.get(f"{V1}/conversations/{cid}")
    assert r.status_code == 200, r.text
    return [t["turn_number"] for t in r.json()["turn_details"]]


def when_a_slot_is_free(post: Callable[[], httpx.Response], wait_s: float = 10) -> httpx.Response:
    """``post()``, again while it is refused with 429 (a turn that has just ended may still hold
    the user's only slot for a moment), at most ``wait_s``; a slot never freed stays 429."""
    deadline = time.monotonic() + wait_s
    while True:
        r = post()
        if r.status_code != 429 or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


# --- a real folio serve --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    """One turn at a time per user, JSON logs."""
    home = demo_book_home(tmp_path_factory, "turn-stream-home")
    env = {"FOLIO_MAX_CONCURRENT_TURNS": "1", "FOLIO_GUARDRAIL": "none"}
    with FolioServer(home, env=env, args=JSON_LOGS) as s:
        yield s


@pytest.fixture(scope="module")
def book_id(server: FolioServer) -> str:
    return str(httpx.get(f"{server.url}{V1}/books", timeout=30).json()[0]["id"])


@pytest.fixture
def client(server: FolioServer) -> Iterator[httpx.Client]:
    """A client of the server, whose scripted model answers as usual again."""
    server.set_script(DEFAULT_SCRIPT)
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def new_conversation(c: httpx.Client, book_id: str) -> str:
    r = c.post(f"{V1}/conversations", json={"book_id": book_id})
    assert r.status_code == 201, r.text
    return str(r.json()["conversation_id"])


@SURFACES
def test_a_client_gone_while_a_fast_answer_is_still_being_sent_stores_nothing(
    surface: Surface, server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    server.set_script(FAST_ANSWER)
    surface.read_a_little_then_leave(server, book_id, cid, {})
    server.set_script(DEFAULT_SCRIPT)
    r = when_a_slot_is_free(
        lambda: client.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who?"})
    )
    assert r.status_code == 200, r.text
    assert r.json()["turn_number"] == 1  # the turn whose client left stored nothing
    assert turns_of(client, cid) == [1]


@SURFACES
def test_the_request_id_names_every_log_line_of_the_streamed_turn(
    surface: Surface, server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    given = f"turn-stream.{surface.name}:1"
    body = surface.body(book_id, cid, "Who is Clerval?")
    headers = {"X-Request-ID": given}
    with httpx.stream(
        "POST", f"{server.url}{surface.path(cid)}", json=body, headers=headers, timeout=60
    ) as r:
        assert r.status_code == 200
        assert r.headers["x-request-id"] == given
        streamed = "".join(r.iter_text())
    assert '"stop"' in streamed or "event: done" in streamed, streamed[-500:]
    assert turns_of(client, cid) == [1]

    logged = [json.loads(line) for line in server.log.read_text(encoding="utf-8").splitlines()]
    ours = [e for e in logged if e.get("conversation_id") == cid]
    assert {e["event"] for e in ours} >= {"turn", "tool_call", "model_call"}
    assert {e.get("request_id") for e in ours} == {given}


# --- the app in-process, its client gone before the first byte ------------------------------------
@pytest.fixture(scope="module")
def one_slot_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_book_home(tmp_path_factory, "turn-stream-inprocess")


@pytest.fixture
def app(one_slot_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """folio's HTTP app on the demo book's home: offline, one turn at a time per user."""
    from folio.bootstrap import Container
    from folio.entrypoints.api.app import create_app

    env = folio_env(
        one_slot_home, extra={"FOLIO_PROVIDER": "offline", "FOLIO_MAX_CONCURRENT_TURNS": "1"}
    )
    for name in [n for n in os.environ if n.startswith("FOLIO_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        if name.startswith("FOLIO_"):
            monkeypatch.setenv(name, value)
    container = Container()
    try:
        yield create_app(container)
    finally:
        container.close()


async def _asgi_post(
    app: Any, path: str, body: dict[str, Any], *, gone_after_body: bool
) -> tuple[int | None, bytes]:
    """POST ``body`` as JSON through the ASGI app (ASGI 2.4); the status and body it sent. With
    ``gone_after_body`` the client is gone once its body is read: ``receive`` says so and
    ``send`` raises ``OSError``, as the server of a closed connection does."""
    raw = json.dumps(body).encode()
    delivered = False
    hold = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}
        if not gone_after_body:
            await hold.wait()  # a client that stays until the response ends
        return {"type": "http.disconnect"}

    status: list[int] = []
    sent = bytearray()

    async def send(message: dict[str, Any]) -> None:
        if gone_after_body:
            raise OSError("the client has disconnected")
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message["type"] == "http.response.body":
            sent.extend(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return (status[0] if status else None), bytes(sent)


@SURFACES
def test_a_client_gone_before_the_first_byte_frees_its_turn_slot(
    surface: Surface, app: Any
) -> None:
    from folio.bootstrap import Container

    container: Container = app.state.container
    book_id = container.library.list_books()[0].id
    cid = container.conversations.create(book_id).id

    async def scenario() -> tuple[int | None, bytes]:
        body = surface.body(book_id, cid, "Who is Clerval?")
        for _ in range(3):
            with contextlib.suppress(OSError, ClientDisconnect):
                await _asgi_post(app, surface.path(cid), body, gone_after_body=True)
        deadline = time.monotonic() + 10  # a slot never freed stays taken
        while True:
            status, sent = await _asgi_post(app, surface.path(cid), body, gone_after_body=False)
            if status != 429 or time.monotonic() > deadline:
                return status, sent
            await asyncio.sleep(0.05)

    status, sent = asyncio.run(scenario())
    assert status == 200, sent.decode()[:500]  # not 429: the vanished turns freed the only slot
    assert b"[DONE]" in sent or b"event: done" in sent
    turns = container.conversations.get(cid).turns
    assert [t.turn_number for t in turns] == [1]  # the vanished turns never ran
