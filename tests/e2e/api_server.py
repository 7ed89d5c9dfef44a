"""A real ``folio serve`` process on a free loopback port, for the API tests and benchmarks.

The server runs the scripted provider from a JSON script file (``FOLIO_SCRIPT``), which plays one
turn from its start for every turn, and the hashing embedder (no model load). It is always
stopped: ``stop()`` sends SIGTERM (graceful), ``kill()`` SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import folio_env
from tests.forked_cli import STDOUT, ForkedProcess, ForkServer

DEFAULT_SCRIPT: dict[str, Any] = {
    "steps": [
        {"tool": "search_book", "arguments": {"query": "Clerval"}},
        "Henry Clerval is Victor's dearest friend from Geneva.",
    ]
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _PortTaken(RuntimeError):
    pass


class FolioServer:
    def __init__(
        self,
        home: Path,
        *,
        script: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        workers: int = 1,
        args: tuple[str, ...] = ("--log-level", "warning"),
    ) -> None:
        """``args``: more options of ``folio serve`` (its logging, by default warnings only)."""
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.script_path = home / "script.json"
        self.set_script(script or DEFAULT_SCRIPT)
        extra = {"FOLIO_PROVIDER": "scripted", "FOLIO_SCRIPT": str(self.script_path)}
        extra.update(env or {})
        self.env = folio_env(home, extra=extra)
        self.workers = workers
        self.args = args
        self.process: subprocess.Popen[bytes] | ForkedProcess | None = None
        self.log = home / "server.log"

    def set_script(self, script: dict[str, Any]) -> None:
        """The script of the next turns (read by every turn, so it can change while serving)."""
        self.home.mkdir(parents=True, exist_ok=True)
        tmp = self.script_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(script), encoding="utf-8")
        tmp.replace(self.script_path)

    def start(self, timeout: float = 60) -> FolioServer:
        """Start and wait until healthy. A port another test process took between ``free_port``
        and the bind (tests run in parallel processes) is replaced by a new one, twice at most."""
        for _ in range(2):
            try:
                return self._start(timeout)
            except _PortTaken:
                self.port = free_port()
                self.url = f"http://127.0.0.1:{self.port}"
        return self._start(timeout)

    def _start(self, timeout: float) -> FolioServer:
        command = [
            sys.executable, "-m", "folio.entrypoints.cli.main", "serve",
            "--port", str(self.port), "--workers", str(self.workers), *self.args,
        ]  # fmt: skip
        self.log.write_bytes(b"")
        forks = ForkServer.serving(self.env)
        if forks is not None:
            self.process = forks.spawn(
                command[3:], env=self.env, stdout=str(self.log), stderr=STDOUT
            )
        else:
            with self.log.open("wb") as log:
                self.process = subprocess.Popen(
                    command, env=self.env, stdout=log, stderr=subprocess.STDOUT
                )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log.read_text()
                if "address already in use" in log.lower():
                    raise _PortTaken(log)
                raise RuntimeError(f"folio serve exited: {log}")
            try:
                if httpx.get(f"{self.url}/api/v1/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"folio serve did not start: {self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)
        self.process = None

    def __enter__(self) -> FolioServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
