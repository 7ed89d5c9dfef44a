"""The MCP server mounted in ``folio serve`` is built by its first request, once, and stopped with
the app (``folio.entrypoints.api.mcp_mount``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from folio.entrypoints.api.mcp_mount import McpOnFirstRequest


class FakeManager:
    def __init__(self, failures: int = 0, gate: asyncio.Event | None = None) -> None:
        self.entered = 0
        self.exited = 0
        self.failures = failures
        self.gate = gate

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        if self.gate is not None:
            await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise RuntimeError("cannot start")
        self.entered += 1
        try:
            yield
        finally:
            self.exited += 1


def fake_server(monkeypatch: pytest.MonkeyPatch, manager: FakeManager) -> list[object]:
    served: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(0)
        served.append(scope)

    def http_app(container: Any, *, version: str = "") -> tuple[Any, FakeManager]:
        return app, manager

    import folio.entrypoints.mcp.server as server

    monkeypatch.setattr(server, "http_app", http_app)
    return served


def test_concurrent_first_requests_start_the_manager_once_and_close_stops_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager = FakeManager()
    served = fake_server(monkeypatch, manager)
    mount = McpOnFirstRequest(object(), version="1")  # type: ignore[arg-type]

    async def scenario() -> None:
        await asyncio.gather(*(mount({"n": i}, None, None) for i in range(5)))
        assert (manager.entered, manager.exited) == (1, 0)  # running while the app serves
        await mount({"n": 5}, None, None)
        await mount.close()

    asyncio.run(scenario())
    assert len(served) == 6
    assert (manager.entered, manager.exited) == (1, 1)


def test_a_manager_failing_to_start_fails_that_request_and_the_next_tries_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager = FakeManager(failures=1)
    served = fake_server(monkeypatch, manager)
    mount = McpOnFirstRequest(object(), version="1")  # type: ignore[arg-type]

    async def scenario() -> None:
        with pytest.raises(RuntimeError, match="cannot start"):
            await mount({}, None, None)
        await mount({}, None, None)
        await mount.close()

    asyncio.run(scenario())
    assert len(served) == 1 and (manager.entered, manager.exited) == (1, 1)


def test_a_request_that_gives_up_waiting_does_not_stop_the_start_for_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> tuple[FakeManager, list[object]]:
        manager = FakeManager(gate=asyncio.Event())
        served = fake_server(monkeypatch, manager)
        mount = McpOnFirstRequest(object(), version="1")  # type: ignore[arg-type]
        first = asyncio.create_task(mount({"n": 1}, None, None))
        await asyncio.sleep(0.05)  # the manager is being entered (held at its gate)
        first.cancel()  # the client went away while the manager was starting
        second = asyncio.create_task(mount({"n": 2}, None, None))
        await asyncio.sleep(0.05)
        assert manager.gate is not None
        manager.gate.set()
        await second
        await mount.close()
        return manager, served

    manager, served = asyncio.run(scenario())
    assert served == [{"n": 2}]
    assert (manager.entered, manager.exited) == (1, 1)


def test_closing_while_the_manager_starts_leaves_nothing_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> FakeManager:
        manager = FakeManager(gate=asyncio.Event())
        fake_server(monkeypatch, manager)
        mount = McpOnFirstRequest(object(), version="1")  # type: ignore[arg-type]
        request = asyncio.create_task(mount({}, None, None))
        await asyncio.sleep(0.05)
        await mount.close()
        assert manager.gate is not None
        manager.gate.set()
        await asyncio.gather(request, return_exceptions=True)
        await asyncio.sleep(0.05)
        return manager

    manager = asyncio.run(scenario())
    assert manager.entered == manager.exited


def test_the_api_serves_without_importing_the_mcp_sdk_until_an_mcp_request(
    tmp_path: Path,
) -> None:
    code = """
import sys
from fastapi.testclient import TestClient
from folio.bootstrap import Container
from folio.config import load_settings
from folio.entrypoints.api.app import create_app

settings = load_settings(env={"FOLIO_HOME": sys.argv[1], "FOLIO_EMBEDDING_MODEL": "hashing"})
container = Container(settings)
with TestClient(create_app(container), base_url="http://127.0.0.1") as client:
    assert client.get("/api/v1/books").status_code == 200
    print("before", "mcp" in sys.modules)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    reply = client.post("/mcp/", json=hello,
                        headers={"accept": "application/json, text/event-stream"})
    name = reply.json()["result"]["serverInfo"]["name"]
    print("after", "mcp" in sys.modules, reply.status_code, name)
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["before False", "after True 200 folio"]
