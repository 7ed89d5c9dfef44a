"""The fork server the end-to-end tests run ``folio`` through (``tests/forked_cli.py``) behaves as
a fresh interpreter running ``python -m folio.entrypoints.cli.main`` does: the same stdout, stderr
and exit status, the same files left behind, the environment and working directory of the call."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import folio_command, folio_env
from tests.forked_cli import ForkServer

COMMANDS = [
    ("--help",),
    ("books",),
    ("books", "--json"),
    ("add", "no-such-book.epub"),
    ("frobnicate",),
    ("position", "nobody", "--percent", "50"),
    ("conversations", "list", "--json"),
]


def fresh(home: Path, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        folio_command(*args), input=input, capture_output=True, text=True, encoding="utf-8",
        env=folio_env(home), timeout=120,
    )  # fmt: skip


def forked(home: Path, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return ForkServer.shared().run(args, input=input, env=folio_env(home), timeout=120)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, bundled_book: Path) -> Path:
    home = tmp_path_factory.mktemp("forked") / "home"
    assert fresh(home, "add", str(bundled_book)).returncode == 0
    return home


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_forked_run_prints_and_exits_as_a_fresh_interpreter(
    args: tuple[str, ...], library: Path
) -> None:
    one, other = fresh(library, *args), forked(library, *args)
    assert (other.returncode, other.stdout, other.stderr) == (
        one.returncode,
        one.stdout,
        one.stderr,
    )


def test_a_forked_run_closes_its_database_as_an_exiting_interpreter_does(
    tmp_path: Path, bundled_book: Path
) -> None:
    fresh_home, forked_home = tmp_path / "fresh", tmp_path / "forked"
    assert fresh(fresh_home, "add", str(bundled_book)).returncode == 0
    assert forked(forked_home, "add", str(bundled_book)).returncode == 0
    # SQLite folds its write-ahead log into the file when the last connection closes.
    assert sorted(os.listdir(forked_home)) == sorted(os.listdir(fresh_home))
    assert not [name for name in os.listdir(forked_home) if name.endswith(("-wal", "-shm"))]


def test_a_forked_run_has_the_callers_environment_stdin_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("here.txt").write_text("Chapter 1\n\nA lighthouse stood on the rock.\n", encoding="utf-8")
    home = tmp_path / "home"
    added = forked(home, "add", "here.txt")  # a path relative to the caller's directory
    assert added.returncode == 0, added.stderr
    assert (home / "folio.db").is_file(), "FOLIO_HOME came from the call's environment"
    answer = forked(home, "chat", "here", input="What stood on the rock?\n")
    assert answer.returncode == 0, answer.stderr
    assert "lighthouse" in answer.stdout


def test_a_server_hands_a_changed_interpreter_setting_to_a_fresh_process(tmp_path: Path) -> None:
    server = ForkServer.shared()
    env = folio_env(tmp_path)
    assert server.serves(env)
    assert not server.serves({**env, "PYTHONUTF8": "1"})
    assert not server.serves({**env, "LC_ALL": "xx_YY.UTF-8"})
