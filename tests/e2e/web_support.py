"""What the browser tests share: Debian's chromium driven by Playwright (``playwright install``
cannot download a browser here), a page that fails its test on any script error, and screenshots
saved when ``FOLIO_SCREENSHOTS=DIR`` is set.

Importing this module skips the importing test module when Playwright or chromium is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.api_server import FolioServer

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM = os.environ.get("FOLIO_CHROMIUM") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else shutil.which("chromium")
)
if not CHROMIUM:
    pytest.skip("no chromium on PATH (.ci/run installs it)", allow_module_level=True)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = os.environ.get("FOLIO_SCREENSHOTS")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium for as long as the block runs."""
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Page:
    """A fresh browser page that fails the test on any script error it sees."""

    def __init__(self, browser: Any, server: FolioServer, width: int, height: int) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.page.set_default_timeout(20_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = server.url

    def open(self, hash_: str = "#/") -> Any:
        self.page.goto(f"{self.url}/{hash_}")
        return self.page


@contextmanager
def fresh_page(browser: Any, server: FolioServer, width: int, height: int) -> Iterator[Page]:
    """A ``Page`` closed after the block, which then fails on any script error it saw."""
    p = Page(browser, server, width, height)
    yield p
    p.context.close()
    assert not p.errors, p.errors


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))
