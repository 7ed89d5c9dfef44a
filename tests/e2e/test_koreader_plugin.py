"""The KOReader plugin (``clients/koreader/folio.koplugin``) under LuaJIT.

- Its busted specs (KOReader's UI modules stubbed in ``spec/stubs``: what each dialog would show
  is recorded and asserted as text) run under Debian's ``luajit``.
- Its own HTTP client (``folioclient.lua``) over LuaSocket's real ``http`` asks a real
  ``folio serve`` from an xpointer of a real EPUB, as the device does, and follows a citation's
  xpointer back: asked from that xpointer, folio places the reader exactly at the start of the
  cited passage (folio's own xpointer parsing, the inverse of the one that wrote it).

Both skip with the reason when ``luajit``, ``busted``, ``lua-socket`` or ``lua-cjson`` is missing
(``.ci/run`` installs them).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in
from tests.e2e.test_kosync import koreader_partial_md5

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "clients" / "koreader" / "folio.koplugin"
ASK_SCRIPT = Path(__file__).with_name("koreader_ask.lua")
LOGIN, PASSWORD = "reader", "a reading password"
# DocFragment[11] is Chapter 5 of this EPUB (title page, contents, Letters 1-4, Chapters 1-5),
# 20 characters into its fourth paragraph ("Oh! No mortal could| support the horror...").
CHAPTER_5 = "/body/DocFragment[11]/body/section/p[4]/text().20"


def _missing_lua() -> str | None:
    """Why the Lua side cannot run here, or None."""
    for tool in ("luajit", "busted"):
        if shutil.which(tool) is None:
            return f"needs {tool} (Debian: apt-get install luajit lua-busted)"
    probe = subprocess.run(
        ["luajit", "-e", "require('cjson'); require('socket.http'); require('ltn12')"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"needs lua-cjson and lua-socket for LuaJIT: {probe.stderr.strip()[:200]}"
    return None


@pytest.fixture(scope="module")
def lua() -> None:
    reason = _missing_lua()
    if reason:
        pytest.skip(reason)


def test_plugin_specs_pass_under_luajit(lua: None) -> None:
    run = subprocess.run(
        ["busted", "--lua=luajit", "--output=TAP"],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    passed = re.findall(r"^ok \d+", run.stdout, re.MULTILINE)
    assert not re.search(r"^not ok", run.stdout, re.MULTILINE)
    # the specs themselves: client, view, plugin (menus, dialogs, jumps, messages, settings)
    assert len(passed) >= 35, run.stdout


def _userkey(password: str) -> str:
    """kosync.koplugin's key: md5(password), as the plugin reads it from kosync's settings."""
    return hashlib.md5(password.encode(), usedforsecurity=False).hexdigest()


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, books_dir: Path, lua: None
) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("koplugin-home")
    epub = books_dir / "formats" / "frankenstein.epub"
    ok_json(run_folio_in(home, "add", str(epub), "--json"))
    ok(run_folio_in(home, "users", "sync-password", LOGIN, input=PASSWORD + "\n"))
    script = {
        "steps": [
            {"tool": "search_book", "arguments": {"query": "Clerval"}},
            "Henry Clerval is Victor's dearest friend from Geneva.",
        ]
    }
    with FolioServer(home, script=script) as server:
        yield {"server": server, "epub": epub}


def _ask(served: dict[str, Any], **env: str) -> dict[str, Any]:
    """Runs the plugin's client in LuaJIT against the server; its JSON output."""
    values = {
        "PLUGIN_DIR": str(PLUGIN),
        "FOLIO_URL": served["server"].url,
        "KO_USER": LOGIN,
        "KO_KEY": _userkey(PASSWORD),
        "KO_DOCUMENT": koreader_partial_md5(served["epub"]),
        "KO_PROGRESS": CHAPTER_5,
        "KO_PERCENTAGE": "0.2034",
        "KO_QUESTION": "Who is Clerval?",
        **env,
    }
    run = subprocess.run(
        ["luajit", str(ASK_SCRIPT)],
        env={**os.environ, **values},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out: dict[str, Any] = json.loads(run.stdout)
    return out


def test_the_plugin_asks_folio_and_a_citation_leads_back_to_its_passage(
    served: dict[str, Any],
) -> None:
    out = _ask(served)

    assert out["ok"] is True, out
    answer = out["answer"]
    assert "Clerval" in answer["answer"]
    assert answer["position"]["chapter"] == "Chapter 5"
    limit = answer["position"]["char_offset"]
    citations = answer["citations"]
    assert citations and all(c["char_start"] < limit for c in citations)  # nothing past Chapter 5
    assert all(c["xpointer"].startswith("/body/DocFragment[") for c in citations)

    # what the reader sees: folio's words for the place, the answer, the numbered sources
    screen = out["screen"]
    assert screen["title"] == f"Ask folio · {answer['book']['title']}"
    assert screen["text"].startswith(answer["position"]["description"] + "\n\nQ: Who is Clerval?")
    first = citations[0]
    assert f"\n[1] {first['chapter']}, p. {first['page']}\n" in screen["text"] + "\n"

    follow = out["follow"]
    assert follow["ok"] is True, follow
    cited = next(c for c in citations if c["n"] == follow["n"])
    landed = follow["result"]["position"]["char_offset"]
    url = served["server"].url
    text = httpx.get(
        f"{url}/api/v1/books/{answer['book']['id']}/text",
        params={"start": cited["char_start"], "end": cited["char_end"]},
        timeout=30,
    ).json()["text"]
    # Asked from the citation's xpointer, folio stands just past the passage's first character:
    # the reader who followed the citation is at the cited passage, not a paragraph away.
    skipped = len(text) - len(text.lstrip())
    assert landed == cited["char_start"] + skipped + 1
    # and the passage there is the one quoted
    quoted = " ".join(cited["quote"].replace("…", "").split()[:8])
    assert quoted in " ".join(text.split())


def test_the_plugin_client_reports_a_wrong_login_and_an_unknown_book(
    served: dict[str, Any],
) -> None:
    wrong = _ask(served, KO_KEY=_userkey("not the password"))
    unknown = _ask(served, KO_DOCUMENT="0" * 32)

    assert wrong["ok"] is False and wrong["error"]["kind"] == "auth"
    assert wrong["error"]["status"] == 401
    assert unknown["ok"] is False and unknown["error"]["kind"] == "not_found"
    assert unknown["error"]["code"] == "BOOK_NOT_FOUND"
