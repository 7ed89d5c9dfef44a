"""The terminal's chat, through the real entry point in a pseudo-terminal: Tab completes slash
commands, what ``/read`` opens (the last answer's sources by their places, the chapters reached)
and the names of the people met so far (never one met past the position); ``folio chat -c`` says
which conversation it continues. Hashing embeddings, offline provider."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.e2e.conftest import RunFolio, copy_home, ok, ok_json, run_folio_in, runner, terminals

TIMEOUT_S = 90


@pytest.fixture(scope="module")
def at_chapter_5(bundled_book: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tab") / "home"
    ok(run_folio_in(home, "add", str(bundled_book), "--position", "Chapter 5"))
    return home


@pytest.fixture
def folio(at_chapter_5: Path, tmp_path: Path) -> RunFolio:
    return runner(copy_home(at_chapter_5, tmp_path / "home"))


@pytest.fixture
def spawn(folio: RunFolio) -> Iterator[Any]:
    with terminals(folio, columns=160, timeout=TIMEOUT_S) as start:
        yield start


def test_tab_completes_commands_read_targets_and_names_met_so_far(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect("you>")
    child.send("/his\t")  # the only command starting so: written out
    child.expect("tory")  # (the terminal is sent only what Tab added)
    child.send("\r")
    child.expect("Nothing asked yet in this conversation")
    child.expect("you>")

    child.send("Who is Cler\t")  # Clerval, met in Chapter 4: written out
    child.expect("val")
    child.send("?\r")
    child.expect(r"Sources: \[1\] ")
    child.expect("you>")

    child.send("/read \t")  # a menu: the sources by their places, the chapters reached
    child.expect(r"Chapter \d+, p\. \d+")
    child.expect("Letter 4")
    child.sendintr()  # Ctrl-C: a fresh prompt
    child.expect("you>")

    child.send("Who is Feli\t")  # Felix first appears in Chapter 11: nothing to offer
    child.expect(r"Feli")
    time.sleep(1)  # what Tab offers comes from another thread: give it time to (not) come
    child.send("x?\r")
    child.expect(r"Sources: |Nothing")
    child.expect("you>")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    assert not re.search(r"Felix\S* +met so far", child.before)

    [entry] = ok_json(folio("conversations", "--json"))
    assert entry["title"] == "Who is Clerval?"
    export = ok_json(folio("conversations", "export", entry["conversation_id"], "--format", "json"))
    asked = [m["content"] for m in export["messages"] if m["role"] == "user"]
    assert asked == ["Who is Clerval?", "Who is Felix?"]


def test_continuing_says_which_conversation_it_resumed(folio: RunFolio) -> None:
    first = ok_json(folio("chat", "Frankenstein", "-m", "Who is Elizabeth?", "--json"))
    again = folio("chat", "Frankenstein", "-c", "-m", "And her mother?")
    assert again.returncode == 0, again.stderr
    short = first["conversation_id"][:8]
    assert re.search(
        rf"^Continuing “Who is Elizabeth\?” \({short}, 1 turn, last active just now, "
        r"\d{4}-\d\d-\d\d \d\d:\d\d\)$",
        again.stderr,
        re.MULTILINE,
    ), again.stderr
