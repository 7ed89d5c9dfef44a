"""The reader's highlights on the web page from import to answer (issue 39, "What it must show",
first bullet), in a real headless Chromium against ``folio serve`` (offline policy): a KOReader
sidecar (KOReader's own fields) and a Kindle ``My Clippings.txt`` (a highlight with a note on it)
imported through the Highlights panel and listed; "What did I highlight?" asked in the chat box
and answered from them; then a question whose cited passage overlaps the Kindle highlight, whose
chip carries a "your highlight" marker, whose panel shows the highlight and its note, and whose
passage dialog marks exactly the highlighted words.

Set ``FOLIO_SCREENSHOTS=DIR`` to save the screenshots."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, run_folio_in
from tests.e2e.test_api_highlights import KOREADER
from tests.e2e.web_support import chromium, fresh_page, shot

TITLE = "Frankenstein; or, the Modern Prometheus (Mary Wollstonecraft Shelley)"
# Chapter 3, as a Kindle writes it: one line, across two sentences of the book's wrapped text
MINE = (
    "I paid M. Waldman a visit. His manners in private were even more mild and attractive "
    "than in public"
)
NOTE = "kinder at home than at the lectern"
CLIPPINGS = f"""\ufeff{TITLE}
- Your Highlight on page 30 | Location 470-472 | Added on Friday, 20 November 2026 21:14:03

{MINE}
==========
{TITLE}
- Your Note on page 30 | Location 472 | Added on Friday, 20 November 2026 21:15:10

{NOTE}
==========
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    home = demo_book_home(tmp_path_factory, "web-source-highlights")
    ok(run_folio_in(home, "position", "Frankenstein", "--chapter", "10"))
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def ask(page: Any, text: str) -> Any:
    before = page.locator(".message.assistant").count()
    page.fill("#message", text)
    page.keyboard.press("Enter")
    answer = page.locator(".message.assistant").nth(before)
    answer.locator(".chip").first.wait_for()
    page.wait_for_selector(".message.assistant.streaming", state="detached")
    return answer


def words(text: str | None) -> str:
    return " ".join((text or "").split())


def test_imported_highlights_are_listed_answered_and_shown_beside_the_sources(
    browser: Any, server: FolioServer
) -> None:
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
        page.wait_for_function("() => document.querySelectorAll('.highlights li').length === 2")
        listed = panel.locator(".highlights li").all_inner_texts()  # in the book's order
        assert MINE in listed[0] and f"Note: {NOTE}" in listed[0] and "Kindle" in listed[0]
        assert "the wretch" in listed[1] and "KOReader" in listed[1], listed

        answer = ask(page, "What did I highlight?")
        said = words(answer.locator(".body").inner_text())
        assert MINE in said and NOTE in said, said
        assert "the wretch" in said and "he flees his creature" in said, said
        assert answer.locator(".chip .hl-flag").count() == 2  # each of its sources is one of them
        shot(page, "highlights-answered")

        answer = ask(page, "Who is M. Waldman?")
        chips = answer.locator(".chip")
        flagged = answer.locator(".chip:has(.hl-flag)")
        assert flagged.count() == 1 and chips.count() > 1, chips.all_inner_texts()
        named = answer.get_by_role("button", name=re.compile(r"^\d+ p\. \d+ with your highlight$"))
        assert named.count() == 1 and named.inner_text() == flagged.inner_text()
        flagged.click()
        beside = answer.locator(".citation-panel .source-highlights")
        beside.wait_for()
        assert beside.get_attribute("aria-label") == "Your highlight in this passage"
        assert words(beside.locator(".reader-highlight").inner_text()) == MINE
        assert beside.locator(".note").inner_text() == f"Your note: {NOTE}"
        shot(page, "highlights-beside-the-source")

        answer.get_by_role("button", name="Open the passage").click()
        passage = page.locator(".passage-text")
        passage.locator("mark").wait_for()
        marked = passage.locator(".reader-highlight").all_text_contents()
        assert words("".join(marked)) == MINE  # exactly the reader's words, across the cited one
        assert passage.locator("mark .reader-highlight").count() >= 1  # inside the cited part
        assert "visit" in words(passage.locator("mark").text_content())
        dialog = page.locator("#dialog")
        assert f"Your note: {NOTE}" in dialog.inner_text() and "null" not in dialog.inner_text()
        shot(page, "highlights-in-the-passage")

        page.reload()  # the stored turn shows them too
        page.locator(".message.assistant .chip").first.wait_for()
        assert page.locator(".message.assistant").last.locator(".chip .hl-flag").count() == 1
