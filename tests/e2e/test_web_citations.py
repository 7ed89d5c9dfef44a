"""Citations on the web page in a real headless Chromium (issue 39, item 3; issue 36, item 4),
against ``folio serve`` with the offline policy and the hashing embedder: one number per source
(two quotes on one page get two), each chip on its quote's page, the opened panel in view above
the message box, a cited passage read as paragraphs at phone width (verse kept), and a source from
an earlier volume of a series named by its volume, on its own page, never "past your reading
position".

Set ``FOLIO_SCREENSHOTS=DIR`` to save the screenshots."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, run_folio_in
from tests.e2e.web_support import chromium, fresh_page, shot
from tests.series_books import write_epub

BOOKS = Path(__file__).resolve().parents[3] / "shared" / "data" / "books"
TWO_ON_ONE_PAGE = "What did Victor read as a boy?"  # at Chapter 5: two quotes on p. 21
FILLER = "The rain fell on the old forum while the crowd waited in the square below the steps. "
_PAGE = re.compile(r"\bp\. (\w+)\)")


def _volume(folder: Path, number: int, name: str, chapters: int) -> Path:
    def paragraph(c: int, p: int) -> str:  # the name from chapter 4: past a short volume's pages
        who = name if c >= 4 or chapters < 4 else "A senator"
        return f"{FILLER * 5}{who} stood by column {c}.{p} and spoke to the senators. {FILLER * 5}"

    content = [
        (f"Chapter {c}", [paragraph(c, p) for p in range(5)]) for c in range(1, chapters + 1)
    ]
    return write_epub(folder / f"v{number}.epub", f"Ides Volume {number}", content,
                      series="Ides", index=str(number))  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    """Frankenstein read to Chapter 5, and a series: volume 1 (36 pages) read, volume 2 (3 pages)
    read to Chapter 2."""
    home = demo_book_home(tmp_path_factory, "web-citations")
    folder = tmp_path_factory.mktemp("series")
    ok(run_folio_in(home, "position", "Frankenstein", "--chapter", "5"))
    ok(run_folio_in(home, "add", str(_volume(folder, 1, "Brutus", 12)), "--position", "whole"))
    ok(run_folio_in(home, "add", str(_volume(folder, 2, "Cassius", 2)), "--position", "Chapter 2"))
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def books(server: FolioServer) -> dict[str, dict[str, Any]]:
    listed = httpx.get(f"{server.url}/api/v1/books", timeout=30).json()
    return {b["title"].split(";")[0]: b for b in listed}


def ask(page: Any, text: str) -> Any:
    before = page.locator(".message.assistant").count()
    page.fill("#message", text)
    page.keyboard.press("Enter")
    answer = page.locator(".message.assistant").nth(before)
    answer.locator(".chip").first.wait_for()
    page.wait_for_selector(".message.assistant.streaming", state="detached")
    return answer


def bullets(answer: Any) -> list[tuple[str, list[str]]]:
    """Each quoted line of the answer: the page it names, and the source numbers after it."""
    out = []
    for item in answer.locator(".body li").all():
        page = _PAGE.search(item.inner_text())
        assert page is not None, item.inner_text()
        out.append((page.group(1), item.locator(".cite-ref").all_inner_texts()))
    return out


def chips(answer: Any) -> list[tuple[str, str]]:
    """Each chip: its number and its page label."""
    out = []
    for chip in answer.locator(".chip").all():
        number = chip.locator(".n").inner_text()
        out.append((number, chip.inner_text().replace(number, "", 1).strip()))
    return out


def test_two_quotes_on_one_page_get_two_numbers_and_each_chip_its_quotes_page(
    browser: Any, server: FolioServer, books: dict[str, dict[str, Any]]
) -> None:
    with fresh_page(browser, server, 1280, 860) as web:
        page = web.open(f"#/book/{books['Frankenstein']['id']}")
        page.wait_for_selector(".intro")
        answer = ask(page, TWO_ON_ONE_PAGE)
        lines, labels = bullets(answer), chips(answer)

        pages = [p for p, _ in lines]
        assert len(set(pages)) < len(pages), pages  # two quotes on one page
        assert [numbers for _, numbers in lines] == [[str(n)] for n in range(1, len(lines) + 1)]
        assert labels == [(str(n), f"p. {p}") for n, (p, _) in enumerate(lines, 1)]
        shot(page, "citations-two-on-one-page")

        page.reload()  # the stored turn: the same numbers in the same places
        page.locator(".message.assistant .chip").first.wait_for()
        assert bullets(page.locator(".message.assistant").last) == lines


def test_an_opened_citation_panel_is_scrolled_above_the_message_box(
    browser: Any, server: FolioServer, books: dict[str, dict[str, Any]]
) -> None:
    with fresh_page(browser, server, 390, 700) as web:
        page = web.open(f"#/book/{books['Frankenstein']['id']}")
        page.wait_for_selector(".intro")
        answer = ask(page, TWO_ON_ONE_PAGE)
        answer.locator(".chip").last.click()
        panel = answer.locator(".citation-panel")
        panel.locator(".quote").wait_for()
        page.wait_for_timeout(300)  # a smooth scroll, if any, has ended
        box = panel.bounding_box()
        composer = page.locator(".composer").bounding_box()
        assert box is not None and composer is not None
        assert box["y"] >= 0 and box["y"] + box["height"] <= composer["y"] + 1, (box, composer)
        shot(page, "citations-panel-in-view-phone")


def test_a_cited_passage_reads_as_paragraphs_at_phone_width(
    browser: Any, server: FolioServer, books: dict[str, dict[str, Any]]
) -> None:
    book = books["Frankenstein"]
    with fresh_page(browser, server, 390, 800) as web:
        page = web.open(f"#/book/{book['id']}")
        page.wait_for_selector(".intro")
        answer = ask(page, TWO_ON_ONE_PAGE)
        answer.locator(".chip").first.click()
        answer.get_by_role("button", name="Open the passage").click()
        passage = page.locator(".passage-text")
        passage.locator("mark").wait_for()
        shown = passage.text_content() or ""
        start, end = (
            passage.get_attribute("data-char-start"),
            passage.get_attribute("data-char-end"),
        )
        raw = httpx.get(
            f"{server.url}/api/v1/books/{book['id']}/text?start={start}&end={end}", timeout=30
        ).json()["text"]
        marked = next(
            p
            for p in shown.split("\n\n")
            if (passage.locator("mark").text_content() or "")[:30] in p
        )

        assert len(shown) == len(raw) and "\n" in raw.strip()  # the book's text holds hard breaks
        assert "\n" not in marked.strip(), marked  # the cited paragraph has none left
        assert shown.count("\n\n") == raw.count("\n\n")  # its paragraphs are kept
        assert passage.evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing runs off
        assert "null" not in (page.locator("#dialog").inner_text())  # (was under every passage)
        shot(page, "citations-passage-phone")


@pytest.mark.skipif(not BOOKS.is_dir(), reason="no shared books (../shared/data/books)")
def test_verse_keeps_its_lines_and_prose_is_reflowed(browser: Any, server: FolioServer) -> None:
    milton = (BOOKS / "milton-paradise.txt").read_text(encoding="utf-8")
    verse = milton[milton.index("Of Man's first disobedience") :][:900]
    prose = (BOOKS / "pg84_frankenstein.txt").read_text(encoding="utf-8")
    prose = prose[prose.index("I had sufficient leisure for these") :][:1200]
    with fresh_page(browser, server, 390, 800) as web:
        page = web.open()
        reflow = "async (t) => (await import('/citations.js')).reflow(t)"
        verse_out, prose_out = page.evaluate(reflow, verse), page.evaluate(reflow, prose)

    assert verse_out == verse  # every line of Paradise Lost kept
    paragraphs = [p for p in prose_out.split("\n\n") if p.strip()]
    assert len(paragraphs) == len([p for p in prose.split("\n\n") if p.strip()])
    assert all("\n" not in p.strip() for p in paragraphs), paragraphs


def test_a_source_from_an_earlier_volume_names_it_on_its_own_page(
    browser: Any, server: FolioServer, books: dict[str, dict[str, Any]]
) -> None:
    with fresh_page(browser, server, 1280, 860) as web:
        page = web.open(f"#/book/{books['Ides Volume 2']['id']}")
        page.wait_for_selector(".intro")
        answer = ask(page, "Who is Brutus?")
        lines = bullets(answer)
        assert [label for _, label in chips(answer)] == [f"p. {p}" for p, _ in lines]
        assert any(int(p) > books["Ides Volume 2"]["pages"] for p, _ in lines)  # volume 1's pages

        answer.locator(".chip").last.click()
        panel = answer.locator(".citation-panel")
        panel.locator(".quote").wait_for()
        text = panel.inner_text()
        assert "Ides Volume 1" in text and "null" not in text, text
        assert panel.locator(".past").count() == 0
        quote = panel.locator(".quote").inner_text()
        panel.get_by_role("button", name="Open the passage").click()
        page.locator(".passage-text mark").wait_for()
        assert " ".join((page.locator(".passage-text mark").text_content() or "").split()) == quote
        dialog_text = page.locator("dialog").last.inner_text()
        assert "null" not in dialog_text and "Ides Volume 1" in dialog_text, dialog_text
        shot(page, "citations-earlier-volume")
