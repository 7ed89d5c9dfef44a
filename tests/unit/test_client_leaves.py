"""A client that goes away while it sends a body (an e-reader whose Wi-Fi drops in the middle of a
progress push or a question) is not a server error: no traceback is logged as a bug, and the
request is counted as the client's (499, as proxies count it), not as a 500 that an operator's
5xx alert would page on. Routes that read their own body (progress sync, the KOReader routes)
meet it as Starlette's ``ClientDisconnect``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import FastAPI, Request

from folio.config import load_settings
from folio.entrypoints.api import errors
from folio.entrypoints.api.guard import RequestGuard


def _app() -> FastAPI:
    app = FastAPI()
    errors.install(app)

    @app.put("/syncs/progress")
    async def push(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @app.post("/api/v1/chat")
    async def chat(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @app.post("/api/v1/koreader/ask")
    async def ask(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    return app


async def _leaving(app: Any, method: str, path: str) -> list[dict[str, Any]]:
    """The messages the app sends for a request whose client leaves after 10 of 1000 bytes."""
    incoming: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"document"', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", b"1000"),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return sent


@pytest.mark.parametrize(
    ("method", "path"), [("PUT", "/syncs/progress"), ("POST", "/api/v1/koreader/ask")]
)
def test_a_client_leaving_mid_body_is_no_server_error(
    method: str, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        sent = anyio.run(_leaving, _app(), method, path)

    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert [m["status"] for m in starts] == [499]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "Traceback" not in caplog.text


def test_a_client_leaving_a_json_body_the_guard_reads_is_counted_as_its_own(
    tmp_path: Path,
) -> None:
    """The guard reads a JSON body before the route (strict parsing): a client that leaves
    then gets the same 499, not a request that ended without a status (counted as a 500)."""
    settings = load_settings({"FOLIO_HOME": str(tmp_path)})
    guard = RequestGuard(_app(), settings=settings, authenticate=lambda header: "local")

    sent = anyio.run(_leaving, guard, "POST", "/api/v1/chat")

    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [499]
