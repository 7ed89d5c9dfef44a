"""How far the reader has read is asked where a book arrives, before its import (issue 28):
``folio add`` on a terminal (once for a folder, never with stdin not a terminal), ``--position``,
``POST /api/v1/books`` with ``position``; and an answer from a book with no position set says so
in one line with the way to set it. Real entry point, hashing embeddings, offline provider (the
scripted one for the server)."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import RunFolio, folio_command, folio_env, ok, ok_json, run_folio_in

TIMEOUT_S = 120
V1 = "/api/v1"


def story(chapters: int, word: str) -> str:
    return "\n\n".join(
        f"CHAPTER {i}\n\n" + f"The keeper counted {word} on day {i}. " * 60
        for i in range(1, chapters + 1)
    )


@pytest.fixture
def spawn(run_folio: RunFolio) -> Iterator[Any]:
    children: list[pexpect.spawn] = []

    def start(*args: str) -> pexpect.spawn:
        command = folio_command(*args)
        env = folio_env(run_folio.home, extra={"NO_COLOR": "1", "TERM": "xterm"})
        child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8",
                              timeout=TIMEOUT_S, dimensions=(40, 200))  # fmt: skip
        children.append(child)
        return child

    yield start
    for child in children:
        child.close(force=True)


def positions(run_folio: RunFolio) -> dict[str, str]:
    return {
        b["source_name"]: b["reading_position"]["description"]
        for b in ok_json(run_folio("books", "--json"))
    }


def test_add_asks_before_importing_and_stores_the_book_with_the_answer(
    spawn: Any, run_folio: RunFolio, bundled_book: Path
) -> None:
    child = spawn("add", str(bundled_book))
    child.expect(r"How far have you read frankenstein\.txt\?")
    child.expect("Enter: the whole book")
    assert ok_json(run_folio("books", "--json")) == []  # nothing imported while it asks
    child.sendline("Chapter 5")
    child.expect(r"Added Frankenstein.*you have read through Chapter 5 \(p\. \d+")
    child.expect(pexpect.EOF)
    assert positions(run_folio)["frankenstein.txt"].startswith("through Chapter 5 (p. ")


def test_an_answer_naming_no_chapter_is_asked_again_with_the_books_chapters(
    spawn: Any, run_folio: RunFolio, bundled_book: Path
) -> None:
    child = spawn("add", str(bundled_book))
    child.expect("How far have you read")
    child.sendline("Chapter 99")
    child.expect(r"has no chapter 'Chapter 99'")
    child.expect(r"its\s+chapters\s+run")  # the book's own chapters, to pick from
    child.expect("How far have you read")
    child.sendline("not started")
    child.expect(r"you have read the very beginning \(nothing read yet")
    child.expect(pexpect.EOF)


def test_a_folder_is_asked_once_for_all_its_books(
    spawn: Any, run_folio: RunFolio, tmp_path: Path
) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "boats.txt").write_text(story(3, "boats"), encoding="utf-8")
    (shelf / "ships.txt").write_text(story(4, "ships"), encoding="utf-8")
    child = spawn("add", str(shelf))
    child.logfile_read = shown = io.StringIO()
    child.expect(r"How far have you read these 2 books \(each of them\)\?")
    child.sendline("Chapter 2")
    child.expect(r"Summary:\S* 2 added")
    child.expect(pexpect.EOF)
    assert shown.getvalue().count("How far") == 1  # asked once, not once per book
    found = positions(run_folio).values()
    assert len(found) == 2 and all(p.lower().startswith("through chapter 2 ") for p in found)


def test_with_stdin_not_a_terminal_nothing_is_asked(
    run_folio: RunFolio, bundled_book: Path
) -> None:
    result = run_folio("add", str(bundled_book))
    assert "How far" not in ok(result) + result.stderr
    [book] = ok_json(run_folio("books", "--json"))
    assert book["reading_position"]["kind"] == "none"


def test_a_position_given_that_names_no_place_refuses_the_file(
    run_folio: RunFolio, bundled_book: Path
) -> None:
    refused = run_folio("add", str(bundled_book), "--position", "Chapter 99")
    assert refused.returncode == 1
    assert "has no chapter 'Chapter 99'" in refused.stderr and "Traceback" not in refused.stderr
    assert ok_json(run_folio("books", "--json")) == []  # nothing half-stored
    ok(run_folio("add", str(bundled_book), "--position", "whole"))
    [book] = ok_json(run_folio("books", "--json"))
    assert book["reading_position"]["description"] == "the whole book"


def test_an_answer_without_a_position_says_so_in_one_line_with_the_way_to_set_it(
    run_folio: RunFolio, bundled_book: Path
) -> None:
    ok(run_folio("add", str(bundled_book)))
    out = ok(run_folio("chat", "Frankenstein", "--new", "-m", "Who was Caroline Beaufort?"))
    notes = [line for line in out.splitlines() if "No reading position is set" in line]
    assert len(notes) == 1, out
    assert "folio position " in notes[0] and "--chapter" in notes[0]
    ok(run_folio("position", "Frankenstein", "--chapter", "5"))
    again = ok(run_folio("chat", "Frankenstein", "--new", "-m", "Who was Caroline Beaufort?"))
    assert "No reading position" not in again


def wait_for_job(client: httpx.Client, url: str) -> dict[str, Any]:
    for _ in range(600):
        job: dict[str, Any] = client.get(url).json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"the import did not finish: {job}")


def test_the_api_takes_the_position_with_the_upload(tmp_path: Path) -> None:
    with FolioServer(tmp_path / "home") as server, httpx.Client(base_url=server.url) as c:
        text = story(5, "lamps").encode()
        r = c.post(f"{V1}/books", files={"file": ("lamps.txt", text)}, data={"position": "3"})
        assert r.status_code == 202, r.text
        job = wait_for_job(c, r.headers["location"])
        assert job["status"] == "done", job
        book = c.get(f"{V1}/books/{job['book_id']}").json()
        assert book["reading_position"]["description"].lower().startswith("through chapter 3 (p. ")

        r = c.post(f"{V1}/books", files={"file": ("other.txt", story(2, "bells").encode())},
                   data={"position": "Chapter 9"})  # fmt: skip
        job = wait_for_job(c, r.headers["location"])
        assert job["status"] == "failed" and job["error"]["code"] == "INVALID_POSITION", job
        assert "has no chapter 'Chapter 9'" in job["error"]["message"]
        assert len(c.get(f"{V1}/books").json()) == 1  # nothing stored

        too_long = c.post(
            f"{V1}/books", files={"file": ("x.txt", text)}, data={"position": "x" * 201}
        )
        assert too_long.status_code == 422 and "Traceback" not in too_long.text


def test_an_api_answer_without_a_position_carries_the_notice(tmp_path: Path) -> None:
    with FolioServer(tmp_path / "home") as server, httpx.Client(base_url=server.url) as c:
        r = c.post(f"{V1}/books", files={"file": ("lamps.txt", story(3, "lamps").encode())})
        book_id = wait_for_job(c, r.headers["location"])["book_id"]
        cid = c.post(f"{V1}/conversations", json={"book_id": book_id}).json()["conversation_id"]
        turn = c.post(f"{V1}/conversations/{cid}/messages", json={"message": "Who counts?"})
        assert turn.status_code == 200, turn.text
        body = turn.json()
        assert body["position_set"] is False
        assert "No reading position is set" in body["notice"] and "/position" in body["notice"]
        c.put(f"{V1}/books/{book_id}/position", json={"chapter": "1"}).raise_for_status()
        after = c.post(f"{V1}/conversations/{cid}/messages", json={"message": "And then?"})
        assert json.loads(after.text)["notice"] is None


def test_an_openai_client_answer_without_a_position_ends_with_the_notice(
    tmp_path: Path, bundled_book: Path
) -> None:
    import openai

    home = tmp_path / "home"
    ok(run_folio_in(home, "add", str(bundled_book)))
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
        book = client.models.list().data[0].id
        question = [{"role": "user", "content": "Who was Caroline Beaufort?"}]
        unset = client.chat.completions.create(model=book, messages=question)  # type: ignore[arg-type]
        text = unset.choices[0].message.content or ""
        assert text.rstrip().endswith("`folio position BOOK --chapter 5`.)"), text
        assert text.count("No reading position is set") == 1
        httpx.put(f"{server.url}{V1}/books/{book}/position", json={"chapter": "5"}, timeout=30)
        set_ = client.chat.completions.create(model=book, messages=question)  # type: ignore[arg-type]
        assert "No reading position" not in (set_.choices[0].message.content or "")
