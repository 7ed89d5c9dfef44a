"""A real ``folio serve`` under hostile bodies: every body-taking route (from ``/openapi.json``,
plus the import, ``/v1`` and ``/mcp``) gets a chunked 300 MB body, without a token and with one.
Without: 401 before any of the body is read. With: 413 once the route's bound is reached. Either
way the server's peak RSS grows by less than 30 MB (``/proc/PID/status``) and an upload leaves no
file behind. The bodies are made lazily and stop being sent once the server has answered.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.attack_support import MB, chunked, send_chunked
from tests.e2e.conftest import ok_json, run_folio_in

BODY = 300 * MB
MAX_GROWTH_KB = 30 * 1024
BOUNDARY = "folioboundary"
UPLOAD_PREFIX = (
    f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
    "Content-Type: text/plain\r\n\r\n"
).encode()


def body_routes(schema: dict) -> list[tuple[str, str, str]]:
    """(method, path, content type) of every operation that takes a body, path ids filled in."""
    routes = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            content = operation["requestBody"]["content"]
            kind = "multipart/form-data" if "multipart/form-data" in content else "application/json"
            filled = path.replace("{", "").replace("}", "")
            routes.append((method.upper(), filled, kind))
    routes.append(("POST", "/api/v1/conversations/import", "application/json"))
    routes.append(("POST", "/mcp/", "application/json"))
    return routes


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("bounds") / "home"
    token = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))["token"]
    spool = home.parent / "tmp"
    spool.mkdir()
    with FolioServer(home, env={"TMPDIR": str(spool)}) as server:
        schema = httpx.get(f"{server.url}/openapi.json").json()
        yield server, token, body_routes(schema), spool


def _headers(kind: str, token: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream"}
    headers["Content-Type"] = (
        f"multipart/form-data; boundary={BOUNDARY}" if "multipart" in kind else kind
    )
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _warm_up(server: FolioServer, routes: list[tuple[str, str, str]], token: str) -> None:
    """One small request per route first, so that what a route imports on first use is not
    counted as growth."""
    for method, path, kind in routes:
        body = b"--" + BOUNDARY.encode() + b"--\r\n" if "multipart" in kind else b"{}"
        httpx.request(
            method, server.url + path, content=body, headers=_headers(kind, token), timeout=60
        )


@pytest.mark.parametrize("with_token", [False, True], ids=["no-token", "token"])
def test_a_chunked_300_mb_body_is_refused_with_bounded_memory(guarded_server, with_token) -> None:
    server, token, routes, spool = guarded_server
    assert server.process is not None
    assert len(routes) >= 9
    _warm_up(server, routes, token)
    results = {}
    for method, path, kind in routes:
        prefix = UPLOAD_PREFIX if "multipart" in kind else b'{"message": "'
        sent = send_chunked(
            server.port,
            method,
            path,
            _headers(kind, token if with_token else None),
            chunked(prefix, BODY),
            pid=server.process.pid,
        )
        results[f"{method} {path}"] = (sent.status, sent.sent_bytes // MB, sent.peak_growth_kb)
        assert sent.status == (413 if with_token else 401), (path, sent.body[:300])
        error = json.loads(sent.body)["error"]
        if with_token and not path.startswith("/mcp"):
            assert "setting max_" in str(error.get("message")), error
        assert sent.peak_growth_kb < MAX_GROWTH_KB, results
        assert sent.sent_bytes < BODY, results  # the server answered before the body ended
    # KOReader sync checks its own headers before reading a body; its registration takes none
    # and reads at most its own bound
    for method, path, expected in (("PUT", "/syncs/progress", 401), ("POST", "/users/create", 413)):
        headers = {"Content-Type": "application/json", "x-auth-user": "alice", "x-auth-key": "k"}
        sent = send_chunked(
            server.port, method, path, headers, chunked(b'{"document": "', BODY),
            pid=server.process.pid,
        )  # fmt: skip
        results[f"{method} {path}"] = (sent.status, sent.sent_bytes // MB, sent.peak_growth_kb)
        assert sent.status == expected, (path, sent.body[:300])
        assert sent.peak_growth_kb < MAX_GROWTH_KB, results
    print(json.dumps(results, indent=1))
    assert list((server.home / "uploads").glob("*/*")) == []
    # no spooled upload left (the server's metrics folder lives there too while it serves)
    assert [p for p in spool.iterdir() if not p.name.startswith("folio-metrics")] == []
