"""A real user-less ``folio serve`` against a hostile web page: DNS rebinding (a page on
``evil.example`` whose name now points at 127.0.0.1 sends ``Host: evil.example``) and cross-site
"simple" requests (``Origin: http://evil.example``, text/plain or multipart, which a browser sends
without asking first) are refused on every surface (the page, ``/api``, ``/v1``, ``/mcp``) and
change nothing. The same requests from the page itself, in Chromium, succeed. Also: the auth mode
is fixed when the server starts, and malformed JSON is a 4xx everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, ok_json, run_folio_in

V1 = "/api/v1"
EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = demo_book_home(tmp_path_factory, "origin")
    return home


@pytest.fixture
def server(library: Path, tmp_path: Path):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(library, home)
    with FolioServer(home) as running:
        yield running


def _export(c: httpx.Client, book: str) -> bytes:
    conversation = c.post(f"{V1}/conversations", json={"book_id": book}).json()["conversation_id"]
    exported = c.get(f"{V1}/conversations/{conversation}/export", params={"format": "json"})
    return exported.content


def test_dns_rebinding_is_refused_on_every_surface(server: FolioServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        book = c.get(f"{V1}/books").json()[0]["id"]
        rebound = {"Host": "evil.example"}
        for method, path in (
            ("GET", "/"),
            ("GET", f"{V1}/books"),
            ("GET", f"{V1}/books/{book}"),
            ("DELETE", f"{V1}/books/{book}"),
            ("GET", "/v1/models"),
            ("GET", "/openapi.json"),
        ):
            r = c.request(method, path, headers=rebound)
            assert r.status_code == 421, (method, path, r.text)
        r = c.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
            **rebound, "Accept": "application/json, text/event-stream"})  # fmt: skip
        assert r.status_code == 421
        assert "allowed_hosts" in c.get(f"{V1}/books", headers=rebound).json()["error"]["message"]
        assert [b["id"] for b in c.get(f"{V1}/books").json()] == [book]  # nothing deleted


def test_cross_site_simple_requests_are_refused(server: FolioServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        book = c.get(f"{V1}/books").json()[0]["id"]
        exported = _export(c, book)
        before = c.get(f"{V1}/conversations").json()["total"]
        cross = {"Origin": EVIL, "Content-Type": "text/plain"}
        r = c.post(f"{V1}/conversations/import", content=exported, headers=cross)
        assert r.status_code == 403, r.text
        files = {"file": ("x.txt", b"CHAPTER 1\n\nA story. " * 50, "text/plain")}
        r = c.post(f"{V1}/books", files=files, headers={"Origin": EVIL})
        assert r.status_code == 403, r.text
        # a page on another port of this machine is another origin: no form posts from it
        other = {"Origin": "http://127.0.0.1:1", "Content-Type": "text/plain"}
        assert (
            c.post(f"{V1}/conversations/import", content=exported, headers=other).status_code == 403
        )
        # a browser's cross-site request without an Origin still says where it comes from
        fetched = {"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}
        assert (
            c.post(f"{V1}/conversations/import", content=exported, headers=fetched).status_code
            == 403
        )
        assert c.get(f"{V1}/books", headers={"Origin": EVIL}).status_code == 403
        assert c.get(f"{V1}/conversations").json()["total"] == before
        assert len(c.get(f"{V1}/books").json()) == 1
        # a client that is no browser (no Origin) still posts JSON and uploads
        r = c.post(f"{V1}/conversations/import", content=exported)
        assert r.status_code == 201, r.text


def test_the_page_itself_may_do_all_of_it_in_chromium(server: FolioServer) -> None:
    web_support = pytest.importorskip("tests.e2e.web_support")
    with httpx.Client(base_url=server.url, timeout=30) as c:
        book = c.get(f"{V1}/books").json()[0]["id"]
        exported = _export(c, book).decode()
    with web_support.chromium() as browser:
        page = browser.new_page()
        page.goto(server.url + "/")
        statuses: dict[str, Any] = page.evaluate(
            """async ([exported, book]) => {
                const out = {};
                const text = await fetch('/api/v1/conversations/import', {method: 'POST',
                    headers: {'Content-Type': 'text/plain'}, body: exported});
                out.import_text = text.status;
                const form = new FormData();
                form.append('file', new Blob(['CHAPTER 1\\n\\n' + 'A keeper counts ships. '
                    .repeat(80)], {type: 'text/plain'}), 'keeper.txt');
                const upload = await fetch('/api/v1/books', {method: 'POST', body: form});
                out.upload = upload.status;
                out.list = (await fetch('/api/v1/books')).status;
                out.remove = (await fetch('/api/v1/books/' + book, {method: 'DELETE'})).status;
                return out;
            }""",
            [exported, book],
        )
    assert statuses == {"import_text": 201, "upload": 202, "list": 200, "remove": 204}


def test_configured_public_names_are_served(library: Path, tmp_path: Path) -> None:
    import shutil

    home = tmp_path / "home"
    shutil.copytree(library, home)
    with FolioServer(home, env={"FOLIO_ALLOWED_HOSTS": "folio.example"}) as server:
        assert (
            httpx.get(f"{server.url}{V1}/books", headers={"Host": "folio.example"}).status_code
            == 200
        )
        assert (
            httpx.get(f"{server.url}{V1}/books", headers={"Host": "evil.example"}).status_code
            == 421
        )


def test_removing_the_last_user_never_opens_a_running_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.get(f"{V1}/me").status_code == 401
        ok(run_folio_in(home, "users", "rm", "alice"))
        assert c.get(f"{V1}/me").status_code == 401
        assert c.get(f"{V1}/books").status_code == 401
        assert c.post(f"{V1}/conversations", json={"book_id": "x"}).status_code == 401
        mcp = {"Accept": "application/json, text/event-stream"}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert c.post("/mcp/", json=call, headers=mcp).status_code == 401
        assert (
            c.post("/mcp/", json=call, headers={**mcp, "Host": "evil.example"}).status_code == 421
        )


def test_a_user_added_while_serving_closes_the_server_for_good(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.get(f"{V1}/me").json()["user_id"] == "local"
        ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
        assert c.get(f"{V1}/me").status_code == 401
        ok(run_folio_in(home, "users", "rm", "alice"))
        assert c.get(f"{V1}/me").status_code == 401


def test_lone_surrogates_and_deep_nesting_are_client_errors(server: FolioServer) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    surrogate = '"\\ud800 who is Clerval?"'
    with httpx.Client(base_url=server.url, timeout=30) as c:
        book = c.get(f"{V1}/books").json()[0]["id"]
        conversation = c.post(f"{V1}/conversations", json={"book_id": book}).json()[
            "conversation_id"
        ]
        json_type = {"Content-Type": "application/json"}
        bodies = {
            "/v1/chat/completions": f'{{"model": "{book}", "messages": [{{"role": "user", '
            f'"content": {surrogate}}}]}}',
            "/v1/chat/completions#stream": f'{{"model": "{book}", "stream": true, "messages": '
            f'[{{"role": "user", "content": {surrogate}}}]}}',
            f"{V1}/conversations/{conversation}/messages": f'{{"message": {surrogate}}}',
            f"{V1}/chat": f'{{"book_id": "{book}", "message": {surrogate}}}',
            f"{V1}/conversations/import": f'{{"title": {surrogate}}}',
        }
        for path, body in bodies.items():
            r = c.post(path.split("#")[0], content=body.encode(), headers=json_type)
            assert r.status_code in (400, 422), (path, r.status_code, r.text[:200])
            assert "error" in r.json()
        for path in (f"{V1}/conversations/import", "/v1/chat/completions", f"{V1}/chat"):
            for headers in (json_type, {"Content-Type": "application/octet-stream"}):
                r = c.post(path, content=deep, headers=headers)
                assert r.status_code in (400, 413, 415, 422), (
                    path,
                    headers,
                    r.status_code,
                    r.text[:200],
                )
        assert c.get(f"{V1}/conversations/{conversation}").json()["turns"] == 0
