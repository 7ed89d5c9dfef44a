"""Calibre as the source of truth on every run: a real Calibre library (made by calibredb, see
tests/fixtures/calibre/README.md) imported through the CLI, changed in Calibre (a series index, a
title and identifiers, a book's file replaced by a new edition, a book removed), then imported
again: folio follows every change, keeps the reader's place and conversations, and reports the
book Calibre no longer has until asked to remove it."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import RunFolio, ok, ok_json

FIXTURES = Path(__file__).parents[1] / "fixtures" / "calibre"


def unpack(name: str, library: Path) -> Path:
    shutil.rmtree(library, ignore_errors=True)
    library.mkdir(parents=True)
    with tarfile.open(FIXTURES / name) as archive:
        archive.extractall(library, filter="data")
    return library


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return unpack("library_before.tar.gz", tmp_path / "Calibre Library")


def books(run_folio: RunFolio) -> dict[str, dict[str, Any]]:
    return {b["title"]: b for b in ok_json(run_folio("books", "--json"))}


def test_a_library_changed_in_calibre_is_followed_on_the_next_import(
    run_folio: RunFolio, library: Path
) -> None:
    first = ok_json(run_folio("add", "--calibre", str(library), "--json"))
    assert sorted(a["title"] for a in first["added"]) == [
        "A Quiet Garden", "The First Moon", "The Second Moon"
    ]  # fmt: skip
    moon = books(run_folio)["The First Moon"]["id"]
    ok(run_folio("position", moon, "--chapter", "2"))
    ok(run_folio("chat", moon, "-m", "Who is in the first chapter?"))
    before = ok_json(run_folio("position", moon, "--json"))

    unpack("library_after.tar.gz", library)  # Calibre changed it (see the fixtures' README)
    second = ok_json(run_folio("add", "--calibre", str(library), "--json"))

    updated = {u["title"]: u for u in second["updated"]}
    assert set(updated) == {"The First Moon (Revised)", "The Second Moon"}
    assert updated["The Second Moon"]["changes"] == ["series index"]
    revised = updated["The First Moon (Revised)"]
    assert revised["changes"] == ["title", "identifiers", "text"]
    assert revised["position_carried"] == "chapter"
    assert [b["title"] for b in second["not_in_calibre"]] == ["A Quiet Garden"]
    now = books(run_folio)
    assert now["The Second Moon"]["series_index"] == 3
    assert now["The First Moon (Revised)"]["id"] == moon  # the same book, its text replaced
    shown = ok_json(run_folio("show", moon, "--json"))
    assert shown["identifiers"]["goodreads"] == "42"
    after = ok_json(run_folio("position", moon, "--json"))
    assert before["description"].startswith("through Chapter 2")
    assert after["description"].startswith("through Chapter 2")
    assert after["char_offset"] > before["char_offset"]  # Chapter 1 grew by a paragraph
    found = ok_json(run_folio("search", moon, "editor added to this edition", "--json"))
    assert any("editor added" in hit["text"] for hit in found)
    late = ok_json(run_folio("search", moon, "epilogue1 epilogue2", "--json"))
    assert not any("epilogue" in hit["text"] for hit in late)  # Chapter 4: unread
    assert [c["book_id"] for c in ok_json(run_folio("conversations", "--json"))] == [moon]

    third = ok_json(run_folio("add", "--calibre", str(library), "--json"))
    assert third["updated"] == [] and len(third["existing"]) == 2
    assert [b["title"] for b in third["not_in_calibre"]] == ["A Quiet Garden"]

    pruned = ok_json(run_folio("add", "--calibre", str(library), "--remove-missing", "--json"))
    assert [b["title"] for b in pruned["removed"]] == ["A Quiet Garden"]
    assert sorted(books(run_folio)) == ["The First Moon (Revised)", "The Second Moon"]


def test_the_summary_names_what_changed_and_what_calibre_no_longer_has(
    run_folio: RunFolio, library: Path
) -> None:
    ok(run_folio("add", "--calibre", str(library)))
    unpack("library_after.tar.gz", library)

    result = run_folio("add", "--calibre", str(library))

    out = ok(result)
    assert "Updated The Second Moon: series index" in out
    assert "2 updated" in out and "1 no longer in Calibre kept in folio" in out
    assert "Not in Calibre any more A Quiet Garden" in result.stderr
    assert "--remove-missing" in result.stderr
