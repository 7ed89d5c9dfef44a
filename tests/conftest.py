"""Shared fixtures. Tests that need ../shared/data skip (with a reason) when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()


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
