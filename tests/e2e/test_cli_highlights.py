"""``folio highlights``: a Kindle ``My Clippings.txt`` and a KOReader ``.sdr`` folder (written in
the test, as the devices write them) imported through the CLI's real entry point into SQLite,
anchored to a real book's text, listed up to the reading position, and searched offline by
``folio chat`` ("what did I highlight about X?")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import RunFolio, ok, ok_json, one_error_line

PRIDE = "pg1342_pride_and_prejudice.txt"
# Chapter 1, Chapter 3 (line breaks and curly quotes as a Kindle writes them: one line, straight),
# Chapter 34 (past the position set below), and the editor's preface (unread front matter).
CLIPPINGS = """\ufeffPride and Prejudice (Jane Austen)
- Your Highlight on page 1 | Location 80-81 | Added on Friday, 20 November 2026 21:14:03

It is a truth universally acknowledged, that a single man in possession
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 9 | Location 150-152 | Added on Friday, 20 November 2026 21:20:00

his friend Mr. Darcy soon drew the attention of the room by his fine, tall person
==========
Pride and Prejudice (Jane Austen)
- Your Note on page 9 | Location 152 | Added on Friday, 20 November 2026 21:21:00

Darcy first seen: pride
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 190 | Location 3010-3012 | Added on Saturday, 21 November 2026 09:00:00

"In vain have I struggled. It will not do. My feelings will not be repressed.
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 2 | Location 20-21 | Added on Saturday, 21 November 2026 09:05:00

the false account of Darcy's conduct given by Wickham
==========
Emma (Jane Austen)
- Your Highlight on page 1 | Location 5-6 | Added on Saturday, 21 November 2026 09:10:00

Emma Woodhouse, handsome, clever, and rich
==========
"""


@pytest.fixture
def pride(run_folio: RunFolio, books_dir: Path) -> str:
    added = ok_json(run_folio("add", str(books_dir / PRIDE), "--title", "Pride and Prejudice",
                              "--json"))  # fmt: skip
    book_id = str(added["book"]["id"])
    ok(run_folio("position", book_id, "--chapter", "10"))
    return book_id


def test_kindle_clippings_are_anchored_and_listed_up_to_the_position(
    run_folio: RunFolio, pride: str, books_dir: Path, tmp_path: Path
) -> None:
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(CLIPPINGS, encoding="utf-8")
    report = ok_json(run_folio("highlights", "import", str(clippings), "--json"))
    assert report["unmatched"] == ["Emma (Jane Austen)"]
    (book,) = report["books"]
    assert (book["book_id"], book["read"], book["added"], book["anchored"]) == (pride, 4, 4, 4)
    again = ok_json(run_folio("highlights", "import", str(clippings), "--json"))
    assert again["books"][0]["added"] == 0

    listed = ok_json(run_folio("highlights", pride, "--json"))
    shown = listed["highlights"]
    assert listed["withheld"] == 2  # chapter 34 (past the position) and the editor's preface
    assert [h["chapter"] for h in shown] == ["Chapter I", "Chapter III"]
    assert shown[1]["note"] == "Darcy first seen: pride"
    text = ok(run_folio("read", pride, "--page", shown[1]["page"]))
    assert "Darcy soon drew the attention" in " ".join(text.split())
    raw = (books_dir / PRIDE).read_text(encoding="utf-8")
    assert "his friend Mr. Darcy soon drew the attention\nof the room" in raw
    assert shown[1]["char_end"] - shown[1]["char_start"] == len(
        "his friend Mr. Darcy soon drew the attention\nof the room by his fine, tall person"
    )


def test_entries_for_a_book_not_added_are_kept_and_placed_when_it_is(
    run_folio: RunFolio, pride: str, books_dir: Path, tmp_path: Path
) -> None:
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(CLIPPINGS, encoding="utf-8")
    said = " ".join(ok(run_folio("highlights", "import", str(clippings))).split())
    assert "Kept until the book is added: Emma (Jane Austen)." in said
    added = ok_json(run_folio("add", str(books_dir / "austen-emma.txt"), "--title", "Emma",
                              "--json"))  # fmt: skip
    emma = str(added["book"]["id"])
    ok(run_folio("position", emma, "--percent", "10"))
    (kept,) = ok_json(run_folio("highlights", emma, "--json"))["highlights"]
    assert kept["text"] == "Emma Woodhouse, handsome, clever, and rich" and kept["chapter"]
    again = ok_json(run_folio("highlights", "import", str(clippings), "--json"))
    assert again["waiting"] == [] and again["unmatched"] == []


def test_offline_chat_answers_from_the_readers_highlights_within_the_position(
    run_folio: RunFolio, pride: str, tmp_path: Path
) -> None:
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(CLIPPINGS, encoding="utf-8")
    ok(run_folio("highlights", "import", str(clippings)))
    answer = ok(run_folio("chat", pride, "--new", input="What did I highlight about Darcy?\n"))
    flat = " ".join(answer.split())
    assert "soon drew the attention of the room" in flat
    assert "Darcy first seen" in flat
    assert "In vain have I struggled" not in flat and "false account" not in flat


def test_a_koreader_folder_goes_to_the_book_given(
    run_folio: RunFolio, pride: str, tmp_path: Path
) -> None:
    sdr = tmp_path / "pride.sdr"
    sdr.mkdir()
    (sdr / "metadata.txt.lua").write_text(
        '-- we can read Lua syntax here!\nreturn {\n    ["annotations"] = {\n        [1] = {\n'
        '            ["datetime"] = "2026-11-20 21:14:03",\n'
        '            ["drawer"] = "lighten",\n'
        '            ["note"] = "the famous opening",\n'
        '            ["pageno"] = 1,\n'
        '            ["text"] = "It is a truth universally acknowledged",\n'
        "        },\n    },\n}\n",
        encoding="utf-8",
    )
    report = ok_json(run_folio("highlights", "import", str(sdr), "--book", pride, "--json"))
    assert report["books"][0]["anchored"] == 1
    listed = ok_json(run_folio("highlights", pride, "--json"))["highlights"]
    assert [(h["chapter"], h["note"]) for h in listed] == [("Chapter I", "the famous opening")]


def test_an_unreadable_file_is_one_clear_error(run_folio: RunFolio, tmp_path: Path) -> None:
    bad = tmp_path / "metadata.epub.lua"
    bad.write_text('return os.execute("echo hi")', encoding="utf-8")
    line = one_error_line(run_folio("highlights", "import", str(bad)))
    assert "metadata.epub.lua is not a KOReader metadata file" in line
    missing = run_folio("highlights", "import", str(tmp_path / "nothing.txt"))
    assert "No such file or folder" in one_error_line(missing)
