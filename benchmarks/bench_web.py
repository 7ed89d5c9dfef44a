"""The web page in a real headless Chromium against a real ``folio serve`` (one worker, scripted
provider: a search then an answer, hashing embedder, the bundled Frankenstein), on loopback.

Printed (medians over ``--runs``):

- the page's static assets: files and bytes (what a browser downloads once; no CDN);
- ``load``: a fresh browser context opening ``/`` until the library's first card is drawn;
- ``book``: opening a book until its chapters and conversations are drawn;
- ``turn``: Enter in the composer until the answer's citation chips are drawn, against the same
  scripted turn over plain HTTP (httpx, streamed): the difference is what the page adds, and the
  ratio.

    .venv/bin/python benchmarks/bench_web.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

from folio.entrypoints.api.app import WEB_STATIC

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def ms(seconds: list[float]) -> float:
    return round(1000 * statistics.median(seconds), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from folio.entrypoints.cli.demo import bundled_book

    files = [
        p
        for p in WEB_STATIC.rglob("*")
        if p.is_file() and p.suffix in {".js", ".mjs", ".css", ".html"}
    ]
    size = sum(p.stat().st_size for p in files)
    print(f"static assets: {len(files)} files, {size / 1024:.0f} KiB (uncompressed)")

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        ok_json(run_folio_in(home, "add", str(bundled_book()), "--json"))
        with FolioServer(home, script=DEFAULT_SCRIPT) as server, sync_playwright() as p:
            api = httpx.Client(base_url=server.url + "/api/v1", timeout=60)
            book = api.get("/books").json()[0]["id"]
            browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
            load, opened, page_turns, http_turns = [], [], [], []
            for _ in range(args.runs):
                context = browser.new_context()
                page = context.new_page()
                t = time.perf_counter()
                page.goto(server.url + "/")
                page.wait_for_selector(".book-card")
                load.append(time.perf_counter() - t)
                t = time.perf_counter()
                page.click(".book-card a.title")
                page.wait_for_selector(".chapters li")
                page.wait_for_selector(".conversations li")
                opened.append(time.perf_counter() - t)
                for _turn in range(3):
                    before = page.locator(".message.assistant .chips").count()
                    page.fill("#message", "Who is Clerval?")
                    t = time.perf_counter()
                    page.keyboard.press("Enter")
                    page.locator(".message.assistant .chips").nth(before).wait_for()
                    page_turns.append(time.perf_counter() - t)
                context.close()

                conversation = api.post("/conversations", json={"book_id": book}).json()
                url = f"/conversations/{conversation['conversation_id']}/messages"
                for _turn in range(3):
                    t = time.perf_counter()
                    body = {"message": "Who is Clerval?", "stream": True}
                    with api.stream("POST", url, json=body) as r:
                        for _line in r.iter_lines():
                            pass
                    http_turns.append(time.perf_counter() - t)
            browser.close()
            api.close()

    print(f"load (fresh context, / to first card): median {ms(load)} ms")
    print(f"book (chapters and conversations drawn): median {ms(opened)} ms")
    page_ms, http_ms = ms(page_turns), ms(http_turns)
    print(
        f"turn: page {page_ms} ms, HTTP stream {http_ms} ms (medians of {len(page_turns)}); "
        f"the page adds {page_ms - http_ms:.1f} ms, ratio {page_ms / http_ms:.2f}"
    )


if __name__ == "__main__":
    main()
