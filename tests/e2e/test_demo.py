"""``folio demo`` with stdin not a terminal: it imports the bundled book with the real embedding
model (once, in the session's ``demo_run``) and runs the scripted offline tour; a second run reuses
the book."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import DemoRun, RunFolio, copy_home, ok, ok_json, runner


def demo_conversation(run: RunFolio) -> dict[str, Any]:
    [entry] = [c for c in ok_json(run("conversations", "--json")) if c["title"] == "Demo"]
    data: dict[str, Any] = ok_json(
        run("conversations", "export", entry["conversation_id"], "--format", "json")
    )
    return data


@pytest.mark.slow
def test_the_first_demo_imports_the_book_and_tours_it_offline(demo_run: DemoRun) -> None:
    out = ok(demo_run[1])
    assert "Importing the demo book" in out
    assert "offline" in out and "Offline mode" in out
    assert len(re.findall(r"^you> ", out, re.MULTILINE)) == 4
    # "Who is Henry Clerval?" cites pages; the bare follow-up quotes only a sentence that answers
    # (not "What must have been his feelings?"), and the murder has none to cite
    assert len(re.findall(r"^Sources: .*p\. \d+", out, re.MULTILINE)) >= 1
    assert not re.search(r'^- (?:".*\?[”"’]*"|“.*\?[’]*”) \(', out, re.MULTILINE)
    assert "Clerval" in out
    # the follow-up is searched with the reader's own earlier question, never a name folio guessed
    assert 'search_book(query="What happens to him? ' in out
    # the guard at work: the later murder gets an honest "not yet", not unrelated quotes
    spoiler = out.split("you> Who is murdered?", 1)[1]
    assert "come later" not in spoiler  # no hint at what lies past the position
    assert "Nothing up to Chapter 5 answers this" in spoiler.split("you>", 1)[0]
    assert re.search(r"Resume this conversation: folio chat \w{8} --conversation \w{8}", out)


@pytest.mark.slow
def test_the_tour_respects_the_reading_position_and_restores_it(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    run = runner(copy_home(demo_run[0], tmp_path / "home"), embedding=None)
    [book] = ok_json(run("books", "--json"))
    assert book["reading_position"]["char_offset"] is None  # the tour resets what it set
    chapters = ok_json(run("show", book["id"], "--json"))["chapters"]
    limit = next(c["char_start"] for c in chapters if c["title"] == "Chapter 6")

    data = demo_conversation(run)
    assert [t["turn_number"] for t in data["turns"]] == [1, 2, 3, 4]
    for turn in data["turns"]:  # the whole tour reads as someone through Chapter 5
        assert all(s["char_end"] <= limit for s in turn["sources"])
    results = [
        r
        for m in data["messages"]
        if m["role"] == "tool_result"
        for r in json.loads(m["content"])["data"].get("results", [])
    ]
    assert results and all(r["char_end"] <= limit for r in results)


@pytest.mark.slow
def test_a_second_demo_reuses_the_imported_book(demo_run: DemoRun, tmp_path: Path) -> None:
    run = runner(copy_home(demo_run[0], tmp_path / "home"), embedding=None)
    out = ok(run("demo"))
    assert "Importing" not in out
    assert "Sources: " in out and "Resume this conversation" in out
    assert len(ok_json(run("books", "--json"))) == 1
    assert len(ok_json(run("conversations", "--json"))) == 2


def test_the_demo_runs_and_reuses_its_book_with_the_hashing_embedder(run_folio: RunFolio) -> None:
    first = ok(run_folio("demo"))
    assert "Importing the demo book" in first
    assert len(re.findall(r"^you> ", first, re.MULTILINE)) == 4 and "Sources: " in first
    assert "Reading position: through Chapter 5 (p. " in first
    second = ok(run_folio("demo", "--tour"))
    assert "Importing" not in second and "Resume this conversation" in second
    assert len(ok_json(run_folio("books", "--json"))) == 1
