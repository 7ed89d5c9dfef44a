"""Serving an e-reader on a LAN as the README says: with users, ``folio serve --host 0.0.0.0``
answers requests addressed to the machine's own addresses and names (KOReader set to
``http://192.168.1.5:8000`` sends ``Host: 192.168.1.5:8000``) with nothing else set, still refuses
a name it does not know (DNS rebinding names the attacker's host), and says so in a way
KOReader shows: its Login dialog displays a server's ``message`` only with a 401 (its api.json's
expected statuses; any other status raises in its HTTP client as "Unknown server error")."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from folio.entrypoints.cli.serve import machine_names
from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in

PASSWORD = "a reading password"
KEY = hashlib.md5(PASSWORD.encode(), usedforsecurity=False).hexdigest()
KOREADER = {"accept": "application/vnd.koreader.v1+json", "x-auth-user": "alice", "x-auth-key": KEY}


def lan_address() -> str:
    """The address this machine's traffic leaves from (no packet is sent by a UDP connect), else
    a documentation address, which a request may name all the same."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.254", 9))
            address = str(s.getsockname()[0])
        except OSError:
            return "192.0.2.5"
    return address if not address.startswith("127.") else "192.0.2.5"


@pytest.fixture(scope="module")
def lan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FolioServer, str]]:
    home = tmp_path_factory.mktemp("lan")
    token = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))["token"]
    ok(run_folio_in(home, "users", "sync-password", "alice", input=PASSWORD + "\n"))
    args = ("--host", "0.0.0.0", "--log-level", "warning")
    with FolioServer(home, args=args) as server:
        yield server, token


def test_the_machines_own_addresses_and_names_are_served(lan: tuple[FolioServer, str]) -> None:
    server, token = lan
    bearer = {"authorization": f"Bearer {token}"}
    names = [lan_address(), "[fd00::5]", *machine_names()]
    assert len(names) >= 2
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for name in names:
            host = {"Host": f"{name}:{server.port}"}
            assert c.get("/users/auth", headers={**KOREADER, **host}).status_code == 200, name
            books = c.get("/api/v1/books", headers={**bearer, **host})
            assert books.status_code == 200, (name, books.text)
            # the web page served from that address may call its own API
            page = {**host, "Origin": f"http://{name}:{server.port}"}
            assert c.get("/api/v1/books", headers={**bearer, **page}).status_code == 200


def test_a_name_it_does_not_know_is_refused_as_koreader_shows_it(
    lan: tuple[FolioServer, str],
) -> None:
    server, token = lan
    rebound = {"Host": f"evil.example:{server.port}"}
    with httpx.Client(base_url=server.url, timeout=30) as c:
        login = c.get("/users/auth", headers={**KOREADER, **rebound})
        assert login.status_code == 401
        message = login.json()["message"]
        assert "FOLIO_ALLOWED_HOSTS=evil.example" in message
        body = {"username": "alice", "password": KEY}
        register = c.post("/users/create", headers={**KOREADER, **rebound}, json=body)
        assert register.status_code == 402 and "FOLIO_ALLOWED_HOSTS" in register.json()["message"]
        push = c.put("/syncs/progress", headers={**KOREADER, **rebound}, json={})
        assert push.status_code == 421  # not an auth failure: KOReader queues it for later
        api = c.get("/api/v1/books", headers={"authorization": f"Bearer {token}", **rebound})
        assert api.status_code == 421
        assert "FOLIO_ALLOWED_HOSTS=evil.example" in api.json()["error"]["message"]
        # a page elsewhere (another address) may not call it from a browser
        other = {"Host": f"{lan_address()}:{server.port}", "Origin": "http://192.0.2.77:8000"}
        assert c.get("/api/v1/books", headers=other).status_code == 403


def test_the_server_says_which_names_it_answers_to(lan: tuple[FolioServer, str]) -> None:
    server, _ = lan
    said = Path(server.log).read_text()
    assert "Answering to this machine's IP addresses and names" in said
