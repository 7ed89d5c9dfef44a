"""KOReader pushes on an EPUB with the structures crengine numbers its own way (SVG and image
pages, a missing file and a repeated item in the spine, ``section`` wrappers, a ``<div>`` inside a
``<p>``, text split by inline elements, entities), against a real ``folio serve``: a classic and a
nightly xpointer of the same place move folio to the same character, and one folio cannot place
never moves the reader past the device's percentage. The book is built by
``tests/unit/test_xpointer_structures.py``, whose xpointers are written by crengine's rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in
from tests.e2e.test_kosync import LOGIN, PASSWORD, auth, koreader_partial_md5, progress_body
from tests.unit.test_xpointer_structures import build_epub, nightly


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("kosync-structures")
    path = build_epub(home / "structures.epub")
    added = ok_json(run_folio_in(home, "add", str(path), "--json"))
    ok(run_folio_in(home, "users", "sync-password", LOGIN, input=PASSWORD + "\n"))
    return {"home": home, "document": koreader_partial_md5(path), "added": added}


@pytest.fixture(scope="module")
def client(library: dict[str, Any]) -> Iterator[httpx.Client]:
    with FolioServer(library["home"]) as server, httpx.Client(base_url=server.url) as c:
        yield c


def push(client: httpx.Client, document: str, xpointer: str, percentage: float) -> dict[str, Any]:
    response = client.put(
        "/syncs/progress", json=progress_body(document, xpointer, percentage), headers=auth()
    )
    assert response.status_code == 200, response.text
    book_id = client.get("/api/v1/books").json()[0]["id"]
    book = client.get(f"/api/v1/books/{book_id}").json()
    offset = book["reading_position"]["char_offset"]
    window = {"start": max(0, offset - 60), "end": offset}
    text = (
        client.get(f"/api/v1/books/{book_id}/text", params=window).json()["text"] if offset else ""
    )
    return {"offset": offset, "text": text, "chars": book["char_count"]}


@pytest.mark.parametrize(
    ("xpointer", "read_until"),
    [
        # the <p> holding a <div>: its second text node ("End of para.") starts there
        ("/body/DocFragment[3]/body/section/p[4]/text()[2].4", "Block in para.\n\nEnd"),
        # " Café society & its friends met at noon\u00a0sharp, ...": 'met' at 28
        ("/body/DocFragment[9]/body/p/text().31", "its friends met"),
    ],
)
def test_classic_and_nightly_pushes_land_on_the_same_character(
    client: httpx.Client, library: dict[str, Any], xpointer: str, read_until: str
) -> None:
    landed = []
    for form in (xpointer, nightly(xpointer)):
        moved = push(client, library["document"], form, 0.5)
        assert moved["text"].endswith(read_until), form
        landed.append(moved["offset"])
    assert landed[0] == landed[1]


def test_a_push_on_an_svg_page_puts_the_reader_after_the_chapter_before_it(
    client: httpx.Client, library: dict[str, Any]
) -> None:
    moved = push(client, library["document"], "/body[1]/DocFragment[4]/body[1]/svg[1]", 0.5)
    assert moved["text"].endswith("End of para.")


def test_a_push_folio_cannot_place_is_never_ahead_of_its_percentage(
    client: httpx.Client, library: dict[str, Any]
) -> None:
    moved = push(client, library["document"], "/body/DocFragment[42]/body/p/text().3", 0.9)
    assert moved["offset"] <= 0.9 * moved["chars"]
