"""EPUBs whose zip headers lie, or that inflate absurdly, in the CLI and in a real ``folio serve``:
refused with a clear error while the process's peak memory stays small (the old reader inflated a
1 MB member declared as 300 KB to 1 GB in memory before it noticed)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.attack_support import lying_epub, memory_kb, reset_peak
from tests.e2e.conftest import folio_command, folio_env

INFLATED_MB = 1000
MAX_CLI_PEAK_KB = 400 * 1024  # the CLI with its imports peaks near 150 MB on a small book
MAX_GROWTH_KB = 30 * 1024


# Forks ARGV and writes its peak RSS (kB, wait4's rusage) to PEAK_FILE; exits as it did.
_MEASURED = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def _cli_add(home: Path, book: Path, logs: Path) -> tuple[int, str, int]:
    """``folio add BOOK``: its exit code, stderr and peak RSS (kB).

    Linux keeps a process's peak RSS across exec, and a child that this test process starts
    (vfork, then exec) begins with this process's own peak: a test worker that has loaded torch
    for another test would be measured, not folio. So a small launcher forks folio and reports."""
    peak = logs / "peak"
    with (logs / "out").open("wb") as out, (logs / "err").open("wb") as err:
        command = [sys.executable, "-c", _MEASURED, str(peak), *folio_command("add", str(book))]
        code = subprocess.run(command, env=folio_env(home), stdout=out, stderr=err).returncode
    return code, (logs / "err").read_text(), int(peak.read_text())


@pytest.mark.parametrize("declared_kb", [300, 400 * 1024 - 1], ids=["lying", "honest-bomb"])
def test_the_cli_refuses_an_inflating_epub_with_bounded_memory(
    tmp_path: Path, declared_kb: int
) -> None:
    book = lying_epub(tmp_path / "bomb.epub", inflated_mb=INFLATED_MB, declared_kb=declared_kb)
    code, stderr, peak_kb = _cli_add(tmp_path / "home", book, tmp_path)
    assert code != 0 and "Traceback" not in stderr
    assert "bomb.epub" in stderr, stderr
    assert peak_kb < MAX_CLI_PEAK_KB, peak_kb


def test_the_server_refuses_an_inflating_epub_with_bounded_memory(tmp_path: Path) -> None:
    book = lying_epub(tmp_path / "bomb.epub", inflated_mb=INFLATED_MB)
    with FolioServer(tmp_path / "home") as server, httpx.Client(base_url=server.url) as c:
        assert server.process is not None
        pid = server.process.pid
        warm = c.post("/api/v1/books", files={"file": ("w.txt", b"CHAPTER 1\n\nShips. " * 50)})
        _wait(c, warm.headers["location"])
        reset_peak(pid)
        before = memory_kb(pid, "VmRSS")
        r = c.post("/api/v1/books", files={"file": ("bomb.epub", book.read_bytes())})
        assert r.status_code == 202, r.text
        job = _wait(c, r.headers["location"])
        growth = memory_kb(pid, "VmHWM") - before
        assert job["status"] == "failed" and "bomb.epub" in job["error"]["message"], job
        assert growth < MAX_GROWTH_KB, growth


def _wait(c: httpx.Client, url: str) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = c.get(url).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(job)
