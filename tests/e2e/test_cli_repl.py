"""The ``folio chat`` REPL through the real entry point: in a pseudo-terminal (pexpect) for the
interactive prompt, the slash commands, quitting, Ctrl-D, Ctrl-C and the conversation picker; and
with piped stdin as a scripted session. Hashing embeddings, offline provider."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.e2e.conftest import (
    RunFolio,
    copy_home,
    folio_env,
    ok,
    ok_json,
    run_folio_in,
    runner,
    terminals,
)

TIMEOUT_S = 90


@pytest.fixture(scope="module")
def frankenstein_home(bundled_book: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("repl")
    ok(run_folio_in(home, "add", str(bundled_book)))
    return home


@pytest.fixture
def folio(frankenstein_home: Path, tmp_path: Path) -> RunFolio:
    return runner(copy_home(frankenstein_home, tmp_path / "home"))


@pytest.fixture
def spawn(folio: RunFolio) -> Iterator[Any]:
    """``spawn(*args)``: folio in a pseudo-terminal; every child is closed after the test."""
    with terminals(folio, columns=160, timeout=TIMEOUT_S) as start:
        yield start


def conversations(run: RunFolio) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = ok_json(run("conversations", "--json"))
    return data


def exit_status(child: pexpect.spawn) -> int | None:
    child.expect(pexpect.EOF)
    child.close()
    status: int | None = child.exitstatus
    return status


def test_a_session_answers_with_pages_and_runs_the_slash_commands(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect("Type /help for commands")
    child.expect("you>")
    child.sendline("Who is Henry Clerval?")
    child.expect(r"Sources: \[1\] Chapter \d+, pp?\. \d+")
    child.expect(r"/read N opens source \[N\]")
    child.expect("you>")

    child.sendline("/help")
    child.expect("/rename TITLE")
    child.sendline("/rename My title")
    child.expect("Renamed to “My title”")
    child.sendline("/history")
    child.expect("Offline mode")
    child.sendline("/position")
    child.expect(r"Prometheus: read the whole book")
    child.expect(r"change it with: /position --chapter 'Chapter 5'")
    child.sendline("/foo")
    child.expect(r"Unknown command /foo\. /help lists them\.")
    child.sendline("quit")
    child.expect(r"Saved\. Resume with: folio chat \w{8} --conversation (\w{8})")
    short_id = child.match.group(1)
    assert exit_status(child) == 0

    [entry] = conversations(folio)
    assert entry["conversation_id"].startswith(short_id)
    assert (entry["title"], entry["turns"]) == ("My title", 1)


def test_ctrl_c_at_the_prompt_keeps_the_session_and_ctrl_d_leaves_it(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect("you>")
    child.sendintr()
    child.sendline("/position")  # still answering after Ctrl-C
    child.expect("read the whole book")
    child.sendline("Who is Elizabeth?")
    child.expect("Sources: ")
    child.expect("you>")
    child.sendeof()
    child.expect("Resume with: folio chat")
    assert exit_status(child) == 0
    assert [c["turns"] for c in conversations(folio)] == [1]


def test_leaving_without_a_question_keeps_no_empty_conversation(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect("you>")
    child.sendline("exit")
    child.expect("Nothing was asked; no conversation was kept")
    assert exit_status(child) == 0
    assert conversations(folio) == []


def test_the_picker_lists_conversations_and_resuming_one_continues_it(
    spawn: Any, folio: RunFolio
) -> None:
    first = ok_json(folio("chat", "Frankenstein", "-m", "Who is Victor's friend from Geneva?",
                          "--json"))  # fmt: skip
    cid = first["conversation_id"]

    child = spawn("chat", "Frankenstein")
    child.expect("Who is Victor's friend from Geneva")  # the title, in the picker's table
    child.expect(r"Resume which one\?")
    child.sendline("7")
    child.expect("Type a row number from 1 to 1")
    child.sendline("1")
    child.expect("you>")
    child.sendline("What happens to him?")
    child.expect("Sources: ")
    child.expect("you>")
    child.sendline("quit")
    child.expect(f"--conversation {cid[:8]}")
    assert exit_status(child) == 0

    [entry] = conversations(folio)
    assert (entry["conversation_id"], entry["turns"]) == (cid, 2)
    export = ok_json(folio("conversations", "export", cid, "--format", "json"))
    assert re.search(
        r"\b(?:Henry|Clerval)\b|friend from Geneva", export["turns"][1]["queries"][0]
    )  # saw turn 1


def test_the_picker_starts_a_new_conversation_on_enter(spawn: Any, folio: RunFolio) -> None:
    ok(folio("chat", "Frankenstein", "-m", "Who is Justine?"))
    child = spawn("chat", "Frankenstein")
    child.expect(r"Resume which one\?")
    child.sendline("")
    child.expect("you>")
    child.sendline("Who is Walton?")
    child.expect("Sources: ")
    child.sendline("quit")
    assert exit_status(child) == 0
    assert sorted(c["title"] for c in conversations(folio)) == ["Who is Justine?", "Who is Walton?"]


def test_piped_lines_run_as_a_scripted_session(folio: RunFolio) -> None:
    script = (
        "Who is Henry Clerval?\n\n/rename Piped [/b] session\nthanks!\n/history\nquit\nignored\n"
    )
    result = folio("chat", "Frankenstein", input=script)
    out = ok(result)
    assert "you> Who is Henry Clerval?" in out and "Sources: " in out
    assert "Renamed to “Piped [/b] session”." in out
    assert "You're welcome" in out or "welcome" in out.lower()
    assert "you> ignored" not in out  # nothing is read after quit
    assert "Resume with: folio chat" in out

    [entry] = conversations(folio)
    assert (entry["title"], entry["turns"]) == ("Piped [/b] session", 2)


def test_an_empty_piped_session_ends_cleanly_and_keeps_nothing(folio: RunFolio) -> None:
    out = ok(folio("chat", "Frankenstein", input=""))
    assert "Nothing was asked; no conversation was kept." in out
    assert conversations(folio) == []


def make_conversations(home: Path, titles: list[str]) -> list[str]:
    """Conversations about the (only) book with these titles, oldest first, made in-process: the
    setup of a picker test, not what is under test."""
    from folio.bootstrap import Container
    from folio.config import load_settings

    container = Container(load_settings(env=folio_env(home)))
    [book] = container.library.list_books()
    return [str(container.conversations.create(book.id, title=t).id) for t in titles]


def test_the_picker_pages_and_takes_ids_and_title_words_never_a_row_for_an_id(
    spawn: Any, folio: RunFolio
) -> None:
    titles = [f"Talk {n:02d}" for n in range(13)] + ["The monster's creation"]
    ids = make_conversations(folio.home, titles)
    child = spawn("chat", "Frankenstein")
    child.expect(r"Conversations about Frankenstein.*\(14\)")
    child.expect("4 older not shown")
    child.expect(r"Resume which one\?.*m for more")
    child.sendline("m")
    child.expect("Talk 00")  # the oldest, on the second page
    child.expect(r"Resume which one\?")
    child.sendline("monster creation")  # words of a title
    child.expect("you>")
    child.sendline("quit")
    child.expect(f"--conversation {ids[-1][:8]}")
    exit_status(child)

    child = spawn("chat", "Frankenstein")
    child.expect(r"Resume which one\?")
    child.sendline("Talk")
    child.expect(r"13 conversations match; rows 2, 3, ")
    child.sendline(ids[3][:6])  # an id prefix
    child.expect("you>")
    child.sendline("quit")
    child.expect(f"--conversation {ids[3][:8]}")
    exit_status(child)


def test_position_inside_the_repl_moves_the_bookmark_and_the_prompt(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new")
    child.expect(r"Frankenstein · whole book · you>")
    child.sendline("/position 12")
    child.expect(r"/position --chapter 12, /position --page 12")
    child.sendline("/position --chapter 3")
    child.expect(r"Prometheus: read through Chapter")  # the number may be styled
    child.expect(r"Frankenstein · Chapter 3 · you>")
    child.sendline("/position --page 99999")
    child.expect("Error: ")
    child.sendline("/position --chapter 1 --page 2")
    child.expect("give one of --page")
    child.sendline("quit")
    assert exit_status(child) == 0
    shown = ok_json(folio("position", "Frankenstein", "--json"))
    assert "3" in json_text(shown)


def test_next_and_read_inside_the_repl_move_through_the_book_and_open_sources(
    spawn: Any, folio: RunFolio
) -> None:
    ok(folio("position", "Frankenstein", "--chapter", "Letter 4"))
    child = spawn("chat", "Frankenstein", "--new")
    child.expect(r"Frankenstein · Letter 4 · you>")
    child.sendline("/next")
    child.expect(r"Prometheus: read through Chapter")  # the number may be styled
    child.expect(r"Frankenstein · Chapter 1 · you>")
    child.sendline("/read 1")
    child.expect("The last answer has no sources; there is no source 1")
    child.sendline("Who was Caroline Beaufort?")  # Chapter 1: an answer that quotes the book
    child.expect(r"Sources: \[1\] ([^;\r\n]+)")
    place = child.match.group(1).strip()
    page = re.findall(r"pp?\. (\d+)", place)[0]
    child.expect("you>")
    child.sendline("/read 1")  # the page of source [1], in the pager ($PAGER here: cat)
    child.expect(re.escape(f"Frankenstein; or, the Modern Prometheus — {place} · source [1]"))
    child.expect("you>")
    child.sendline(f"/read p. {page}")
    child.expect(f"— [^\\n]*p\\. {page}")
    child.expect("you>")
    child.sendline("/read chapter 2")  # past the position: one error line, the REPL goes on
    child.expect("Error: This part of the book is past your reading position")
    child.sendline("/read Letter 2")
    child.expect("Archangel")
    child.sendline("quit")
    assert exit_status(child) == 0


def test_history_is_rendered_markdown_in_a_pager_when_longer_than_the_screen(
    spawn: Any, folio: RunFolio
) -> None:
    child = spawn("chat", "Frankenstein", "--new", pager="sed s/^/paged:/", dimensions=(20, 100))
    child.expect("you>")
    for question in ("Who is Henry Clerval?", "Who is Elizabeth?"):
        child.sendline(question)
        child.expect(r"Sources: \[1\]")
        child.expect("you>")
    child.sendline("/history")  # two turns: taller than 20 rows
    child.expect(r"paged:You: Who is Henry Clerval\?")
    child.expect(r"paged:\s*• ")  # the answer's Markdown list, rendered
    child.expect(r"paged:\s*Sources: \[1\] ")
    child.expect("you>")
    child.sendline("/position")  # short output is printed as it is
    child.expect(r"\n(?!paged:)[^\n]*Prometheus: read the whole book")
    child.sendline("quit")
    assert exit_status(child) == 0


def json_text(value: Any) -> str:
    import json

    return json.dumps(value)


# --- how far the reader is, asked at import ------------------------------------------------------
def _three_chapters(tmp_path: Path) -> Path:
    path = tmp_path / "lighthouse.md"
    chapters = [  # a different file each time (the library refuses a file it already holds)
        f"<!-- {tmp_path.name} -->\n\n"
    ] + [
        f"# Chapter {n}\n\n"
        + f"The keeper climbed the stair for the {n} time and lit the lamp. " * 40
        for n in range(1, 4)
    ]
    path.write_text("\n\n".join(chapters), encoding="utf-8")
    return path


def test_an_interactive_add_asks_how_far_the_reader_is(
    spawn: Any, folio: RunFolio, tmp_path: Path
) -> None:
    child = spawn("add", str(_three_chapters(tmp_path)))
    child.expect("How far have you read")
    child.sendline("Chapter 9")  # no such chapter: said, and asked again
    child.expect("has no chapter 'Chapter 9'")
    child.expect("How far have you read")
    child.sendline("2")
    child.expect(r"you have read through Chapter 2 \(p\. \d+ of \d+, \d+%\)")
    child.expect(pexpect.EOF)
    [book] = [b for b in ok_json(folio("books", "--json")) if b["source_name"] == "lighthouse.md"]
    assert book["reading_position"]["chapter"] == "Chapter 2"


def test_a_script_sets_the_position_at_import_or_gets_the_whole_book(
    folio: RunFolio, tmp_path: Path
) -> None:
    path = _three_chapters(tmp_path)
    added = ok_json(folio("add", str(path), "--position", "p. 2", "--json"))
    assert added["book"]["reading_position"]["description"].startswith("through p. 2 of ")
    ok(folio("rm", added["book"]["id"], "--yes"))
    out = ok(folio("add", str(path)))  # no terminal, no option: the whole book, and said so
    assert "you have read the whole book" in out
    (tmp_path / "again").mkdir()
    bad = folio("add", str(_three_chapters(tmp_path / "again")), "--position", "Chapter 7")
    assert bad.returncode == 1 and "has no chapter 'Chapter 7'" in bad.stderr
    assert "Traceback" not in bad.stderr
