"""Shared fixtures of the end-to-end tests: ``folio`` run through its real entry point
(``python -m folio.entrypoints.cli.main`` in a subprocess) with ``FOLIO_HOME`` in a temporary
directory.

Invariants: no test reaches a model API (provider keys and settings are removed from the
environment, so the provider is ``offline``); tests use the hashing embedder unless they ask for the
real model, and the real model imports the demo book once per run (``demo_run`` in the root
conftest: a home built once for every xdist worker, copied per test). The model cache
(``FOLIO_MODELS_DIR``: the int8 copy) is shared with the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest

from tests.forked_cli import ForkServer

HASHING = "hashing"
REAL_MODEL = None  # the default embedding model of the settings
TIMEOUT_S = 600

# Settings a developer's shell may carry that would change what the CLI does under test.
_SCRUBBED = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "FOLIO_PROVIDER",
    "FOLIO_MODEL", "FOLIO_CONFIG", "FOLIO_DEBUG", "FOLIO_CONVERSATION_STORE", "FOLIO_GUARDRAIL",
    "FOLIO_EMBEDDING_MODEL", "FOLIO_SEARCH_K", "FOLIO_HOME", "COLUMNS", "LINES", "FORCE_COLOR",
)  # fmt: skip


def folio_env(
    home: Path, *, embedding: str | None = HASHING, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a folio process: ``home`` as FOLIO_HOME, ``embedding`` as the embedding
    model (``None``: the real default model), nothing else folio-specific unless in ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["FOLIO_HOME"] = str(home)
    env["PYTHONIOENCODING"] = "utf-8"
    if embedding is not None:
        env["FOLIO_EMBEDDING_MODEL"] = embedding
    env.update(extra or {})
    return env


def folio_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "folio.entrypoints.cli.main", *args]


def run_folio_in(
    home: Path,
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    embedding: str | None = HASHING,
) -> subprocess.CompletedProcess[str]:
    """Run ``folio ARGS`` with FOLIO_HOME=``home``; ``env`` adds or overrides variables. stdin is
    ``input`` (or empty), so it is never a terminal. The process is forked from a server that has
    imported folio (``tests/forked_cli.py``) unless the environment changes what an interpreter
    decides at start-up."""
    environment = folio_env(home, embedding=embedding, extra=env)
    server = ForkServer.serving(environment)
    if server is not None:
        return server.run(args, input=input or "", env=environment, timeout=TIMEOUT_S)
    return subprocess.run(
        folio_command(*args),
        input=input or "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=TIMEOUT_S,
    )


class RunFolio(Protocol):
    home: Path
    embedding: str | None

    def __call__(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]: ...


class _Runner:
    def __init__(self, home: Path, embedding: str | None) -> None:
        self.home = home
        self.embedding = embedding

    def __call__(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run_folio_in(self.home, *args, input=input, env=env, embedding=self.embedding)


def runner(home: Path, *, embedding: str | None = HASHING) -> RunFolio:
    """A ``run_folio`` bound to ``home`` and to the embedding model its books were imported with."""
    return _Runner(home, embedding)


@contextmanager
def terminals(run: RunFolio, *, columns: int, timeout: float = 90) -> Iterator[Callable[..., Any]]:
    """``start(*args, pager="cat", dimensions=(50, columns))``: ``folio ARGS`` in a
    pseudo-terminal (pexpect) on ``run``'s home and embedder, plain output (no colours, no cursor
    queries); every child is closed when the block ends."""
    import pexpect

    children: list[Any] = []

    def start(*args: str, pager: str = "cat", dimensions: tuple[int, int] = (50, columns)) -> Any:
        command = folio_command(*args)
        extra = {"PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1", "TERM": "xterm", "PAGER": pager}
        env = folio_env(run.home, embedding=run.embedding, extra=extra)
        child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8",
                              timeout=timeout, dimensions=dimensions)  # fmt: skip
        children.append(child)
        return child

    try:
        yield start
    finally:
        for child in children:
            child.close(force=True)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """stdout of a command that must succeed (the assertion shows stderr otherwise)."""
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}\n{result.stdout}"
    assert "Traceback" not in result.stderr
    return result.stdout


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(ok(result))


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``Error: ...`` line a failed command printed on stderr."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def copy_home(source: Path, target: Path) -> Path:
    """A private copy of a data directory built once (its SQLite files included)."""
    shutil.copytree(source, target)
    return target


def demo_book_home(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A private home holding the bundled book (Frankenstein) imported with the hashing embedder:
    imported once per run (every xdist worker) and copied for each caller."""
    from folio.entrypoints.cli.demo import bundled_book
    from tests.shared_homes import built_once

    def build(root: Path) -> None:
        ok_json(run_folio_in(root / "home", "add", str(bundled_book()), "--json"))

    built = built_once(tmp_path_factory, "hashed-demo-book", build)
    return copy_home(built / "home", tmp_path_factory.mktemp(name) / "home")


@pytest.fixture
def e2e_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def run_folio(e2e_home: Path) -> RunFolio:
    """``run_folio(*args, input=None, env=None)`` in a fresh FOLIO_HOME, hashing embeddings."""
    return runner(e2e_home)


@pytest.fixture(scope="session")
def bundled_book() -> Path:
    """The demo book shipped in the package (Frankenstein, Project Gutenberg #84)."""
    from folio.entrypoints.cli.demo import bundled_book as path

    return path()


DemoRun = tuple[Path, subprocess.CompletedProcess[str]]


@pytest.fixture
def real_frankenstein(demo_run: DemoRun, tmp_path: Path) -> RunFolio:
    """A private home with Frankenstein imported with the real model (from the demo run)."""
    home, result = demo_run
    ok(result)
    return runner(copy_home(home, tmp_path / "real-home"), embedding=REAL_MODEL)
