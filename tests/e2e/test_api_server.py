"""The HTTP API against a real ``folio serve`` process on a loopback port (scripted provider,
hashing embedder): every route, the one error body, streamed turns with named events, stateless
turns, disconnects, provider failures, racing turns and a kill -9 mid-turn."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import demo_book_home, folio_env, ok, ok_json, run_folio_in

V1 = "/api/v1"
SLOW_SCRIPT = {"delay": 0.05, "steps": [" ".join(["word"] * 400)]}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the bundled demo book imported through the CLI (copied from the run's)."""
    return demo_book_home(tmp_path_factory, "api-home")


@pytest.fixture(scope="module")
def server(library: Path) -> Iterator[FolioServer]:
    with FolioServer(
        library, env={"FOLIO_MAX_CONCURRENT_TURNS": "16", "FOLIO_MAX_REQUEST_MB": "1"}
    ) as s:
        yield s


@pytest.fixture
def client(server: FolioServer) -> Iterator[httpx.Client]:
    server.set_script(DEFAULT_SCRIPT)
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


@pytest.fixture
def book_id(client: httpx.Client) -> str:
    books = client.get(f"{V1}/books").json()
    return str(books[0]["id"])


def new_conversation(client: httpx.Client, book_id: str, title: str | None = None) -> str:
    body: dict[str, Any] = {"book_id": book_id}
    if title:
        body["title"] = title
    r = client.post(f"{V1}/conversations", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["conversation_id"])


def turns_of(client: httpx.Client, conversation_id: str) -> list[int]:
    r = client.get(f"{V1}/conversations/{conversation_id}")
    assert r.status_code == 200, r.text
    return [t["turn_number"] for t in r.json()["turn_details"]]


def assert_error(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert set(error) >= {"code", "message"} and error["message"]
    if code is not None:
        assert error["code"] == code
    return dict(error)


def sse_events(client: httpx.Client, method: str, url: str, body: dict[str, Any]) -> list[Any]:
    with connect_sse(client, method, url, json=body) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        return [(e.event, json.loads(e.data)) for e in source.iter_sse()]


# --- books -------------------------------------------------------------------------------------
def test_books_list_get_position_and_search(client: httpx.Client, book_id: str) -> None:
    books = client.get(f"{V1}/books").json()
    assert len(books) == 1 and books[0]["title"].startswith("Frankenstein")
    detail = client.get(f"{V1}/books/{book_id}").json()
    assert detail["id"] == book_id and len(detail["chapters"]) > 10

    picked = client.put(f"{V1}/books/{book_id}/position", json={"chapter_index": 2})
    assert picked.json()["reading_position"]["chapter"] == detail["chapters"][1]["title"]
    r = client.put(f"{V1}/books/{book_id}/position", json={"chapter": "Chapter 5"})
    assert r.status_code == 200, r.text
    assert r.json()["reading_position"]["kind"] == "chapter"
    assert r.json()["reading_position"]["chapter"] == "Chapter 5"  # the book's own words
    assert r.json()["reading_position"]["description"].startswith("through Chapter 5 (p. ")
    assert client.put(f"{V1}/books/{book_id}/position", json={"chapter": 5}).json() == r.json()
    assert r.json()["reading_position"]["include_matter"] is False  # off until asked
    matter = client.put(f"{V1}/books/{book_id}/position", json={"include_matter": True}).json()
    assert matter["reading_position"]["include_matter"] is True
    assert matter["reading_position"]["chapter"] == "Chapter 5"
    off = client.put(f"{V1}/books/{book_id}/position", json={"include_matter": False})
    assert off.json() == r.json()
    later = [c for c in r.json()["chapters"] if c["unread"] and c["kind"] == "story"]
    # unread: their titles only number them here ("Chapter 6"), so they are shown
    assert later and all(re.fullmatch(r"Chapter \d+", c["title"]) for c in later)
    shown = client.get(f"{V1}/books/{book_id}", params={"all_chapters": True}).json()
    assert all(c["title"] for c in shown["chapters"])

    hits = client.get(f"{V1}/books/{book_id}/search", params={"q": "Clerval", "k": 3}).json()
    assert 0 < len(hits["results"]) <= 3
    limit = r.json()["reading_position"]["char_offset"]
    assert all(h["char_end"] <= limit for h in hits["results"])  # nothing past the position

    # A citation's passage, read by offsets: cut at the position, refused past it.
    span = {"start": limit - 100, "end": limit + 900}
    text = client.get(f"{V1}/books/{book_id}/text", params=span)
    assert text.status_code == 200, text.text
    assert (text.json()["char_start"], text.json()["char_end"]) == (limit - 100, limit)
    assert len(text.json()["text"]) == 100 and text.json()["location"]
    past = client.get(f"{V1}/books/{book_id}/text", params={"start": limit, "end": limit + 10})
    assert "reading position" in assert_error(past, 400, "INVALID_POSITION")["message"]
    too_long = client.get(f"{V1}/books/{book_id}/text", params={"start": 0, "end": 30_000})
    assert "20000" in assert_error(too_long, 400, "INVALID_INPUT")["message"]
    assert_error(client.get(f"{V1}/books/{book_id}/text", params={"start": -1, "end": 5}), 422)

    assert client.put(f"{V1}/books/{book_id}/position", json={"reset": True}).status_code == 200
    edited = client.patch(f"{V1}/books/{book_id}", json={"title": "Frankenstein", "author": ""})
    assert (edited.json()["title"], edited.json()["author"]) == ("Frankenstein", None)
    assert client.get(f"{V1}/books").json()[0]["title"] == "Frankenstein"
    assert_error(client.patch(f"{V1}/books/{book_id}", json={"title": "   "}), 400)
    assert_error(client.patch(f"{V1}/books/nope", json={"title": "x"}), 404)
    series = client.patch(f"{V1}/books/{book_id}", json={"series": "Gothic", "series_index": 2})
    assert (series.json()["series"], series.json()["series_index"]) == ("Gothic", 2.0)
    assert client.get(f"{V1}/books").json()[0]["series"] == "Gothic"
    assert_error(client.patch(f"{V1}/books/{book_id}", json={"series_index": -1}), 422)
    assert_error(client.patch(f"{V1}/books/{book_id}", json={"series": "", "series_index": 1}), 400)
    assert client.get(f"{V1}/books/{book_id}").json()["series_index"] == 2.0
    assert_error(client.put(f"{V1}/books/{book_id}/position", json={}), 400, "INVALID_POSITION")
    assert_error(client.put(f"{V1}/books/{book_id}/position", json={"chapter": 9999}), 400)
    assert_error(client.get(f"{V1}/books/{book_id}/search", params={"q": ""}), 422)


def test_unknown_resources_are_404_with_the_error_body(client: httpx.Client) -> None:
    assert_error(client.get(f"{V1}/books/nope"), 404, "NOT_FOUND")
    assert_error(client.delete(f"{V1}/books/nope"), 404)
    assert_error(client.get(f"{V1}/books/nope/search", params={"q": "x"}), 404)
    assert_error(client.get(f"{V1}/conversations/nope"), 404)
    assert_error(client.patch(f"{V1}/conversations/nope", json={"title": "x"}), 404)
    assert_error(client.delete(f"{V1}/conversations/nope"), 404)
    assert_error(client.get(f"{V1}/conversations/nope/export"), 404)
    assert_error(client.post(f"{V1}/conversations/nope/messages", json={"message": "hi"}), 404)
    assert_error(client.post(f"{V1}/conversations", json={"book_id": "nope"}), 404)
    assert_error(client.get(f"{V1}/no-such-route"), 404)
    assert_error(client.put(f"{V1}/books"), 405)
    assert_error(client.post(f"{V1}/conversations", content=b"{not json"), 422, "INVALID_INPUT")


# --- conversations -----------------------------------------------------------------------------
def test_conversation_crud_pagination_export_import(client: httpx.Client, book_id: str) -> None:
    ids = [new_conversation(client, book_id, f"c{i}") for i in range(3)]
    listed = client.get(f"{V1}/conversations", params={"book_id": book_id, "limit": 2}).json()
    assert listed["total"] >= 3 and len(listed["items"]) == 2
    assert [c["conversation_id"] for c in listed["items"]] == ids[::-1][:2]  # newest first
    second = client.get(
        f"{V1}/conversations", params={"book_id": book_id, "limit": 2, "offset": 2}
    ).json()
    assert second["items"][0]["conversation_id"] == ids[0]

    r = client.patch(f"{V1}/conversations/{ids[0]}", json={"title": "Renamed"})
    assert r.json()["title"] == "Renamed"
    assert (
        client.post(
            f"{V1}/conversations/{ids[0]}/messages", json={"message": "Who is Clerval?"}
        ).status_code
        == 200
    )

    md = client.get(f"{V1}/conversations/{ids[0]}/export", params={"format": "md"})
    assert md.headers["content-type"].startswith("text/markdown")
    assert "Renamed" in md.text and "Who is Clerval?" in md.text
    exported = client.get(f"{V1}/conversations/{ids[0]}/export", params={"format": "json"}).json()
    imported = client.post(f"{V1}/conversations/import", json=exported)
    assert imported.status_code == 201, imported.text
    new_id = imported.json()["conversation_id"]
    assert new_id != ids[0] and turns_of(client, new_id) == [1]
    assert_error(client.post(f"{V1}/conversations/import", json={"x": 1}), 400)

    assert client.delete(f"{V1}/conversations/{ids[1]}").status_code == 204
    assert_error(client.get(f"{V1}/conversations/{ids[1]}"), 404)


# --- turns -------------------------------------------------------------------------------------
def test_json_turn_is_stored_with_its_metadata(client: httpx.Client, book_id: str) -> None:
    cid = new_conversation(client, book_id)
    r = client.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who is Clerval?"})
    assert r.status_code == 200, r.text
    turn = r.json()
    assert turn["conversation_id"] == cid and turn["turn_number"] == 1
    assert turn["answer"].startswith("Henry Clerval")
    assert turn["searches"] == ["Clerval"] and turn["provider"] == "scripted"
    assert turn["tool_calls"][0]["name"] == "search_book"
    assert turn["reasoning_steps"] and turn["latency_ms"] > 0 and turn["input_tokens"] > 0
    r2 = client.post(f"{V1}/conversations/{cid}/messages", json={"message": "And then?"})
    assert r2.json()["turn_number"] == 2
    detail = client.get(f"{V1}/conversations/{cid}").json()
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2
    verbose = client.get(f"{V1}/conversations/{cid}", params={"verbose": True}).json()
    assert "tool_result" in [m["role"] for m in verbose["messages"]]


def test_conversation_window_bounds_the_history_the_model_sees(
    client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    url = f"{V1}/conversations/{cid}/messages"
    for _ in range(3):
        assert client.post(url, json={"message": "Who is Clerval?"}).status_code == 200
    full = client.post(url, json={"message": "And then?"}).json()
    short = client.post(url, json={"message": "And then?", "conversation_window": 1}).json()
    assert short["input_tokens"] < full["input_tokens"]
    assert_error(client.post(url, json={"message": "x", "conversation_window": 0}), 422)


def test_streamed_turn_sends_named_events_then_done(client: httpx.Client, book_id: str) -> None:
    cid = new_conversation(client, book_id)
    events = sse_events(
        client, "POST", f"{V1}/conversations/{cid}/messages",
        {"message": "Who is Clerval?", "stream": True},
    )  # fmt: skip
    names = [name for name, _ in events]
    assert names[0] == "tool_call" and names[1] == "tool_result" and names[-1] == "done"
    assert set(names[2:-1]) == {"delta"}
    done = events[-1][1]
    assert "".join(d["text"] for n, d in events if n == "delta") == done["answer"]
    assert done["turn_number"] == 1 and turns_of(client, cid) == [1]


def test_failures_before_the_answer_are_statuses_not_streams(
    client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    url = f"{V1}/conversations/{cid}/messages"
    assert_error(
        client.post(f"{V1}/conversations/nope/messages", json={"message": "x", "stream": True}), 404
    )
    assert_error(client.post(url, json={"message": "   ", "stream": True}), 422)
    assert_error(client.post(url, json={"message": "x" * 9000, "stream": True}), 413, "TOO_LARGE")
    assert_error(client.post(url, json={"stream": True}), 422)
    assert_error(
        client.post(f"{V1}/chat", json={"book_id": "nope", "message": "x", "stream": True}), 404
    )
    assert turns_of(client, cid) == []


def test_provider_failure_is_an_error_event_and_stores_nothing(
    server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    server.set_script({"steps": [{"error": "UNAVAILABLE", "message": "the model is down"}]})
    events = sse_events(
        client,
        "POST",
        f"{V1}/conversations/{cid}/messages",
        {"message": "Hi there, who is Victor?", "stream": True},
    )
    assert events[-1][0] == "error"
    assert events[-1][1]["error"]["code"] == "UNAVAILABLE"
    r = client.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who is Victor?"})
    assert_error(r, 503, "UNAVAILABLE")
    assert turns_of(client, cid) == []


def test_chat_route_stateless_and_with_session(client: httpx.Client, book_id: str) -> None:
    before = client.get(f"{V1}/conversations").json()["total"]
    r = client.post(f"{V1}/chat", json={"book_id": book_id, "message": "Who is Clerval?"})
    assert r.status_code == 200, r.text
    assert r.json()["turn_number"] == 1 and r.json()["citations"] is not None
    events = sse_events(
        client,
        "POST",
        f"{V1}/chat",
        {"book_id": book_id, "message": "Who is Clerval?", "stream": True},
    )
    assert events[-1][0] == "done"
    assert client.get(f"{V1}/conversations").json()["total"] == before  # stored nothing

    cid = new_conversation(client, book_id)
    for expected in (1, 2):
        r = client.post(
            f"{V1}/chat", json={"book_id": book_id, "message": "More?", "session_id": cid}
        )
        assert r.json()["turn_number"] == expected
    assert turns_of(client, cid) == [1, 2]
    assert_error(
        client.post(f"{V1}/chat", json={"book_id": book_id, "message": "x", "session_id": "nope"}),
        404,
    )


def test_disconnect_mid_stream_stores_nothing(
    server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    server.set_script(SLOW_SCRIPT)
    body = {"message": "Tell me everything", "stream": True}
    with connect_sse(client, "POST", f"{V1}/conversations/{cid}/messages", json=body) as source:
        first = next(iter(source.iter_sse()))
        assert first.event == "delta"
    # the stream was closed after one delta of 400: the turn is cancelled at its next delta
    server.set_script(DEFAULT_SCRIPT)
    r = client.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who is Clerval?"})
    assert r.json()["turn_number"] == 1  # the cancelled turn left nothing
    assert turns_of(client, cid) == [1]


def test_disconnect_while_a_fast_answer_is_still_being_sent_stores_nothing(
    server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    cid = new_conversation(client, book_id)
    server.set_script({"steps": [" ".join(["quick"] * 20000)]})  # generated at once, sent slowly
    body = {"message": "Tell me everything", "stream": True}
    with connect_sse(client, "POST", f"{V1}/conversations/{cid}/messages", json=body) as source:
        assert next(iter(source.iter_sse())).event == "delta"
    server.set_script(DEFAULT_SCRIPT)
    assert (
        client.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who?"}).json()[
            "turn_number"
        ]
        == 1
    )
    assert turns_of(client, cid) == [1]


def test_a_client_that_vanishes_mid_stream_blocks_nobody(
    server: FolioServer, client: httpx.Client, book_id: str
) -> None:
    """Like ``curl ... | head``: read a little of the stream, then drop the connection."""
    import socket

    cid = new_conversation(client, book_id)
    server.set_script({"steps": [" ".join(["word"] * 3000)]})
    body = json.dumps({"message": "Tell me everything", "stream": True}).encode()
    request = (
        f"POST {V1}/conversations/{cid}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
            s.sendall(request)
            assert s.recv(300)
    server.set_script(DEFAULT_SCRIPT)
    quick = httpx.Client(base_url=server.url, timeout=4)  # less than SQLite's busy timeout
    r = quick.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who?"})
    assert r.status_code == 200, r.text
    assert r.json()["turn_number"] == 1 and turns_of(quick, cid) == [1]


def test_racing_turns_are_all_stored_in_order(
    client: httpx.Client, book_id: str, server: FolioServer
) -> None:
    conversations = [new_conversation(client, book_id) for _ in range(2)]
    failures: list[str] = []

    def reader(n: int) -> None:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            for i in range(10):
                cid = conversations[(n + i) % 2]
                r = c.post(f"{V1}/conversations/{cid}/messages", json={"message": f"q{n}-{i}"})
                if r.status_code != 200:
                    failures.append(r.text)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    counts = [turns_of(client, cid) for cid in conversations]
    assert [len(c) for c in counts] == [40, 40]
    assert all(c == list(range(1, 41)) for c in counts)  # gap-free, no duplicates


def test_error_body_and_openapi(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    for path in (
        "/api/v1/books",
        "/api/v1/conversations/{conversation_id}/messages",
        "/api/v1/chat",
    ):
        assert path in schema["paths"]
    assert client.get("/docs").status_code == 200
    too_big = client.post(f"{V1}/conversations", content=b"x" * (3 * 1024 * 1024 // 2))
    assert "max_request_mb" in assert_error(too_big, 413, "TOO_LARGE")["message"]


# --- process ----------------------------------------------------------------------------------
def test_kill_9_mid_turn_leaves_no_half_turn(library: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    import shutil

    shutil.copytree(library, home)
    server = FolioServer(home, script=SLOW_SCRIPT).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            book = c.get(f"{V1}/books").json()[0]["id"]
            cid = new_conversation(c, book)
            body = {"message": "Tell me everything", "stream": True}
            with connect_sse(c, "POST", f"{V1}/conversations/{cid}/messages", json=body) as s:
                assert next(iter(s.iter_sse())).event == "delta"
                server.kill()
    finally:
        server.kill()
    with FolioServer(home) as again, httpx.Client(base_url=again.url, timeout=60) as c:
        assert turns_of(c, cid) == []
        assert (
            c.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who?"}).json()[
                "turn_number"
            ]
            == 1
        )
        detail = c.get(f"{V1}/conversations/{cid}", params={"verbose": True}).json()
        assert {m["turn_number"] for m in detail["messages"]} == {1}


def test_serve_refuses_a_public_address_without_users(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "folio.entrypoints.cli.main", "serve", "--host", "0.0.0.0"],
        env=folio_env(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode != 0
    assert "Refusing to bind 0.0.0.0" in r.stderr


# --- users ------------------------------------------------------------------------------------
def wait_for_job(c: httpx.Client, url: str, headers: dict[str, str]) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = c.get(url, headers=headers).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"job still running: {job}")


def new_conversation_as(c: httpx.Client, book_id: str, headers: dict[str, str]) -> str:
    r = c.post(f"{V1}/conversations", json={"book_id": book_id}, headers=headers)
    assert r.status_code == 201, r.text
    return str(r.json()["conversation_id"])


def test_users_tokens_isolation_and_uploads(library: Path, tmp_path: Path) -> None:
    import shutil

    home = tmp_path / "home"
    shutil.copytree(library, home)
    with (
        FolioServer(home, env={"FOLIO_MAX_BOOK_MB": "1"}) as server,
        httpx.Client(base_url=server.url, timeout=60) as c,
    ):
        book = c.get(f"{V1}/books").json()[0]["id"]
        local_conversation = new_conversation(c, book)  # no users yet: the local user

        alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
        bob = ok_json(run_folio_in(home, "users", "add", "bob", "--json"))
        assert alice["token"].startswith("folio_") and alice["token"] not in (
            home / "folio.db"
        ).read_bytes().decode("latin-1")  # stored only as a hash
        listed = ok_json(run_folio_in(home, "users", "list", "--json"))
        assert [u["name"] for u in listed] == ["alice", "bob"]

        r = c.get(f"{V1}/books")
        assert_error(r, 401, "UNAUTHORIZED")
        assert r.headers["www-authenticate"] == "Bearer"
        assert_error(c.get(f"{V1}/books", headers={"Authorization": "Bearer nope"}), 401)
        as_alice = {"Authorization": f"Bearer {alice['token']}"}
        as_bob = {"Authorization": f"Bearer {bob['token']}"}
        assert c.get(f"{V1}/me", headers=as_alice).json()["user_id"] == alice["id"]

        # the local user's book and conversation do not exist for alice
        assert c.get(f"{V1}/books", headers=as_alice).json() == []
        assert_error(c.get(f"{V1}/books/{book}", headers=as_alice), 404)
        assert_error(c.get(f"{V1}/conversations/{local_conversation}", headers=as_alice), 404)
        assert_error(
            c.post(
                f"{V1}/conversations/{local_conversation}/messages",
                json={"message": "hi"},
                headers=as_alice,
            ),
            404,
        )
        assert_error(c.delete(f"{V1}/books/{book}", headers=as_alice), 404)
        assert_error(c.post(f"{V1}/conversations", json={"book_id": book}, headers=as_alice), 404)
        assert c.get(f"{V1}/conversations", headers=as_alice).json()["total"] == 0
        assert c.get(f"{V1}/conversations", headers=as_bob).json()["total"] == 0

        # alice uploads a book (named like an image: the type comes from the content)
        text = "\n\n".join(
            f"CHAPTER {i}\n\n" + f"The lighthouse keeper Marta counted ships on day {i}. " * 40
            for i in range(1, 6)
        )
        r = c.post(
            f"{V1}/books",
            files={"file": ("keeper.jpg", text.encode(), "image/jpeg")},
            data={"title": "The Keeper", "author": "Anon"},
            headers=as_alice,
        )
        assert r.status_code == 202, r.text
        job_url = r.headers["location"]
        assert r.json()["job"]["status"] in ("queued", "running", "done")
        job = wait_for_job(c, job_url, as_alice)
        assert job["status"] == "done", job
        alice_book = job["book_id"]
        assert alice_book == r.json()["book"]["id"]
        mine = c.get(f"{V1}/books", headers=as_alice).json()
        assert [(b["title"], b["format"]) for b in mine] == [("The Keeper", "txt")]
        hits = c.get(
            f"{V1}/books/{alice_book}/search", params={"q": "lighthouse"}, headers=as_alice
        ).json()
        assert hits["results"]
        alice_chat = new_conversation_as(c, alice_book, as_alice)
        # bob sees none of it
        assert c.get(f"{V1}/books", headers=as_bob).json() == []
        assert_error(c.get(f"{V1}/books/{alice_book}", headers=as_bob), 404)
        assert_error(c.get(job_url, headers=as_bob), 404)
        assert_error(c.get(f"{V1}/conversations/{alice_chat}", headers=as_bob), 404)
        assert_error(
            c.post(f"{V1}/chat", json={"book_id": alice_book, "message": "hi"}, headers=as_bob),
            404,
        )
        # not a book, or too large: refused at once with a status
        png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100
        r = c.post(f"{V1}/books", files={"file": ("a.txt", png)}, headers=as_alice)
        assert_error(r, 415, "UNSUPPORTED")
        big = b"word " * (300 * 1024)
        r = c.post(f"{V1}/books", files={"file": ("big.txt", big)}, headers=as_alice)
        assert "max_book_mb" in assert_error(r, 413, "TOO_LARGE")["message"]
        assert_error(c.get(f"{V1}/jobs/nope", headers=as_alice), 404)

        new = ok(run_folio_in(home, "users", "rotate", "alice")).strip()
        assert_error(c.get(f"{V1}/books", headers=as_alice), 401)
        assert c.get(f"{V1}/books", headers={"Authorization": f"Bearer {new}"}).status_code == 200
        ok(run_folio_in(home, "users", "rm", "bob"))
        assert_error(c.get(f"{V1}/books", headers=as_bob), 401)
    # the local user's data is intact for the CLI
    assert ok_json(run_folio_in(home, "conversations", "--json"))
