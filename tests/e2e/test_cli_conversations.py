"""``folio conversations`` through the real entry point (a subprocess), with FOLIO_HOME in a
temporary directory and the hashing embedder. The book is added with ``folio add``; turns are
written the way the chat turn writes them (through the SQLite unit of work) so that these tests do
not depend on a chat provider."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.domain.conversations import ChatMessage, Source, Turn
from folio.domain.llm import PromptRole, ToolInvocation
from tests.e2e.conftest import run_folio_in

BOOK = """Moby Test

Chapter 1. Loomings

Call me Ishmael. Some years ago, never mind how long precisely, I went to sea.

Chapter 2. The Whale

Captain Ahab hunted the white whale across every ocean of the world.
"""
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def folio(
    home: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_folio_in(home, *args, input=input, env={"COLUMNS": "200", **(env or {})})


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def write_turn(home: Path, cid: str, question: str, answer: str, query: str) -> None:
    """What the chat turn stores: user, assistant tool call, tool result, answer, Turn metadata."""
    store = SqliteConversationStore(Database(home / "folio.db"))
    with store.unit_of_work() as uow:
        n = uow.messages.last_turn_number(cid) + 1
        call = ToolInvocation("search_book", f"tu{n}", {"query": query})
        result = {"success": True, "data": {"query": query, "results": [{"pages": "1"}] * 2}}
        uow.messages.save_batch([
            ChatMessage.of(f"{cid}{n}0", cid, n, 0, PromptRole.USER, question, T0),
            ChatMessage.of(f"{cid}{n}1", cid, n, 1, PromptRole.ASSISTANT, "", T0,
                        tool_invocations=(call,)),
            ChatMessage.of(f"{cid}{n}2", cid, n, 2, PromptRole.TOOL_RESULT, json.dumps(result), T0,
                        tool_use_id=f"tu{n}", tool_name="search_book"),
            ChatMessage.of(f"{cid}{n}3", cid, n, 3, PromptRole.ASSISTANT, answer, T0),
        ])  # fmt: skip
        source = Source("c1", "Chapter 2. The Whale", "1", "1", 0, 10, "Captain Ahab", 0.9)
        uow.turns.save(Turn(cid, n, T0, queries=(query,), sources=(source,), provider="offline"))
        uow.commit()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("folio-home")
    book = home.parent / "moby-test.txt"
    book.write_text(BOOK, encoding="utf-8")
    ok(folio(home, "add", str(book), "--title", "Moby Test"))
    return home


@pytest.fixture
def conversation(home: Path) -> str:
    """A conversation with two turns; its id."""
    cid = ok(folio(home, "conversations", "new", "Moby Test", "--title", "Whales")).strip()
    write_turn(home, cid, "Who hunted the whale?", "Captain Ahab did (p. 1).", "who hunted whale")
    write_turn(home, cid, "Where?", "Across every ocean (p. 1).", "where Ahab hunted the whale")
    return cid


def listed(home: Path, *args: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(ok(folio(home, "conversations", *args, "--json")))
    return data


def test_new_prints_the_id_and_list_shows_it_as_a_table_and_as_json(
    home: Path, conversation: str
) -> None:
    table = ok(folio(home, "conversations"))
    row = next(line for line in table.splitlines() if conversation[:8] in line)
    assert "Moby Test" in row and "Whales" in row and " 2 " in row
    assert "last activity" in table

    entry = next(e for e in listed(home) if e["conversation_id"] == conversation)
    assert (entry["title"], entry["turns"], entry["book_title"]) == ("Whales", 2, "Moby Test")
    assert conversation in {e["conversation_id"] for e in listed(home, "Moby Test")}
    assert conversation in {e["conversation_id"] for e in listed(home, "list", "Moby")}

    usage = ok(folio(home, "conversations", "--help"))  # help is not taken for a BOOK
    assert "folio conversations [BOOK]" in usage and "export" in usage


def test_new_with_json_prints_the_conversation_id(home: Path) -> None:
    data = json.loads(ok(folio(home, "conversations", "new", "Moby", "--json")))
    assert data["title"] == "New conversation" and len(data["conversation_id"]) == 32


def test_show_prints_questions_and_answers_and_tool_calls_only_when_verbose(
    home: Path, conversation: str
) -> None:
    plain = ok(folio(home, "conversations", "show", conversation[:8]))
    assert "Whales" in plain
    assert "You: Who hunted the whale?" in plain and "folio: Captain Ahab did (p. 1) [1]." in plain
    assert "Sources: [1] Chapter 2. The Whale, p. 1" in plain  # numbered, as in the chat
    assert "search_book" not in plain

    verbose = ok(folio(home, "conversations", "show", conversation, "--verbose"))
    assert '→ search_book {"query": "who hunted whale"}' in verbose
    assert "← search_book 2 results" in verbose

    data = json.loads(ok(folio(home, "conversations", "show", conversation, "--json")))
    assert [m["role"] for m in data["messages"]][:4] == ["user", "assistant", "tool_result",
                                                         "assistant"]  # fmt: skip


def test_rename_changes_the_title_and_an_empty_title_is_refused(
    home: Path, conversation: str
) -> None:
    ok(folio(home, "conversations", "rename", conversation[:10], "The white whale"))
    assert "The white whale" in ok(folio(home, "conversations", "show", conversation))

    empty = folio(home, "conversations", "rename", conversation, "   ")
    assert empty.returncode == 1
    assert empty.stderr.strip() == "Error: A conversation title cannot be empty"


def test_export_markdown_and_json_then_import_gives_the_same_conversation(
    home: Path, conversation: str, tmp_path: Path
) -> None:
    md = ok(folio(home, "conversations", "export", conversation))
    assert md.startswith("# Whales\n")
    assert "Who hunted the whale?" in md and "Captain Ahab did (p. 1)." in md
    assert "Sources: Chapter 2. The Whale, p. 1" in md and "search_book" not in md

    exported = tmp_path / "c.json"
    ok(
        folio(
            home, "conversations", "export", conversation, "--format", "json", "-o", str(exported)
        )
    )
    new_id = ok(folio(home, "conversations", "import", str(exported))).strip()
    assert new_id != conversation
    again = json.loads(ok(folio(home, "conversations", "export", new_id, "--json")))
    first = json.loads(exported.read_text())
    for data in (first, again):
        del data["conversation"]["id"]
        for m in data["messages"]:
            del m["id"]
    assert again == first

    as_json = json.loads(ok(folio(home, "conversations", "import", str(exported), "--json")))
    assert as_json["conversation_id"] not in {conversation, new_id}


def test_a_malformed_import_file_is_refused_with_one_clear_line(
    home: Path, conversation: str, tmp_path: Path
) -> None:
    before = len(listed(home))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "folio.conversation", "version": 1, "messages": []}))
    result = folio(home, "conversations", "import", str(bad))
    assert result.returncode == 1
    assert result.stderr.startswith("Error: Not a valid folio conversation export: book: Field")
    assert len(result.stderr.strip().splitlines()) == 1

    bad.write_text("{not json")
    result = folio(home, "conversations", "import", str(bad))
    assert result.returncode == 1 and "is not a JSON file" in result.stderr
    assert len(listed(home)) == before


def test_rm_deletes_after_confirmation_only(home: Path, conversation: str) -> None:
    kept = folio(home, "conversations", "rm", conversation, input="n\n")
    assert kept.returncode == 0 and "Nothing deleted" in kept.stdout
    assert conversation in {e["conversation_id"] for e in listed(home)}

    ok(folio(home, "conversations", "rm", conversation[:9], "--yes"))
    assert conversation not in {e["conversation_id"] for e in listed(home)}


@pytest.mark.parametrize(
    "args",
    [("show", "0000dead"), ("rename", "0000dead", "T"), ("rm", "0000dead", "--yes"),
     ("export", "0000dead"), ("new", "No Such Book")],
)  # fmt: skip
def test_an_unknown_id_exits_3_with_one_line(home: Path, args: tuple[str, ...]) -> None:
    result = folio(home, "conversations", *args)
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr


def test_imports_are_bounded_in_size_nesting_and_messages_naming_each_bound(
    home: Path, conversation: str, tmp_path: Path
) -> None:
    exported = tmp_path / "c.json"
    ok(
        folio(
            home, "conversations", "export", conversation, "--format", "json", "-o", str(exported)
        )
    )
    before = len(listed(home, "list"))

    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    deep = folio(home, "conversations", "import", str(nested))
    big = folio(
        home, "conversations", "import", str(exported), env={"FOLIO_MAX_IMPORT_MB": "0.001"}
    )
    data = json.loads(exported.read_text())
    data["messages"] = data["messages"] * 2  # 12 messages > 10
    doubled = tmp_path / "doubled.json"
    doubled.write_text(json.dumps(data))
    many = folio(
        home, "conversations", "import", str(doubled), env={"FOLIO_MAX_IMPORT_MESSAGES": "10"}
    )
    for result, words in ((deep, "nested too deeply"), (big, "at most 0.001 MB"),
                          (many, "at most 10 messages")):  # fmt: skip
        assert result.returncode != 0 and words in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert len(listed(home, "list")) == before


def test_search_finds_questions_and_answers_across_conversations(home: Path) -> None:
    first = ok(folio(home, "conversations", "new", "Moby", "--title", "Oceans")).strip()
    write_turn(home, first, "Where did Ahab sail?", "Across every OCEAN of the world (p. 1).", "q")
    second = ok(folio(home, "conversations", "new", "Moby", "--title", "Ishmael")).strip()
    write_turn(home, second, "Who tells the story?", "Ishmael, who went to sea (p. 1).", "q")
    write_turn(home, second, "And the ocean?", "He crossed it (p. 1).", "q")

    found = listed(home, "search", "ocean")
    hits = {(m["conversation_id"], m["turn_number"], m["role"]) for m in found}
    assert {(first, 1, "assistant"), (second, 2, "user")} <= hits
    assert all(m["role"] in ("user", "assistant") for m in found)  # never a tool result
    assert found[0]["conversation_id"] == second  # the newest conversation first
    assert listed(home, "search", "cean") == []  # words match from their start
    answer = next(m for m in found if m["conversation_id"] == first)
    start, end = answer["spans"][0]
    assert answer["snippet"][start:end] == "OCEAN"  # case-insensitive, the text as written

    both = listed(home, "search", "OCEAN", "world")  # every word must be there
    assert {m["conversation_id"] for m in both} == {first}
    assert listed(home, "search", "ocean", "--limit", "1") == found[:1]

    shown = ok(folio(home, "conversations", "search", "ocean"))
    assert "Oceans" in shown and "Ishmael" in shown and first[:8] in shown
    assert "turn 1, folio:" in shown and "turn 2, you: And the ocean?" in shown
    nothing = folio(home, "conversations", "search", "zeppelin")
    assert nothing.returncode == 0 and "No question or answer contains 'zeppelin'" in nothing.stdout
    too_long = folio(home, "conversations", "search", "x" * 201)
    assert too_long.returncode == 1 and "at most 200 characters" in too_long.stderr
    assert "Traceback" not in too_long.stderr
