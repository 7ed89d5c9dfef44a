"""Highlights through the HTTP API of a real ``folio serve`` (offline provider, two users): a
Kindle ``My Clippings.txt`` and a KOReader sidecar (``metadata.epub.lua`` with KOReader's own
fields, ``pos0``/``pos1`` in crengine's classic xpointer form) uploaded, anchored in real books
from the shared data set, listed up to the reading position, deleted, and asked about offline
through the chat API ("What did I highlight?").

What each test would catch if it broke: the KOReader highlight placed by its device page instead
of ``pos0`` lands in Chapter 7 (hidden at Chapter 6); a Kindle quote lacking one comma of the
Gutenberg text and without its ``_italics_`` is not found; a one-word tap lands in the editor's
preface; an entry for a book not yet added is dropped; another user sees the highlights.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

V1 = "/api/v1"
PRIDE = "pg1342_pride_and_prejudice.txt"
# Chapter III's first sentence as a Kindle edition prints it: no comma after "however", curly
# quotes and line breaks gone, "secondhand" for Gutenberg's "second-hand" (398 characters).
LONG_QUOTE = (
    "Not all that Mrs. Bennet however, with the assistance of her five daughters, could ask on "
    "the subject, was sufficient to draw from her husband any satisfactory description of Mr. "
    "Bingley. They attacked him in various ways, with barefaced questions, ingenious "
    "suppositions, and distant surmises; but he eluded the skill of them all; and they were at "
    "last obliged to accept the secondhand intelligence of their neighbour, Lady Lucas."
)
CLIPPINGS = f"""\ufeffPride and Prejudice (Jane Austen)
- Your Highlight on page 1 | Location 80-81 | Added on Friday, 20 November 2026 21:14:03

It is a truth universally acknowledged, that a single man in possession
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 7 | Location 140-146 | Added on Friday, 20 November 2026 21:20:00

{LONG_QUOTE}
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on Location 12 | Added on Friday, 20 November 2026 21:21:00

She
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 20 | Location 301-303 | Added on Friday, 20 November 2026 21:30:00

a wish of being better acquainted with them was expressed towards the two eldest
==========
Pride and Prejudice (Jane Austen)
- Your Note on page 20 | Location 303 | Added on Friday, 20 November 2026 21:31:00

Elizabeth sees through the Bingley sisters
==========
Pride and Prejudice (Jane Austen)
- Your Highlight on page 190 | Location 3010-3012 | Added on Saturday, 21 November 2026 09:00:00

In vain have I struggled. It will not do. My feelings will not be repressed.
==========
Emma (Jane Austen)
- Your Highlight on page 1 | Location 5-6 | Added on Saturday, 21 November 2026 09:10:00

Emma Woodhouse, handsome, clever, and rich
==========
"""
# Chapter 5 of the EPUB is its DocFragment[11]; the device's page is where its reflowed layout
# put it, which in folio's pages falls in Chapter 7 (where "the wretch" occurs again).
WRETCH = "/body/DocFragment[11]/body/section/p[2]/text()"
KOREADER = f"""-- we can read Lua syntax here!
return {{
    ["annotations"] = {{
        [1] = {{
            ["chapter"] = "Chapter 5",
            ["color"] = "yellow",
            ["datetime"] = "2026-11-20 21:14:03",
            ["datetime_updated"] = "2026-11-20 21:16:40",
            ["drawer"] = "lighten",
            ["note"] = "he flees his creature",
            ["page"] = "{WRETCH}.69",
            ["pageno"] = 58,
            ["pos0"] = "{WRETCH}.69",
            ["pos1"] = "{WRETCH}.79",
            ["text"] = "the wretch",
        }},
    }},
    ["doc_pages"] = 312,
    ["doc_props"] = {{
        ["authors"] = "Mary Wollstonecraft Shelley",
        ["language"] = "en",
        ["title"] = "Frankenstein; or, the Modern Prometheus",
    }},
    ["partial_md5_checksum"] = "0b2f7c4e1d5a6b3c9e8f7a6b5c4d3e2f",
    ["percent_finished"] = 0.31,
    ["summary"] = {{
        ["modified"] = "2026-11-20",
        ["status"] = "reading",
    }},
}}
"""


def upload(c: httpx.Client, path: Path, headers: dict[str, str], **form: str) -> str:
    with path.open("rb") as f:
        r = c.post(f"{V1}/books", files={"file": (path.name, f)}, data=form, headers=headers)
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = c.get(r.headers["Location"], headers=headers).json()
        if job["status"] in ("done", "failed"):
            assert job["status"] == "done", job.get("error")
            return str(r.json()["book"]["id"])
        time.sleep(0.1)
    raise AssertionError("the import did not finish")


def import_file(
    c: httpx.Client, name: str, text: str, headers: dict[str, str], **form: str
) -> httpx.Response:
    files = {"file": (name, text.encode("utf-8"))}
    return c.post(f"{V1}/highlights/import", files=files, data=form, headers=headers)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, books_dir: Path) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("highlights-home")
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
    bob = ok_json(run_folio_in(home, "users", "add", "bob", "--json"))
    with (
        FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as server,
        httpx.Client(base_url=server.url, timeout=60) as c,
    ):
        as_alice = {"Authorization": f"Bearer {alice['token']}"}
        as_bob = {"Authorization": f"Bearer {bob['token']}"}
        pride = upload(c, books_dir / PRIDE, as_alice, title="Pride and Prejudice",
                       author="Jane Austen", position="Chapter 10")  # fmt: skip
        r = import_file(c, "My Clippings.txt", CLIPPINGS, as_alice)
        assert r.status_code == 200, r.text
        yield {"c": c, "alice": as_alice, "bob": as_bob, "pride": pride, "report": r.json(),
               "books": books_dir}  # fmt: skip


def listed(site: dict[str, Any], book: str) -> dict[str, Any]:
    r = site["c"].get(f"{V1}/books/{book}/highlights", headers=site["alice"])
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_a_kindle_file_is_anchored_and_listed_up_to_the_position(site: dict[str, Any]) -> None:
    report = site["report"]
    (book,) = report["books"]
    assert (book["book_id"], book["read"], book["added"]) == (site["pride"], 5, 5)
    assert book["anchored"] == 5  # the comma-less quote and the one-word tap too
    assert report["waiting"] == [{"book": "Emma (Jane Austen)", "read": 1, "added": 1}]
    assert "Kept until the book is added: Emma (Jane Austen)" in report["message"]

    shown = listed(site, site["pride"])
    by_text = {h["text"]: h for h in shown["highlights"]}
    assert by_text[LONG_QUOTE]["chapter"] == "Chapter III"
    assert by_text["She"]["chapter"] == "Chapter I"  # not the editor's preface
    noted = by_text[
        "a wish of being better acquainted with them was expressed towards the two eldest"
    ]
    assert (
        noted["chapter"] == "Chapter VI"
        and noted["note"] == "Elizabeth sees through the Bingley sisters"
    )
    # Chapter XXXIV lies past the position: counted, its words nowhere in the answer
    assert shown["hidden"] == 1 and shown["not_found"] == 0
    assert "In vain have I struggled" not in str(shown)
    assert shown["position"].startswith("through Chapter X")


def test_a_koreader_highlight_is_placed_by_its_xpointer(site: dict[str, Any]) -> None:
    c, alice = site["c"], site["alice"]
    epub = upload(c, site["books"] / "formats" / "frankenstein.epub", alice, position="Chapter 6")
    r = import_file(c, "metadata.epub.lua", KOREADER, alice, book_id=epub)
    assert r.status_code == 200, r.text
    assert r.json()["books"][0]["anchored"] == 1
    (wretch,) = listed(site, epub)["highlights"]
    assert (wretch["text"], wretch["chapter"]) == ("the wretch", "Chapter 5")
    assert wretch["note"] == "he flees his creature" and wretch["source"] == "KOReader"
    text = c.get(f"{V1}/books/{epub}/text", params={"start": wretch["char_start"],
                 "end": wretch["char_end"]}, headers=alice).json()["text"]  # fmt: skip
    assert text == "the wretch"


def test_offline_chat_answers_from_the_readers_highlights(site: dict[str, Any]) -> None:
    c, alice = site["c"], site["alice"]
    r = c.post(f"{V1}/conversations", json={"book_id": site["pride"]}, headers=alice)
    assert r.status_code == 201, r.text
    cid = r.json()["conversation_id"]

    def ask(question: str) -> dict[str, Any]:
        r = c.post(f"{V1}/conversations/{cid}/messages", json={"message": question},
                   headers=alice)  # fmt: skip
        assert r.status_code == 200, r.text
        return dict(r.json())

    for question in ("What did I highlight?", "Show my highlights"):
        turn = ask(question)
        answer = " ".join(turn["answer"].split())
        assert "It is a truth universally acknowledged" in answer, answer
        assert "Elizabeth sees through the Bingley sisters" in answer
        assert "In vain have I struggled" not in answer  # past the position
        assert [t["name"] for t in turn["tool_calls"]] == ["search_highlights"]
    # a cited passage holding one of the reader's highlights carries it, to show beside it
    quoted = ask('Where does it say "a truth universally acknowledged"?')
    marked = [h for c in quoted["citations"] for h in c["highlights"]]
    assert [h["text"] for h in marked] == [
        "It is a truth universally acknowledged, that a single man in possession"
    ], quoted["citations"]
    assert all(c["highlights"] == [] for c in quoted["citations"] if c["char_start"] > 40_000)
    noted = " ".join(ask("What did I note about Elizabeth?")["answer"].split())
    assert noted.startswith("Your highlights about Elizabeth"), noted
    assert "Elizabeth sees through the Bingley sisters" in noted
    assert "It is a truth universally acknowledged" not in noted.split("\n")[0]


def test_highlights_for_a_missing_book_are_applied_when_it_is_added(
    site: dict[str, Any],
) -> None:
    c, alice = site["c"], site["alice"]
    emma = upload(c, site["books"] / "austen-emma.txt", alice, title="Emma",
                  author="Jane Austen", position="10%")  # fmt: skip
    (kept,) = listed(site, emma)["highlights"]
    assert kept["text"] == "Emma Woodhouse, handsome, clever, and rich"
    assert kept["chapter"] is not None and kept["source"] == "Kindle"
    # kept once: importing the file again adds nothing to either book
    again = import_file(c, "My Clippings.txt", CLIPPINGS, alice).json()
    assert {b["title"]: b["added"] for b in again["books"]} == {"Pride and Prejudice": 0,
                                                                  "Emma": 0}  # fmt: skip
    assert again["waiting"] == []


def test_another_users_highlights_do_not_exist_for_them(site: dict[str, Any]) -> None:
    c, bob, pride = site["c"], site["bob"], site["pride"]
    r = c.get(f"{V1}/books/{pride}/highlights", headers=bob)
    assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND"
    given = import_file(c, "My Clippings.txt", CLIPPINGS, bob, book_id=pride)
    assert given.status_code == 404
    # bob's own import of the same file keeps everything waiting, for him only
    own = import_file(c, "My Clippings.txt", CLIPPINGS, bob).json()
    assert own["books"] == [] and {w["book"] for w in own["waiting"]} == {
        "Pride and Prejudice (Jane Austen)", "Emma (Jane Austen)"}  # fmt: skip
    some = listed(site, pride)["highlights"][0]
    gone = c.delete(f"{V1}/books/{pride}/highlights/{some['id']}", headers=bob)
    assert gone.status_code == 404


def test_deleting_a_highlight_and_bad_files(site: dict[str, Any]) -> None:
    c, alice, pride = site["c"], site["alice"], site["pride"]
    first = listed(site, pride)["highlights"][0]
    url = f"{V1}/books/{pride}/highlights/{first['id']}"
    assert c.delete(url, headers=alice).status_code == 204
    assert first["id"] not in {h["id"] for h in listed(site, pride)["highlights"]}
    assert c.delete(url, headers=alice).status_code == 404
    bad = import_file(c, "metadata.epub.lua", 'return os.execute("echo hi")', alice)
    assert bad.status_code == 400
    assert "is not a KOReader metadata file" in bad.json()["error"]["message"]
    russian = "Книга (Автор)\n- Ваш выделенный отрывок на странице 5 | Местоположение 12\n\nСлова\n"
    refused = import_file(c, "My Clippings.txt", russian + "==========\n", alice)
    assert refused.status_code == 400
    assert "English, German, French" in refused.json()["error"]["message"]
