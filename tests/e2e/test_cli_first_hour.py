"""A reader's first hour in the terminal (issue 28), through the real entry point: the answer's
quotes carry the numbers of its sources, ``clear`` clears the screen, the REPL prompt leaves the
line to the question, and ``folio serve`` says what it serves. The default embedder, offline
provider (the scripted one for the server)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import (
    DemoRun,
    RunFolio,
    copy_home,
    ok,
    run_folio_in,
    runner,
    terminals,
)

TIMEOUT_S = 90
QUESTION = "Who was Caroline Beaufort?"  # Chapter 1 answers it with quotes


@pytest.fixture(scope="module")
def read_to_chapter_5(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled book imported with the real model (the run's demo home), read to Chapter 5."""
    home = copy_home(demo_run[0], tmp_path_factory.mktemp("first-hour") / "home")
    ok(run_folio_in(home, "position", "Frankenstein", "--chapter", "Chapter 5", embedding=None))
    return home


@pytest.fixture
def folio(read_to_chapter_5: Path, tmp_path: Path) -> RunFolio:
    # the default embedder: the offline answer's score threshold is the real model's
    return runner(copy_home(read_to_chapter_5, tmp_path / "home"), embedding=None)


@pytest.fixture
def spawn(folio: RunFolio) -> Iterator[Any]:
    """``spawn(*args)``: folio in a pseudo-terminal; every child is closed after the test."""
    with terminals(folio, columns=80, timeout=TIMEOUT_S) as start:
        yield start


def test_each_quote_of_an_answer_carries_the_number_of_its_source(folio: RunFolio) -> None:
    out = ok(folio("chat", "Frankenstein", "--new", "-m", QUESTION))
    sources = re.search(r"^Sources: (.+)$", out, re.M)
    assert sources, out
    numbers = re.findall(r"\[(\d+)\]", sources.group(1))
    assert len(numbers) >= 2, out
    quoted = [line for line in out.splitlines() if line.startswith("- ")]
    marked = [re.search(r" \[(\d+)\]$", line) for line in quoted]
    assert all(marked), quoted  # every quoted bullet ends with its source's number
    assert sorted({m.group(1) for m in marked if m}) == sorted(set(numbers))


def test_the_numbers_match_what_read_opens(folio: RunFolio) -> None:
    out = ok(folio("chat", "Frankenstein", "--new", "-m", QUESTION))
    second = next(line for line in out.splitlines() if line.endswith(" [2]"))
    words = re.search(r'"([^"]+)"', second)
    assert words, second
    opened = ok(folio("read", "Frankenstein", "--cited", "2"))
    assert " ".join(words.group(1).split()[:6]) in " ".join(opened.split())


def test_clear_clears_the_screen_and_is_no_question(spawn: Any, folio: RunFolio) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect("you>")
    for command in ("clear", "/clear"):
        child.sendline(command)
        index = child.expect([r"\x1b\[2J", "Unknown command", "Happy to help", "Sources:"])
        assert index == 0, command
        child.expect("you>")
    child.sendline("/help")
    child.expect(r"/clear, clear +clear the screen")
    child.sendline("quit")
    child.expect("Nothing was asked")


def test_the_prompt_leaves_most_of_an_80_column_line_to_the_question(spawn: Any) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect(r"Type /help for commands, quit to leave\.")
    child.expect("you>")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before + "you>")
    prompt = re.split(r"[\r\n]", shown)[-1]
    assert prompt == "Frankenstein · Chapter 5 · you>", repr(prompt)
    assert len(prompt) + 1 <= 40
    child.sendline("quit")


def test_serve_says_its_page_provider_model_and_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FolioServer(home) as server:
        banner = server.log.read_text(encoding="utf-8")
    assert f"serving the page on {server.url}/ " in banner, banner
    assert "provider: scripted (model: " in banner, banner
    assert f"database: SQLite {home / 'folio.db'}" in banner, banner
