"""The ids folio prints, on a real ``folio serve`` with two users: every route of the OpenAPI
document with a ``{book_id}`` or ``{conversation_id}`` (so a new route is covered the day it is
added) answers the 8-character id ``folio books`` prints as it answers the full id; a prefix that
starts none of the caller's ids is a 404, one that starts several a 409 saying how many and how
many characters to give; another user's ids neither match nor make a prefix ambiguous. Ids in
bodies and queries (``book_id``, ``session_id``, ``folio_conversation_id``, a model) take the
same short ids."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

V1 = "/api/v1"
SHORT = 8  # as `folio books` and `folio conversations` print them
PARAMS = ("{book_id}", "{conversation_id}")
OTHER_PARAM = r"\{(?!book_id\}|conversation_id\})\w+\}"
# What each operation needs besides its ids; an operation missing here is still checked (the
# short id must answer as the full id does), only not required to succeed.
INPUTS: dict[tuple[str, str], dict[str, Any]] = {
    ("get", "/api/v1/books/{book_id}"): {},
    ("patch", "/api/v1/books/{book_id}"): {"json": {"author": "Anon"}},
    ("put", "/api/v1/books/{book_id}/position"): {"json": {"percent": 50}},
    ("get", "/api/v1/books/{book_id}/text"): {"params": {"start": 0, "end": 40}},
    ("get", "/api/v1/books/{book_id}/search"): {"params": {"q": "keeper"}},
    ("get", "/api/v1/conversations/{conversation_id}"): {},
    ("patch", "/api/v1/conversations/{conversation_id}"): {"json": {"title": "Renamed"}},
    ("get", "/api/v1/conversations/{conversation_id}/export"): {},
    ("post", "/api/v1/conversations/{conversation_id}/messages"): {"json": {"message": "Who?"}},
    ("delete", "/api/v1/books/{book_id}"): {},
    ("delete", "/api/v1/conversations/{conversation_id}"): {},
}


def upload(c: httpx.Client, n: int) -> str:
    """A small book of its own text (no two alike); its id once imported."""
    text = "\n\n".join(f"CHAPTER {i}\n\n" + f"The keeper {n} counted ships. " * 30 for i in (1, 2))
    r = c.post(f"{V1}/books", files={"file": (f"keeper{n}.txt", text.encode(), "text/plain")})
    assert r.status_code == 202, r.text
    for _ in range(600):
        job = c.get(r.headers["location"]).json()
        if job["status"] == "done":
            return str(job["book_id"])
        assert job["status"] != "failed", job
        time.sleep(0.05)
    raise AssertionError("the import did not finish")


def converse(c: httpx.Client, book: str) -> str:
    r = c.post(f"{V1}/conversations", json={"book_id": book})
    assert r.status_code == 201, r.text
    return str(r.json()["conversation_id"])


def until_two_share_a_first_character(make: Any) -> tuple[list[str], str]:
    """Make ids until two start alike (17 at most: 16 hex digits); the ids and that digit."""
    made: list[str] = []
    for _ in range(17):
        made.append(make())
        firsts = [i[0] for i in made]
        shared = [d for d in firsts if firsts.count(d) > 1]
        if shared:
            return made, shared[0]
    raise AssertionError(f"17 ids and no two start alike: {made}")


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FolioServer, Any, Any]]:
    home = tmp_path_factory.mktemp("short-ids") / "home"
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
    bob = ok_json(run_folio_in(home, "users", "add", "bob", "--json"))
    with FolioServer(home, env={"FOLIO_GUARDRAIL": "none"}) as server:
        yield server, alice["token"], bob["token"]


def client(server: FolioServer, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}
    )


def operations(c: httpx.Client) -> list[tuple[str, str]]:
    """The API's operations on a book or conversation id (not the devices' catalogue and sync
    routes: they follow the full ids folio's own links give them)."""
    paths = c.get("/openapi.json").json()["paths"]
    found = [
        (method, path)
        for path, item in paths.items()
        if path.startswith("/api/") and any(p in path for p in PARAMS)
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    return sorted(found, key=lambda op: op[0] == "delete")  # deletions last


def url(path: str, ids: dict[str, str]) -> str:
    """``path`` with ``ids``; another route's own parameter (``{highlight_id}``) as ``0``."""
    for name, value in ids.items():
        path = path.replace("{" + name + "}", value)
    return re.sub(OTHER_PARAM, "0", path)


def test_every_route_takes_the_short_ids_folio_prints(
    users: tuple[FolioServer, Any, Any],
) -> None:
    server, alice_token, bob_token = users
    with client(server, alice_token) as alice, client(server, bob_token) as bob:
        books = [upload(alice, n) for n in range(2)]
        conversations, shared = until_two_share_a_first_character(lambda: converse(alice, books[0]))
        conversations.append(converse(alice, books[0]))  # a third at least
        bob_book = upload(bob, 99)
        full = {"book_id": books[0], "conversation_id": conversations[0]}
        spare = {"book_id": books[1], "conversation_id": conversations[1]}
        # a prefix of bob's book that starts none of alice's ids
        bobs = next(
            bob_book[:n] for n in range(1, 37) if not any(b.startswith(bob_book[:n]) for b in books)
        )

        ops = operations(alice)
        checked = []
        for method, path in ops:
            inputs = INPUTS.get((method, path), {})
            ids = spare if method == "delete" else full
            short = {k: v[:SHORT] for k, v in ids.items()}
            # none of the caller's ids: 404, whoever else's it is; several of them: 409
            if "{book_id}" in path:
                missing = alice.request(method, url(path, {**short, "book_id": bobs}), **inputs)
                assert missing.status_code == 404, (method, path, missing.text)
            if "{conversation_id}" in path:
                several = alice.request(
                    method, url(path, {**short, "conversation_id": shared}), **inputs
                )
                assert several.status_code == 409, (method, path, several.text)
                message = several.json()["error"]["message"]
                count = sum(c.startswith(shared) for c in conversations)
                assert f"starts the ids of {count} conversations" in message, message
                assert "give at least" in message and "characters of the id" in message
            by_short = alice.request(method, url(path, short), **inputs)
            known = (method, path) in INPUTS
            if known:
                assert by_short.status_code < 300, (method, path, by_short.text)
            if known or not re.search(OTHER_PARAM, path):  # no id of something else unknown
                assert by_short.status_code not in (404, 409), (method, path, by_short.text)
            if method != "delete" or not known:  # the full id answers alike
                by_full = alice.request(method, url(path, ids), **inputs)
                assert by_full.status_code == by_short.status_code, (method, path, by_full.text)
            checked.append((method, path))
        assert set(INPUTS) <= set(checked)
        gone = alice.get(f"{V1}/books/{spare['book_id']}")
        assert gone.status_code == 404  # deleted through its short id

        # ids in bodies and queries
        short_book, short_conversation = books[0][:SHORT], conversations[2][:SHORT]
        listed = alice.get(f"{V1}/conversations", params={"book_id": short_book})
        assert listed.status_code == 200 and listed.json()["total"] == len(conversations) - 1
        made = alice.post(f"{V1}/conversations", json={"book_id": short_book})
        assert made.status_code == 201 and made.json()["book_id"] == books[0]
        session = {"book_id": short_book, "session_id": short_conversation, "message": "Who?"}
        turn = alice.post(f"{V1}/chat", json=session)
        assert turn.status_code == 200 and turn.json()["conversation_id"] == conversations[2]
        assert alice.get(f"/v1/models/{short_book}").json()["id"] == books[0]
        completion = alice.post(
            "/v1/chat/completions",
            json={
                "model": short_book,
                "messages": [{"role": "user", "content": "Who?"}],
                "folio_conversation_id": short_conversation,
            },
        )
        assert completion.status_code == 200, completion.text
        assert completion.json()["folio"]["conversation_id"] == conversations[2]

        # bob's ids are not alice's: a prefix unique among hers is hers, whatever bob has
        hers = [c["conversation_id"] for c in alice.get(f"{V1}/conversations").json()["items"]]
        for _ in range(20):  # ids are random: all of hers may share their first characters
            if alone := [c for c in hers if sum(x[0] == c[0] for x in hers) == 1]:
                break
            hers.append(converse(alice, books[0]))
        else:
            raise AssertionError("no first character unique among 20 more of alice's conversations")
        target = alone[0]
        for _ in range(300):  # each new one of bob's starts alike 1 time in 16
            if converse(bob, bob_book)[0] == target[0]:
                break
        else:
            raise AssertionError("none of 300 of bob's conversations starts like alice's")
        r = alice.get(f"{V1}/conversations/{target[0]}")
        assert r.status_code == 200 and r.json()["conversation_id"] == target
        assert bob.get(f"{V1}/books/{books[0][:SHORT]}").status_code == 404
        assert bob.get(f"{V1}/conversations/{conversations[0][:SHORT]}").status_code == 404
