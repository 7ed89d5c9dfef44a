"""A reader's first hour on the web page (issue 28), in a real headless Chromium against a real
``folio serve`` (scripted provider, hashing embedder): the upload row asks how far the reader has
read before it uploads, same-titled books are told apart, the chat follows a position change, the
newest answer stays above the sticky message box, the chapter picker names chapters by their
titles and last pages, an answer without a position says so, and the page says what answers.

``FOLIO_SCREENSHOTS=DIR`` saves the upload row asking for the position and the chat after a
position change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import demo_book_home
from tests.e2e.web_support import Page, chromium, fresh_page, shot

V1 = "/api/v1"
TITLE = "Frankenstein; or, the Modern Prometheus"

TIDES = """# Tides

## Chapter 1

The tide came in over the flats and the herons left the channel for the marsh.

## Chapter 2

At night the keeper wrote the heights of the water in a book with a green cover.

## Chapter 3

In spring the flats were mapped again and the new channel had a name.
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    home = demo_book_home(tmp_path_factory, "web-first-hour")
    with FolioServer(home) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def api(server: FolioServer) -> Iterator[httpx.Client]:
    server.set_script(DEFAULT_SCRIPT)
    with httpx.Client(base_url=server.url + V1, timeout=30) as c:
        yield c


@pytest.fixture
def frankenstein(api: httpx.Client) -> dict[str, Any]:
    book = next(b for b in api.get("/books").json() if b["source_name"] == "frankenstein.txt")
    api.put(f"/books/{book['id']}/position", json={"reset": True}).raise_for_status()
    return dict(book)


@pytest.fixture
def web(browser: Any, server: FolioServer) -> Iterator[Page]:
    with fresh_page(browser, server, 1280, 800) as p:
        yield p


def choose_file(page: Any, name: str, text: str) -> None:
    page.set_input_files(
        "#files", files=[{"name": name, "mimeType": "text/plain", "buffer": text.encode()}]
    )


def ask(page: Any, text: str) -> Any:
    """Send ``text`` and wait until its answer is finished; the answer's list item."""
    before = page.locator(".message.assistant").count()
    page.fill("#message", text)
    page.keyboard.press("Enter")
    answer = page.locator(".message.assistant").nth(before)
    answer.locator(".chip").first.wait_for()
    page.wait_for_selector(".message.assistant.streaming", state="detached")
    return answer


def delete_book(api: httpx.Client, source_name: str) -> None:
    for book in api.get("/books").json():
        if book["source_name"] == source_name:
            api.delete(f"/books/{book['id']}").raise_for_status()


def test_the_upload_row_asks_how_far_the_reader_has_read_before_uploading(
    web: Page, api: httpx.Client
) -> None:
    page = web.open()
    page.wait_for_selector(".book-card")
    books_before = len(api.get("/books").json())
    choose_file(page, "tides.md", TIDES)
    row = page.locator(".upload", has_text="tides.md")
    row.locator(".ask").wait_for()
    assert "How far have you read?" in row.inner_text()
    assert row.get_by_role("button", name="Not started").is_visible()
    assert row.get_by_role("button", name="Whole book").is_visible()
    assert row.get_by_label("Chapter, page or percentage of tides.md").is_visible()
    shot(page, "upload-row-asks-position")
    assert len(api.get("/books").json()) == books_before  # nothing uploaded while it asks

    row.get_by_label("Chapter, page or percentage of tides.md").fill("Chapter 9")
    row.get_by_role("button", name="Set").click()
    row.locator(".ask .error", has_text="has no chapter 'Chapter 9'").wait_for()  # asked again
    assert len(api.get("/books").json()) == books_before  # and nothing stored
    row.get_by_label("Chapter, page or percentage of tides.md").fill("Chapter 2")
    row.get_by_role("button", name="Set").click()
    card = page.locator(".book-card", has_text="Tides")
    card.wait_for()
    assert "Read through Chapter 2 (p. " in card.inner_text()
    delete_book(api, "tides.md")


def test_same_titled_books_are_told_apart_on_the_cards_and_the_book(
    web: Page, api: httpx.Client
) -> None:
    page = web.open()
    page.wait_for_selector(".book-card")
    choose_file(page, "my-frankenstein.md", f"# {TITLE}\n\n## Chapter 1\n\nMy own copy.\n")
    page.locator(".upload").get_by_role("button", name="Not started").click()
    page.locator(".book-card .title", has_text=f"{TITLE} (MD)").wait_for()
    titles = page.locator(".book-card .title").all_inner_texts()
    assert f"{TITLE} (TXT)" in titles and f"{TITLE} (MD)" in titles
    page.locator(".book-card .title", has_text=f"{TITLE} (MD)").click()
    page.locator("#book-panel .book-title", has_text=f"{TITLE} (MD)").wait_for()
    delete_book(api, "my-frankenstein.md")


def test_the_chat_shows_the_new_position_after_set(
    web: Page, api: httpx.Client, frankenstein: dict[str, Any]
) -> None:
    api.put(f"/books/{frankenstein['id']}/position", json={"chapter": 5}).raise_for_status()
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    ask(page, "Who is Clerval?")
    where = page.locator("#chat-position")
    assert "through Chapter 5 (p. " in where.inner_text()
    titles = [c["title"] for c in api.get(f"/books/{frankenstein['id']}").json()["chapters"]]
    page.select_option(".position-form select[name=chapter]", str(titles.index("Chapter 8") + 1))
    page.click(".position-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#chat-position').textContent.includes('Chapter 8')"
    )
    moved = page.locator(".messages .position-change")
    assert "through Chapter 8 (p. " in moved.inner_text()
    chat = page.locator(".chat").inner_text()
    assert "Chapter 5" not in chat.split("Who is Clerval?")[0]  # nothing stale above
    assert "((" not in chat and "))" not in chat
    shot(page, "chat-after-position-change")


def test_the_newest_answer_stays_above_the_sticky_message_box(
    web: Page, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    for question in ("Who is Clerval?", "Where does he study?", "What does he do then?"):
        answer = ask(page, question)
    composer_top = page.locator(".composer").bounding_box()["y"]
    for part in (".chips", ".activity"):
        box = answer.locator(part).bounding_box()
        assert box is not None, part
        assert box["y"] + box["height"] <= composer_top, (part, box, composer_top)
    assert page.evaluate("() => window.scrollY") > 0  # the page did scroll to it


def test_the_chapter_picker_names_chapters_and_their_last_page(
    web: Page, api: httpx.Client, frankenstein: dict[str, Any]
) -> None:
    api.put(f"/books/{frankenstein['id']}/position", json={"chapter": 2}).raise_for_status()
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".position-form select[name=chapter]")
    options = page.locator(".position-form select[name=chapter] option").all_inner_texts()
    assert not [o for o in options if o.startswith("Unread chapter")], options
    chapter_13 = next(o for o in options if o.startswith("Chapter 13 "))
    last = re.fullmatch(r"Chapter 13 \(pp\. \d+–(\d+)\)", chapter_13)
    assert last, chapter_13
    page.select_option(".position-form select[name=chapter]", label=chapter_13)
    page.click(".position-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#position-text').textContent.includes('Chapter 13')"
    )
    assert f"(p. {last.group(1)} of " in page.inner_text("#position-text")


def test_an_answer_without_a_position_says_so_with_the_way_to_set_it(
    web: Page, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    answer = ask(page, "Who is Clerval?")
    notice = answer.locator(".no-position")
    assert "No reading position is set" in notice.inner_text()
    notice.get_by_role("button", name="Set how far you have read").click()
    focused = page.evaluate("() => document.activeElement.getAttribute('name')")
    assert focused == "kind"  # the position form, ready


def test_the_page_says_which_provider_model_and_database_answer(web: Page) -> None:
    page = web.open()
    footer = page.locator("#server")
    footer.wait_for()
    page.wait_for_function("() => document.querySelector('#server').textContent.length > 0")
    assert re.fullmatch(
        r"Answers by scripted \(model: .+\) · library in SQLite", footer.inner_text()
    )
