"""``folio chat --message`` (one-shot turns) through the real entry point with the offline provider:
follow-ups searched with the name they refer to, small talk, the reading position, resuming in a new
process, and errors that store nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import (
    RunFolio,
    copy_home,
    ok,
    ok_json,
    one_error_line,
    run_folio_in,
    runner,
)

TURN_KEYS = {"conversation_id", "turn_number", "answer", "citations", "searches", "llm_calls",
             "provider", "model"}  # fmt: skip
CITATION_KEYS = {"chapter", "page_start", "page_end", "quote"}
FRIEND = "Who is Victor's friend from Geneva?"
FOLLOW_UP = "What happens to him?"
# The friend (Henry Clerval) by either of his names: which sentence the offline answer quotes first,
# and so which name a follow-up's "him" resolves to, follows the book's sentence boundaries.
FRIEND_NAMES = r"\b(?:Henry|Clerval)\b"
# A follow-up is searched with the reader's earlier question (or a model's rewrite naming him).
FRIEND_SEARCHED = r"\b(?:Henry|Clerval)\b|friend from Geneva"


@pytest.fixture(scope="module")
def frankenstein_home(bundled_book: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Frankenstein imported once with hashing embeddings."""
    home = tmp_path_factory.mktemp("frankenstein")
    ok(run_folio_in(home, "add", str(bundled_book)))
    return home


@pytest.fixture
def folio(frankenstein_home: Path, tmp_path: Path) -> RunFolio:
    """A private copy of the Frankenstein home."""
    return runner(copy_home(frankenstein_home, tmp_path / "home"))


def ask(run: RunFolio, message: str, *args: str) -> dict[str, Any]:
    turn: dict[str, Any] = ok_json(
        run("chat", "Frankenstein", "--message", message, "--json", *args)
    )
    return turn


def export(run: RunFolio, conversation_id: str) -> dict[str, Any]:
    data: dict[str, Any] = ok_json(
        run("conversations", "export", conversation_id, "--format", "json")
    )
    return data


def conversations(run: RunFolio) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = ok_json(run("conversations", "--json"))
    return data


def flat(text: str) -> str:
    return " ".join(text.split())


def assert_turn_shape(turn: dict[str, Any]) -> None:
    assert set(turn) >= TURN_KEYS
    assert turn["provider"] == "offline" and turn["model"]
    assert all(set(c) >= CITATION_KEYS for c in turn["citations"])


@pytest.mark.slow
def test_a_follow_up_is_searched_with_the_friend_it_refers_to(real_frankenstein: RunFolio) -> None:
    first = ask(real_frankenstein, FRIEND)
    assert_turn_shape(first)
    assert first["turn_number"] == 1 and first["searches"] and first["citations"]

    cid = first["conversation_id"]
    second = ask(real_frankenstein, FOLLOW_UP, "--conversation", cid)
    assert_turn_shape(second)
    assert (second["conversation_id"], second["turn_number"]) == (cid, 2)
    # offline, a follow-up is searched with the reader's earlier question (issue 25's policy)
    assert FOLLOW_UP in second["searches"][0] and FRIEND in second["searches"][0]
    assert all(c["page_start"] and c["chapter"] for c in second["citations"])

    shown = flat(ok(real_frankenstein("conversations", "show", cid, "--verbose")))
    assert flat(second["searches"][0]) in shown and FOLLOW_UP in shown


def test_small_talk_takes_no_model_call_and_no_search(folio: RunFolio) -> None:
    first = ask(folio, FRIEND)
    thanks = ask(folio, "thanks!", "--conversation", first["conversation_id"])
    assert (thanks["llm_calls"], thanks["searches"], thanks["citations"]) == (0, [], [])
    assert thanks["turn_number"] == 2 and thanks["answer"]
    assert first["llm_calls"] == 0 and len(first["searches"]) == 1


def test_a_one_shot_turn_prints_the_answer_its_pages_and_the_conversation_id(
    folio: RunFolio,
) -> None:
    result = folio("chat", "Frankenstein", "-m", "Who is Henry Clerval?")
    out = ok(result)
    assert "Clerval" in out and "Offline mode" in out
    assert "Sources: " in out and re.search(r", pp?\. \d", out)
    found = re.search(r"^conversation: (\S+)$", result.stderr, re.M)
    assert found is not None
    cid = found.group(1)
    assert "continue it with: folio chat " in result.stderr and " -c -m " in result.stderr
    assert f"--conversation {cid[:8]}" in result.stderr
    assert [c["conversation_id"] for c in conversations(folio)] == [cid]
    assert conversations(folio)[0]["title"] == "Who is Henry Clerval?"


def test_continue_takes_up_the_books_most_recent_conversation(folio: RunFolio) -> None:
    alone = folio("chat", "Frankenstein", "-c", "-m", "Who is Henry Clerval?")
    assert "No conversation about Frankenstein" in ok(alone) + alone.stderr  # none yet: a new one
    older = ask(folio, "Who is Justine?")
    latest = ask(folio, FRIEND)
    follow = ask(folio, FOLLOW_UP, "--continue")
    assert (follow["conversation_id"], follow["turn_number"]) == (latest["conversation_id"], 2)
    assert re.search(FRIEND_SEARCHED, follow["searches"][0])  # it saw the first turn
    again = folio("chat", "Frankenstein", "-c", "-m", "And then?")
    ok(again)
    assert re.search(rf"^conversation: {latest['conversation_id']}$", again.stderr, re.M)
    turns = {c["conversation_id"]: c["turns"] for c in conversations(folio)}
    assert turns[latest["conversation_id"]] == 3 and turns[older["conversation_id"]] == 1
    assert len(turns) == 3


def test_continue_excludes_new_and_an_explicit_conversation(folio: RunFolio) -> None:
    result = folio("chat", "Frankenstein", "-c", "--new", "-m", "Hi")
    assert result.returncode == 2 and "give one of -c/--continue" in result.stderr
    assert conversations(folio) == []


def stored_offsets(data: dict[str, Any]) -> list[int]:
    """The end offsets of every passage a conversation's turns used or were shown by a tool."""
    import json

    ends = [s["char_end"] for t in data["turns"] for s in t["sources"]]
    for m in data["messages"]:
        if m["role"] == "tool_result":
            results = json.loads(m["content"]).get("data", {}).get("results", [])
            ends += [r["char_end"] for r in results]
    return ends


def test_answers_never_use_text_past_the_reading_position(folio: RunFolio) -> None:
    question = "How is Clerval murdered and where is his body found?"
    unlimited = export(folio, ask(folio, question)["conversation_id"])
    chapters = ok_json(folio("show", "Frankenstein", "--json"))["chapters"]
    chapter1 = ("position", "Frankenstein", "--chapter", "Chapter 1", "--json")
    limit = ok_json(folio(*chapter1))["char_offset"]
    chapter2 = next(c for c in chapters if c["title"].startswith("Chapter 2"))
    assert limit == chapter2["char_start"]
    assert max(stored_offsets(unlimited)) > limit  # without a limit the answer reaches past it

    turn = ask(folio, question)
    limited = export(folio, turn["conversation_id"])
    ends = stored_offsets(limited)
    assert ends and max(ends) <= limit
    last_page = int(chapter2["page"])
    assert all(int(c["page_end"]) <= last_page for c in turn["citations"])
    assert all(int(s["page_end"]) <= last_page for s in limited["turns"][0]["sources"])


def test_a_new_process_resumes_the_conversation_with_its_history(folio: RunFolio) -> None:
    first = ask(folio, FRIEND)
    cid = first["conversation_id"]
    second = ask(folio, FOLLOW_UP, "--conversation", cid[:8])  # another process, an id prefix
    assert (second["conversation_id"], second["turn_number"]) == (cid, 2)
    assert re.search(FRIEND_SEARCHED, second["searches"][0])  # the earlier turn, read from storage

    data = export(folio, cid)
    assert [t["turn_number"] for t in data["turns"]] == [1, 2]
    for turn in data["turns"]:
        assert turn["provider"] == "offline" and turn["model"] == second["model"]
        assert turn["llm_calls"] == 0 and turn["latency_ms"] > 0  # offline: no model
        assert turn["queries"] and turn["sources"]
    questions = [m["content"] for m in data["messages"] if m["role"] == "user"]
    assert questions == [FRIEND, FOLLOW_UP]
    assert conversations(folio)[0]["turns"] == 2
    shown = flat(ok(folio("conversations", "show", cid, "--verbose")))
    assert flat(second["searches"][0]) in shown  # the self-contained query, as searched


def test_an_unknown_conversation_exits_3_with_one_line(folio: RunFolio) -> None:
    result = folio("chat", "Frankenstein", "--conversation", "0000dead", "-m", "Hello?")
    assert result.returncode == 3
    assert one_error_line(result) == "Error: No conversation '0000dead'"
    assert conversations(folio) == []


def test_anthropic_without_a_key_names_the_variable_exits_4_and_stores_nothing(
    folio: RunFolio,
) -> None:
    cid = ok(folio("conversations", "new", "Frankenstein")).strip()
    result = folio(
        "chat", "Frankenstein", "--conversation", cid, "--provider", "anthropic", "-m", FRIEND
    )
    assert result.returncode == 4
    assert "ANTHROPIC_API_KEY" in one_error_line(result)
    assert [(c["conversation_id"], c["turns"]) for c in conversations(folio)] == [(cid, 0)]

    fresh = folio("chat", "Frankenstein", "--provider", "anthropic", "-m", FRIEND, "--json")
    assert fresh.returncode == 4 and fresh.stdout == ""
    assert len(conversations(folio)) == 1  # no empty conversation left behind


@pytest.mark.parametrize("message", ["", "   "])
def test_an_empty_message_is_refused_and_leaves_nothing(folio: RunFolio, message: str) -> None:
    result = folio("chat", "Frankenstein", "-m", message)
    assert result.returncode == 1
    assert one_error_line(result) == "Error: A message cannot be empty"
    assert conversations(folio) == []


def test_json_without_a_message_and_a_conversation_of_another_book_are_refused(
    folio: RunFolio, tmp_path: Path
) -> None:
    usage = folio("chat", "Frankenstein", "--json")
    assert usage.returncode == 2 and "--json needs --message" in usage.stderr

    other = tmp_path / "other.txt"
    other.write_text("Another Book\n\nChapter 1\n\n" + "Nothing happens here. " * 300)
    ok(folio("add", str(other), "--title", "Another Book"))
    cid = ok(folio("conversations", "new", "Another Book")).strip()
    wrong = folio("chat", "Frankenstein", "--conversation", cid, "-m", FRIEND)
    assert wrong.returncode == 2 and "is about another book" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_a_provider_failing_mid_turn_exits_4_and_stores_nothing(folio: RunFolio) -> None:
    refused = {"OLLAMA_HOST": "http://127.0.0.1:9"}  # nothing listens there: connection refused
    cid = ok(folio("conversations", "new", "Frankenstein")).strip()
    result = folio(
        "chat", "Frankenstein", "--conversation", cid, "-p", "ollama", "-m", FRIEND, env=refused
    )
    assert result.returncode == 4 and "Ollama" in one_error_line(result)
    fresh = folio("chat", "Frankenstein", "-p", "ollama", "-m", FRIEND, env=refused)
    assert fresh.returncode == 4
    assert [(c["conversation_id"], c["turns"]) for c in conversations(folio)] == [(cid, 0)]


class _BrokenCompletions:
    """An OpenAI-compatible server on a loopback port whose every answer is broken one way."""

    def __init__(self, body: bytes, content_type: str) -> None:
        import http.server
        import threading

        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(200)
                self.send_header("content-type", outer.content_type)
                self.send_header("content-length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.body, self.content_type = body, content_type
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _chunk(text: str, finish: str | None = None) -> str:
    import json

    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return "data: " + json.dumps({**body, "choices": [choice]}) + "\n\n"


BROKEN_SERVERS = {
    "cut stream": (_chunk("Clerval is").encode(), "text/event-stream"),
    "stream of invalid JSON": (
        (_chunk("Clerval is") + "data: {oops\n\ndata: [DONE]\n\n").encode(),
        "text/event-stream",
    ),
    "stream without choices": (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}'
        b"\n\ndata: [DONE]\n\n",
        "text/event-stream",
    ),
    "invalid JSON body": (b"{oops", "application/json"),
}


@pytest.mark.parametrize("case", list(BROKEN_SERVERS))
def test_a_broken_model_server_fails_the_turn_with_exit_4_and_stores_nothing(
    folio: RunFolio, case: str
) -> None:
    server = _BrokenCompletions(*BROKEN_SERVERS[case])
    try:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "x", "FOLIO_LLM_RETRIES": "0"}
        result = folio("chat", "Frankenstein", "-p", "openai", "-m", FRIEND, env=env)
    finally:
        server.close()
    assert result.returncode == 4, (result.stdout, result.stderr)
    assert "cannot read" in one_error_line(result)
    assert "bug in folio" not in result.stderr and "Traceback" not in result.stderr
    assert "Clerval is" not in result.stdout
    assert all(c["turns"] == 0 for c in conversations(folio))
