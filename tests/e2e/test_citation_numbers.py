"""One number per source in the terminal and through ``/v1`` (issue 39, item 3): an offline
answer with two quotes on one page (p. 21) numbers them [1] and [2] in the terminal, its Sources
line and ``folio read --cited`` agree, and an OpenAI client gets the same numbered Sources line,
streamed or not, in the order of ``folio.citations`` (before: one unnumbered "Chapter 2, p. 21", or
no line at all when the answer named its pages)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, run_folio_in

QUESTION = "What did Victor read as a boy?"  # at Chapter 5: its first two quotes are on p. 21


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = demo_book_home(tmp_path_factory, "citation-numbers")
    ok(run_folio_in(home, "position", "Frankenstein", "--chapter", "5"))
    return home


def test_the_terminal_numbers_each_source_once_and_reads_it_back(home: Path) -> None:
    out = ok(run_folio_in(home, "chat", "Frankenstein", "-m", QUESTION, "--new"))
    bullets = [line for line in out.splitlines() if line.startswith("- ")]
    marks = [re.findall(r"\[(\d+)\]$", line) for line in bullets]
    pages = [re.search(r"p\. (\d+)\) \[\d+\]$", line) for line in bullets]
    sources = re.search(r"^Sources: (.+)$", out, re.M)
    assert marks == [["1"], ["2"], ["3"]], out
    assert sources is not None and all(pages), out
    listed = re.findall(r"\[(\d+)\] [^;]*p\. (\d+)", sources.group(1))
    assert listed == [(str(n), p.group(1)) for n, p in enumerate(pages, 1) if p], out
    assert len({p.group(1) for p in pages if p}) < len(pages)  # two quotes on one page

    quote = re.search(r'^- "(.{30})', bullets[2]).group(1)  # type: ignore[union-attr]
    page = ok(run_folio_in(home, "read", "Frankenstein", "--cited", "3"))
    assert quote in " ".join(page.split())


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[FolioServer]:
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


def _ask(server: FolioServer, stream: bool) -> tuple[str, list[dict[str, Any]]]:
    body = {"model": "Frankenstein", "messages": [{"role": "user", "content": QUESTION}]}
    url = f"{server.url}/v1/chat/completions"
    if not stream:
        answer = httpx.post(url, json=body, timeout=60).json()
        return answer["choices"][0]["message"]["content"], answer["folio"]["citations"]
    text, citations = "", []
    with httpx.stream("POST", url, json={**body, "stream": True}, timeout=60) as r:
        for line in r.iter_lines():
            if line.startswith("data: {"):
                chunk = json.loads(line[6:])
                text += "".join(c["delta"].get("content") or "" for c in chunk["choices"])
                citations = chunk.get("folio", {}).get("citations", citations)
    return text, citations


@pytest.mark.parametrize("stream", [False, True])
def test_v1_ends_with_every_source_numbered_in_the_order_of_its_citations(
    server: FolioServer, stream: bool
) -> None:
    text, citations = _ask(server, stream)
    line = text.rsplit("\n", 1)[-1]
    expected = "; ".join(f"[{n}] {c['location']}" for n, c in enumerate(citations, 1))
    assert len(citations) == 3 and line == f"Sources: {expected}", text
    assert len({c["location"] for c in citations}) < len(citations)  # two on one page, both listed
