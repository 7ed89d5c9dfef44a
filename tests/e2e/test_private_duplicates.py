"""Content identity is per owner, on a real ``folio serve`` with two users: both may upload the
same file (the second import never says that someone on the server holds it), and only a user's
own second copy is a duplicate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

BOOK = ("CHAPTER 1\n\n" + "The keeper Marta counted the ships in the bay. " * 60).encode()


def _upload(c: httpx.Client, token: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    r = c.post("/api/v1/books", files={"file": ("keeper.txt", BOOK)}, headers=headers)
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = c.get(r.headers["location"], headers=headers).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(job)


def test_two_users_may_hold_the_same_file_and_neither_learns_of_the_other(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))["token"]
    bob = ok_json(run_folio_in(home, "users", "add", "bob", "--json"))["token"]
    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        first = _upload(c, alice)
        second = _upload(c, bob)
        assert first["status"] == "done", first
        assert second["status"] == "done" and second["error"] is None, second
        assert first["book_id"] != second["book_id"]
        again = _upload(c, alice)
        assert again["status"] == "failed" and again["error"]["code"] == "DUPLICATE", again
        for token, book in ((alice, first["book_id"]), (bob, second["book_id"])):
            listed = c.get("/api/v1/books", headers={"Authorization": f"Bearer {token}"}).json()
            assert [b["id"] for b in listed] == [book]
