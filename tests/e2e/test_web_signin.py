"""Signing in to the web page with a token, on a real ``folio serve`` that has users (headless
Chromium): a wrong token is refused in place, the right one opens the user's own (empty) library,
it is remembered across reloads, and signing out forgets it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok_json, run_folio_in
from tests.e2e.web_support import chromium, fresh_page


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FolioServer, str]]:
    home = demo_book_home(tmp_path_factory, "web-users")  # the local user's book
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
    with FolioServer(home) as s:
        yield s, str(alice["token"])


@pytest.fixture(scope="module")
def page(served: tuple[FolioServer, str]) -> Iterator[Any]:
    server, _ = served
    with chromium() as browser, fresh_page(browser, server, 1280, 800) as web:
        yield web.page


def test_sign_in_with_a_token_then_sign_out(served: tuple[FolioServer, str], page: Any) -> None:
    server, token = served
    page.goto(server.url + "/")
    page.wait_for_selector("form.signin")
    assert page.evaluate("() => document.activeElement.id") == "token"
    page.fill("#token", "folio_not-a-token")
    page.keyboard.press("Enter")
    page.locator("form.signin .error", has_text="not valid").wait_for()

    page.fill("#token", token)
    page.keyboard.press("Enter")
    page.locator(".empty", has_text="No books yet").wait_for()  # alice's library: not the local one
    page.reload()
    page.locator(".empty", has_text="No books yet").wait_for()  # the token is remembered

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_selector("form.signin")
    assert page.evaluate("() => localStorage.getItem('folio.token')") is None


def test_a_page_needs_a_token_before_it_shows_anything(
    served: tuple[FolioServer, str], page: Any
) -> None:
    server, _ = served
    page.goto(server.url + "/#/book/anything")
    page.wait_for_selector("form.signin")
    assert page.locator(".book-card, .chat").count() == 0
