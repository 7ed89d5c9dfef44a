"""The web page in a real headless Chromium (Debian's ``chromium`` driven by Playwright) against a
real ``folio serve`` on a loopback port with the scripted provider and the hashing embedder: upload
and import, the reading position, a streamed turn and a follow-up, citations and their passage,
Stop (nothing stored), errors with a retry, rename/delete/export, reloading a conversation, a book
and a model that write HTML (inert), and the phone layout.

One server and one browser for the module; each test gets a fresh page. Set
``FOLIO_SCREENSHOTS=DIR`` to save the screenshots of the library, a chat and the phone layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import demo_book_home
from tests.e2e.web_support import SHOTS, Page, chromium, fresh_page, shot

V1 = "/api/v1"
SLOW_SCRIPT = {"delay": 0.05, "steps": [" ".join(["slowly"] * 400)]}
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

LIGHTHOUSE = """# The Lighthouse Keeper

## Chapter 1. The Storm

Maren kept the light on the northern rock. Every night she climbed the stairs and wound the clock
that turned the great lens. The storm came in from the west and the sea rose over the landing.

## Chapter 2. The Ship

A ship with torn sails drifted toward the reef. Maren lit the second lamp and rang the bell until
her arms ached, and the ship turned away from the rocks just before dawn.

## Chapter 3. The Letter

A letter arrived from the harbour master. He thanked Maren and asked her to keep the light for
another winter.
"""

XSS_BOOK = f"""CHAPTER I. The Visitor

The visitor wrote on the wall of the inn: {XSS} and then he left the village.
Nobody in the village understood what the strange marks meant, and the innkeeper painted over them.

CHAPTER II. The Return

The visitor came back in spring and asked for his old room above the stables.
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    """folio serve on a home holding the bundled demo book (Frankenstein)."""
    home = demo_book_home(tmp_path_factory, "web-home")
    with FolioServer(home, env={"FOLIO_MAX_CONCURRENT_TURNS": "8"}) as s:
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
    book = next(b for b in api.get("/books").json() if b["title"].startswith("Frankenstein"))
    api.put(f"/books/{book['id']}/position", json={"reset": True}).raise_for_status()
    return dict(book)


@pytest.fixture
def web(browser: Any, server: FolioServer) -> Iterator[Page]:
    with fresh_page(browser, server, 1280, 860) as p:
        yield p


def drop_files(page: Any, selector: str, files: dict[str, str]) -> None:
    """Drop ``files`` (name -> text) on ``selector`` as a user dragging them from the desktop."""
    transfer = page.evaluate_handle(
        """(files) => { const dt = new DataTransfer();
            for (const [name, text] of Object.entries(files))
              dt.items.add(new File([text], name, { type: "text/plain" }));
            return dt; }""",
        files,
    )
    page.dispatch_event(selector, "drop", {"dataTransfer": transfer})


def ask(page: Any, text: str) -> Any:
    """Send ``text`` and wait until its answer is finished; the answer's list item."""
    before = page.locator(".message.assistant").count()
    page.fill("#message", text)
    page.keyboard.press("Enter")
    answer = page.locator(".message.assistant").nth(before)
    answer.locator(".chip").first.wait_for()
    page.wait_for_selector(".message.assistant.streaming", state="detached")
    return answer


def turns(api: httpx.Client, conversation_id: str) -> list[int]:
    detail = api.get(f"/conversations/{conversation_id}").json()
    return [t["turn_number"] for t in detail["turn_details"]]


def current_conversation(page: Any) -> str:
    return str(page.evaluate("() => decodeURIComponent(location.hash.split('/c/')[1] || '')"))


def test_upload_several_books_by_drag_and_drop_then_edit_and_delete(
    web: Page, api: httpx.Client
) -> None:
    page = web.open()
    page.wait_for_selector(".book-card")
    page.evaluate(
        """() => { window.__statuses = new Set();
            new MutationObserver(() => document.querySelectorAll('.upload .status')
                .forEach(s => window.__statuses.add(s.textContent.split(/[ :]/)[0])))
              .observe(document.body, { subtree: true, childList: true, characterData: true }); }"""
    )
    drop_files(page, ".dropzone", {"lighthouse.md": LIGHTHOUSE, "visitor.txt": XSS_BOOK})
    uploads = page.locator(".upload")
    assert uploads.count() == 2
    for row in range(2):  # each row asks how far the reader has read before it uploads
        uploads.nth(row).get_by_role("button", name="Whole book").click()
    for name in ("lighthouse.md", "visitor.txt"):
        page.wait_for_function(
            "(n) => [...document.querySelectorAll('.book-card .title')]"
            ".some(a => a.textContent.includes(n))",
            arg="Lighthouse" if name.endswith(".md") else "isitor",
        )
    card = page.locator(".book-card", has_text="The Lighthouse Keeper")
    assert "MD" in card.locator(".meta").inner_text() and "3 chapters" in card.inner_text()
    assert "Read the whole book" in card.inner_text()
    seen = set(page.evaluate("() => [...window.__statuses]"))
    assert {"Uploading", "Imported"} <= seen and seen & {"Importing", "Waiting"}, seen
    if SHOTS:  # the library as a reader has it: positions set
        for book in api.get("/books").json():
            position = {"chapter": 12} if book["chapters"] > 12 else {"percent": 40}
            api.put(f"/books/{book['id']}/position", json=position).raise_for_status()
        page.reload()
        page.wait_for_selector(".book-card progress")
        shot(page, "library")
        for book in api.get("/books").json():
            api.put(f"/books/{book['id']}/position", json={"reset": True}).raise_for_status()

    card.get_by_role("button", name="Edit").click()
    page.fill("#dialog input[name=title]", "The Keeper of the Light")
    page.fill("#dialog input[name=author]", "A. Reader")
    page.fill("#dialog input[name=series]", "Lighthouse Tales")
    page.fill("#dialog input[name=series_index]", "2")
    page.click("#dialog-ok")
    card = page.locator(".book-card", has_text="The Keeper of the Light")
    card.wait_for()
    assert "A. Reader" in card.inner_text()
    assert "Lighthouse Tales, book 2" in card.inner_text()  # its place in the series

    card.get_by_role("button", name="Delete").click()
    assert "cannot be undone" in page.inner_text("#dialog")
    page.click("#dialog-cancel")  # cancelled: still there
    assert card.count() == 1
    card.get_by_role("button", name="Delete").click()
    page.click("#dialog-ok")
    card.wait_for(state="detached")
    assert not [b for b in api.get("/books").json() if b["title"] == "The Keeper of the Light"]


def test_a_file_that_is_not_a_book_fails_in_place(web: Page) -> None:
    page = web.open()
    page.wait_for_selector(".book-card")
    empty = {"name": "empty.txt", "mimeType": "text/plain", "buffer": b"   "}
    page.set_input_files("#files", files=[empty])
    page.locator(".upload").get_by_role("button", name="Not started").click()
    failed = page.locator(".upload.failed")
    failed.wait_for()
    assert failed.get_attribute("class") and "empty" in failed.inner_text().lower()


def test_imports_are_followed_again_after_leaving_the_library(web: Page, api: httpx.Client) -> None:
    files = {"file": ("short.md", b"# Short\n\n## One\n\nA short book about a fox.\n")}
    job = api.post("/books", files=files).json()["job"]
    page = web.open()
    page.wait_for_selector(".book-card")
    pending = [
        {"job_id": job["job_id"], "filename": "short.md"},
        {"job_id": "no-such-job", "filename": "lost.epub"},
    ]
    page.evaluate("(jobs) => sessionStorage.setItem('folio.jobs', JSON.stringify(jobs))", pending)
    page.reload()
    page.locator(".upload.failed", has_text="lost.epub").wait_for()
    page.locator(".book-card", has_text="Short").wait_for()
    page.wait_for_function("() => sessionStorage.getItem('folio.jobs') === '[]'")


def test_a_draft_survives_a_reload_and_a_refused_message_returns_to_the_box(
    web: Page, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    page.fill("#message", "What does Walton write to his sister?")
    page.reload()
    page.wait_for_selector(".intro")
    assert page.input_value("#message") == "What does Walton write to his sister?"
    page.fill("#message", "x" * 9000)  # over max_message_chars (8000)
    page.keyboard.press("Enter")
    page.locator(".message.assistant .error-box", has_text="8000").wait_for()
    assert page.input_value("#message") == "x" * 9000  # nothing the reader wrote is lost


def test_position_by_chapter_page_and_percent(
    web: Page, api: httpx.Client, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".chapters li")
    titles = [c["title"] for c in api.get(f"/books/{frankenstein['id']}").json()["chapters"]]
    entry = titles.index("Chapter 2")  # after the contents and four letters: picked by title
    page.select_option(".position-form select[name=kind]", "chapter")
    page.select_option(".position-form select[name=chapter]", str(entry + 1))
    page.click(".position-form button[type=submit]")
    here = page.locator(".chapters li.here")
    here.wait_for()
    assert "you are here" in here.inner_text() and "Chapter 2" in here.inner_text()
    assert page.locator(".chapters li").nth(entry + 1).inner_text().startswith("Chapter 3")
    assert "unread" in (page.locator(".chapters li").nth(entry + 1).get_attribute("class") or "")
    assert "Read through Chapter 2 (p. " in page.inner_text("#position-text")
    book = api.get(f"/books/{frankenstein['id']}").json()
    assert book["reading_position"]["kind"] == "chapter"
    assert "Unread chapter" not in page.inner_text(".position-form select[name=chapter]")
    page.get_by_label("Show the titles of unread chapters").check()  # the reader's choice
    # the book is fetched again and the panel drawn anew (a new form): wait until it is
    page.wait_for_selector(".chapters:not([aria-busy])")
    assert page.locator(".chapters li.unread").count() > 10  # still marked unread
    page.get_by_label("Show the titles of unread chapters").uncheck()
    page.wait_for_selector(".chapters:not([aria-busy])")

    page.select_option(".position-form select[name=kind]", "page")
    page.fill(".position-form input", "40")
    page.click(".position-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#position-text').textContent.includes('through p. 40 of')"
    )
    page.select_option(".position-form select[name=kind]", "percent")
    page.fill(".position-form input", "250")
    page.click(".position-form button[type=submit]")
    page.locator(".position-panel .error", has_text="100").wait_for()  # the bound
    letter4 = page.locator(".chapters li", has_text="Letter 4")
    letter4.get_by_role("button", name="read to here").click()  # keyboard-reachable buttons
    page.wait_for_function(
        "() => document.querySelector('#position-text').textContent.includes('Letter 4')"
    )
    page.reload()
    page.wait_for_selector(".chapters li.here")
    assert "Letter 4" in page.inner_text(".chapters li.here")


def test_ask_a_follow_up_open_a_citation_rename_reload_and_delete(
    web: Page, api: httpx.Client, frankenstein: dict[str, Any]
) -> None:
    api.put(f"/books/{frankenstein['id']}/position", json={"chapter": 12}).raise_for_status()
    limit = api.get(f"/books/{frankenstein['id']}").json()["reading_position"]["char_offset"]
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    first = ask(page, "Who is Clerval?")
    assert "dearest friend" in first.locator(".body").inner_text()
    assert "Searched: “Clerval”" in first.locator(".activity").inner_text()
    conversation_id = current_conversation(page)
    assert conversation_id and turns(api, conversation_id) == [1]
    second = ask(page, "And what did he do then?")
    assert page.locator(".message.user").count() == 2
    assert turns(api, conversation_id) == [1, 2]
    shot(page, "chat")

    chip = second.locator(".chip").first
    chip.click()
    assert chip.get_attribute("aria-expanded") == "true"
    panel = second.locator(".citation-panel")
    assert panel.locator(".quote").inner_text().strip()
    assert "p." in panel.locator(".location").inner_text()
    panel.get_by_role("button", name="Open the passage").click()
    text = page.locator("#dialog .passage-text")
    text.wait_for()
    assert page.locator("#dialog mark").inner_text().strip()
    assert int(text.get_attribute("data-char-end") or 0) <= limit  # never past the position
    shot(page, "passage")
    page.keyboard.press("Escape")
    assert not page.locator("#dialog").is_visible()

    item = page.locator(f".conversations li[data-conversation-id='{conversation_id}']")
    item.get_by_role("button", name="Rename").click()
    page.fill("#dialog input[name=title]", "Clerval and Victor")
    page.click("#dialog-ok")
    page.wait_for_function(
        "() => document.querySelector('.chat-title').textContent === 'Clerval and Victor'"
    )
    assert api.get(f"/conversations/{conversation_id}").json()["title"] == "Clerval and Victor"

    with page.expect_download() as download:
        item.get_by_role("button", name="Markdown").click()
    saved = Path(download.value.path()).read_text(encoding="utf-8")
    assert "Who is Clerval?" in saved and "dearest friend" in saved

    with page.expect_download() as download:
        item.get_by_role("button", name="JSON").click()
    exported = Path(download.value.path()).read_bytes()
    page.set_input_files(
        ".import-conversation input",
        files=[{"name": "c.json", "mimeType": "application/json", "buffer": exported}],
    )
    page.wait_for_function("(old) => !location.hash.endsWith(old)", arg=conversation_id)
    copy = current_conversation(page)
    assert copy != conversation_id and turns(api, copy) == [1, 2]
    page.locator(".message.assistant .chip").first.wait_for()
    page.set_input_files(
        ".import-conversation input",
        files=[{"name": "bad.json", "mimeType": "application/json", "buffer": b"{nope"}],
    )
    page.locator(".toast.bad", has_text="not a JSON export").wait_for()
    api.delete(f"/conversations/{copy}").raise_for_status()
    page.goto(f"{web.url}/#/book/{frankenstein['id']}/c/{conversation_id}")

    page.reload()
    page.wait_for_selector(".message.assistant .chip")
    assert page.locator(".message.user").all_inner_texts() == [
        "Who is Clerval?",
        "And what did he do then?",
    ]
    assert page.locator(".message.assistant").count() == 2
    assert page.inner_text(".chat-title") == "Clerval and Victor"

    item = page.locator(f".conversations li[data-conversation-id='{conversation_id}']")
    item.get_by_role("button", name="Delete").click()
    page.click("#dialog-ok")
    item.wait_for(state="detached")
    assert api.get(f"/conversations/{conversation_id}").status_code == 404
    page.wait_for_selector(".intro")  # back to a new conversation


def test_keyboard_alone_asks_opens_a_citation_and_moving_back_hides_it(
    web: Page, api: httpx.Client, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    assert page.evaluate("() => document.activeElement.id") == "message"  # ready to type
    page.keyboard.type("Who is Clerval?")
    page.keyboard.press("Enter")
    page.locator(".message.assistant .chip").first.wait_for()
    page.wait_for_selector(".message.assistant.streaming", state="detached")
    page.locator(".chip").first.focus()
    page.keyboard.press("Enter")  # a chip is a button: Enter opens its quote
    panel = page.locator(".citation-panel")
    panel.locator(".quote").wait_for()
    assert page.evaluate("() => document.activeElement.textContent") == "Open the passage"
    page.keyboard.press("Enter")
    page.locator("#dialog .passage-text").wait_for()
    page.keyboard.press("Escape")
    assert not page.locator("#dialog").is_visible()
    cited = int(page.locator(".chip").first.get_attribute("data-char-start") or 0)

    # The reader moves back before the cited passage: its quote is no longer shown
    book = api.get(f"/books/{frankenstein['id']}").json()
    percent = round(100 * (cited // 2) / book["char_count"], 1)
    api.put(f"/books/{frankenstein['id']}/position", json={"percent": percent}).raise_for_status()
    page.reload()
    page.locator(".chip").first.click()
    panel.locator(".past").wait_for()
    assert panel.locator(".quote").count() == 0
    assert panel.get_by_role("button", name="Open the passage").count() == 0


def test_page_references_in_an_answer_open_their_source(
    web: Page, server: FolioServer, frankenstein: dict[str, Any]
) -> None:
    server.set_script(
        {
            "steps": [
                {"tool": "search_book", "arguments": {"query": "Clerval"}},
                "Clerval arrives at the inn (p. 42), later at pp. 46-47; nothing on p. 7 "
                "and `p. 42` in code stays as it is.",
            ]
        }
    )
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    answer = ask(page, "Where does Clerval arrive?")
    pages = [c.split("p. ")[-1] for c in answer.locator(".chip").all_inner_texts()]
    refs = answer.locator(".body .cite-ref")
    expected = [str(pages.index(p) + 1) for p in ("42", "46–47") if p in pages]
    assert expected and refs.all_inner_texts() == expected, pages
    assert answer.locator(".body code").inner_text() == "p. 42"
    refs.first.click()
    opened = answer.locator(".chip").nth(int(expected[0]) - 1)
    assert opened.get_attribute("aria-expanded") == "true"
    assert answer.locator(".citation-panel .quote").inner_text()
    shot(page, "chat-page-references")


def test_stop_a_streamed_answer_stores_nothing(
    web: Page, api: httpx.Client, server: FolioServer, frankenstein: dict[str, Any]
) -> None:
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    ask(page, "Who is Clerval?")
    conversation_id = current_conversation(page)
    server.set_script(SLOW_SCRIPT)
    page.fill("#message", "Tell me everything, slowly")
    page.keyboard.press("Enter")
    answer = page.locator(".message.assistant").nth(1)
    page.wait_for_function(
        "() => (document.querySelectorAll('.message.assistant .body')[1]?.textContent || '')"
        ".includes('slowly slowly')"
    )
    assert page.locator("button.stop").is_visible()
    page.click("button.stop")
    answer.locator(".notice").wait_for()
    assert "not saved" in answer.inner_text()
    assert page.locator("button.send").is_visible()
    page.wait_for_timeout(500)  # let the server see the disconnect
    assert turns(api, conversation_id) == [1]

    server.set_script(DEFAULT_SCRIPT)
    answer.get_by_role("button", name="Ask again").click()
    page.locator(".message.assistant").nth(1).locator(".chip").first.wait_for()
    assert turns(api, conversation_id) == [1, 2]


def test_a_failed_turn_shows_the_error_in_place_with_a_retry(
    web: Page, api: httpx.Client, server: FolioServer, frankenstein: dict[str, Any]
) -> None:
    server.set_script({"steps": [{"error": "UNAVAILABLE", "message": "the model is down"}]})
    page = web.open(f"#/book/{frankenstein['id']}")
    page.wait_for_selector(".intro")
    page.fill("#message", "Who is Clerval?")
    page.keyboard.press("Enter")
    error = page.locator(".message.assistant .error-box")
    error.wait_for()
    assert "model is down" in error.inner_text()
    assert current_conversation(page) == ""  # the first turn failed: no empty conversation kept
    for _ in range(50):  # the page deletes it without waiting
        items = api.get("/conversations", params={"book_id": frankenstein["id"]}).json()["items"]
        if all(c["turns"] > 0 for c in items):
            break
        page.wait_for_timeout(100)
    assert all(c["turns"] > 0 for c in items), items
    server.set_script(DEFAULT_SCRIPT)
    error.get_by_role("button", name="Retry").click()
    page.locator(".message.assistant .chip").first.wait_for()
    assert page.locator(".message.user").count() == 1
    assert turns(api, current_conversation(page)) == [1]


def test_html_from_a_book_and_from_the_model_stays_inert(
    web: Page, api: httpx.Client, server: FolioServer
) -> None:
    page = web.open()
    page.wait_for_selector(".book-card")
    content = XSS_BOOK.encode() + b"\nSecond copy.\n"
    page.set_input_files(
        "#files", files=[{"name": "visitor-2.txt", "mimeType": "text/plain", "buffer": content}]
    )
    page.locator(".upload").get_by_role("button", name="Whole book").click()
    page.locator(".upload.done").wait_for()
    book = next(b for b in api.get("/books").json() if b["source_name"] == "visitor-2.txt")
    api.patch(f"/books/{book['id']}", json={"title": f"The Visitor {XSS}"}).raise_for_status()
    server.set_script(
        {
            "steps": [
                {"tool": "search_book", "arguments": {"query": "visitor wall inn marks"}},
                f'He wrote "{XSS}" on the wall.\n\n**Bold** and <b onmouseover="x()">raw</b> '
                "[a link](javascript:window.__pwned=3)",
            ]
        }
    )
    page.reload()
    page.wait_for_selector(".book-card")
    assert XSS in page.inner_text(".cards")  # the title is shown as text
    page.locator(".book-card", has_text="The Visitor").get_by_role("link", name="Open").click()
    page.wait_for_selector(".intro")
    answer = ask(page, "What did the visitor write?")
    assert XSS in answer.locator(".body").inner_text()
    assert answer.locator(".body strong").inner_text() == "Bold"
    answer.locator(".chip").first.click()
    assert "onerror" in answer.locator(".quote").inner_text()
    answer.get_by_role("button", name="Open the passage").click()
    page.locator("#dialog .passage-text").wait_for()
    assert "onerror" in page.inner_text("#dialog .passage-text")
    page.keyboard.press("Escape")
    page.locator(".body a").click()  # a javascript: link has no href left
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("main img, main script, main [onerror], main [onmouseover]").count() == 0
    assert page.locator(".body a").get_attribute("href") is None


def test_phone_width(browser: Any, server: FolioServer, frankenstein: dict[str, Any]) -> None:
    server.set_script(DEFAULT_SCRIPT)
    web = Page(browser, server, 390, 844)
    try:
        page = web.open()
        page.wait_for_selector(".book-card")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.locator(".book-card", has_text="Frankenstein").get_by_role("link", name="Open").click()
        page.wait_for_selector(".intro")
        assert page.locator("#book-panel").get_attribute("open") is None  # folded away on a phone
        answer = ask(page, "Who is Clerval?")
        answer.locator(".chip").first.click()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert page.locator("#message").is_visible()
        shot(page, "phone")
        page.click("#book-panel summary")
        assert page.locator(".position-form").is_visible()
    finally:
        web.context.close()
    assert not web.errors, web.errors
