"""The web page's Highlights panel in a real headless Chromium against ``folio serve``: a
KOReader sidecar (KOReader's own fields) and a Kindle ``My Clippings.txt`` imported through the
page, listed up to the reading position (a highlight past it counted, never shown; entries for a
book not in the library kept waiting, and said so), and one deleted.

Set ``FOLIO_SCREENSHOTS=DIR`` to save the screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, run_folio_in
from tests.e2e.test_api_highlights import KOREADER
from tests.e2e.web_support import chromium, fresh_page, shot

TITLE = "Frankenstein; or, the Modern Prometheus (Mary Wollstonecraft Shelley)"
READ = "On the same day I paid M. Waldman a visit"  # Chapter 3
UNREAD = "I sat one evening in my laboratory; the sun had set"  # Chapter 20
CLIPPINGS = f"""\ufeff{TITLE}
- Your Highlight on page 30 | Location 470-471 | Added on Friday, 20 November 2026 21:14:03

{READ}
==========
{TITLE}
- Your Highlight on page 180 | Location 2990-2991 | Added on Friday, 20 November 2026 22:00:00

{UNREAD}
==========
Emma (Jane Austen)
- Your Highlight on page 1 | Location 5-6 | Added on Saturday, 21 November 2026 09:10:00

Emma Woodhouse, handsome, clever, and rich
==========
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    home = demo_book_home(tmp_path_factory, "web-highlights")
    ok(run_folio_in(home, "position", "Frankenstein", "--chapter", "10"))  # Chapter 20 unread
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def test_import_list_and_delete_highlights_on_the_page(browser: Any, server: FolioServer) -> None:
    book = httpx.get(f"{server.url}/api/v1/books", timeout=30).json()[0]
    with fresh_page(browser, server, 1280, 1000) as web:
        page = web.open(f"#/book/{book['id']}")
        panel = page.locator("#highlights-panel")
        panel.locator(".highlights-status").get_by_text("No highlights").wait_for()
        files = panel.locator("input[type=file]")

        files.set_input_files(
            {"name": "metadata.epub.lua", "mimeType": "text/plain", "buffer": KOREADER.encode()}
        )
        panel.locator(".highlights li").first.wait_for()
        files.set_input_files(
            {"name": "My Clippings.txt", "mimeType": "text/plain", "buffer": CLIPPINGS.encode()}
        )
        panel.locator(".highlights-status").get_by_text("Kept until the book is added").wait_for()
        items = panel.locator(".highlights li")
        page.wait_for_function("() => document.querySelectorAll('.highlights li').length === 2")

        texts = items.all_inner_texts()  # in the book's order
        assert READ in texts[0] and "Chapter 3" in texts[0] and "Kindle" in texts[0], texts
        assert "the wretch" in texts[1] and "Note: he flees his creature" in texts[1], texts
        assert UNREAD.split(";")[0] not in panel.inner_text()  # past the position: not shown
        status = panel.locator(".highlights-status").inner_text()
        assert "1 more past your reading position" in status and "Emma" in status, status
        assert panel.locator("summary").inner_text() == "Highlights (2)"
        shot(page, "highlights-panel")

        items.nth(0).get_by_role("button", name="Delete").click()
        page.locator("#dialog").get_by_role("button", name="Delete").click()
        page.wait_for_function("() => document.querySelectorAll('.highlights li').length === 1")
        listed = httpx.get(f"{server.url}/api/v1/books/{book['id']}/highlights", timeout=30).json()
        assert [h["text"] for h in listed["highlights"]] == ["the wretch"]
