"""Two books with the same title (the demo's Frankenstein and the reader's own copy in another
format) get names a reader can tell apart, in the CLI's lists and messages, in the answers to a
reference, and in the model list an OpenAI-compatible client shows (issue 28)."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import RunFolio, ok, ok_json, run_folio_in

TITLE = "Frankenstein; or, the Modern Prometheus"


@pytest.fixture
def two_frankensteins(bundled_book: Path, tmp_path: Path, run_folio: RunFolio) -> RunFolio:
    own = tmp_path / "my-frankenstein.md"
    own.write_text(bundled_book.read_text(encoding="utf-8") + "\n\nMy copy.\n", encoding="utf-8")
    ok(run_folio("add", str(bundled_book)))
    added = ok(run_folio("add", str(own), "--title", TITLE))
    assert f"Added {TITLE} (MD)" in added
    assert f"the library also has {TITLE} (TXT)" in added
    return run_folio


def test_the_list_and_an_ambiguous_reference_name_each_book_apart(
    two_frankensteins: RunFolio,
) -> None:
    books = ok_json(two_frankensteins("books", "--json"))
    assert sorted(b["name"] for b in books) == [f"{TITLE} (MD)", f"{TITLE} (TXT)"]
    ambiguous = two_frankensteins("show", "frank")
    assert ambiguous.returncode != 0
    assert f"{TITLE} (TXT) (id " in ambiguous.stderr and f"{TITLE} (MD) (id " in ambiguous.stderr
    assert "Use its name as shown or the id" in ambiguous.stderr


def test_the_cli_accepts_a_told_apart_name(two_frankensteins: RunFolio) -> None:
    shown = ok_json(two_frankensteins("show", f"{TITLE} (MD)", "--json"))
    assert (shown["format"], shown["source_name"]) == ("md", "my-frankenstein.md")
    moved = ok(two_frankensteins("position", f"{TITLE.lower()} (txt)", "--chapter", "3"))
    assert moved.startswith(f"{TITLE} (TXT): read through Chapter 3")


def test_models_carry_the_name_a_picker_shows(bundled_book: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    own = tmp_path / "my-frankenstein.md"
    own.write_text(bundled_book.read_text(encoding="utf-8") + "\n\nMy copy.\n", encoding="utf-8")
    ok(run_folio_in(home, "add", str(bundled_book)))
    ok(run_folio_in(home, "add", str(own), "--title", TITLE))
    with FolioServer(home) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        models = client.models.list().data
    names = sorted((m.model_extra or {})["name"] for m in models)
    assert names == [f"{TITLE} (MD)", f"{TITLE} (TXT)"]


def test_the_conversation_list_names_the_book_apart(two_frankensteins: RunFolio) -> None:
    ok(two_frankensteins("conversations", "new", f"{TITLE} (MD)", "--title", "Mine"))
    listed = ok(two_frankensteins("conversations", env={"COLUMNS": "200"}))
    row = next(line for line in listed.splitlines() if "Mine" in line)
    assert f"{TITLE} (MD)" in row, listed
