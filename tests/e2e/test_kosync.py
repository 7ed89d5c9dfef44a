"""KOReader's progress sync against a real ``folio serve``, driven exactly as the KOReader plugin
drives its server, with the requests, headers and bodies of its source (koreader/koreader,
plugins/kosync.koplugin):

- KOSyncClient.lua, ``KOSyncClient:init``: every request carries
  ``accept: application/vnd.koreader.v1+json`` (the "GinClient" middleware) and, once logged in,
  ``x-auth-user`` / ``x-auth-key`` (the "KOSyncAuth" middleware); bodies are JSON ("Format.JSON").
- main.lua, ``KOSync:doRegister`` / ``KOSync:login``: the key is ``md5(password)``, sent as
  ``password`` to ``register`` (POST /users/create, success = 201) and as ``x-auth-key`` to
  ``authorize`` (GET /users/auth, success = 200).
- main.lua, ``KOSync:updateProgress``: PUT /syncs/progress with ``document`` (the file's
  ``partial_md5_checksum``, frontend/util.lua ``util.partialMD5``, or ``md5(file name)`` in its
  filename mode), ``progress`` (``tostring`` of an xpointer, or of the page for a PDF),
  ``percentage`` (0-1), ``device``, ``device_id`` and, when enabled, ``metadata``; success = 200,
  401 = bad login (api.json: expected_status [200, 202, 401]).
- main.lua, ``KOSync:getProgress``: GET /syncs/progress/:document; a body without
  ``percentage`` means "No progress found for this document".
The error statuses and codes are those of koreader/koreader-sync-server (config/errors.lua).
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in

PASSWORD = "a reading password"
LOGIN = "reader"
ACCEPT = {"accept": "application/vnd.koreader.v1+json"}


def koreader_partial_md5(path: Path) -> str:
    """frontend/util.lua ``util.partialMD5``, line by line: step, size = 1024, 1024; for i = -1,
    10: seek to lshift(step, 2*i) (0 for i = -1 in LuaJIT), read size bytes, stop when nothing."""
    md5 = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as f:
        for i in range(-1, 11):
            f.seek((1024 << (2 * i)) if i >= 0 else 0)
            sample = f.read(1024)
            if not sample:
                break
            md5.update(sample)
    return md5.hexdigest()


def userkey(password: str) -> str:
    return hashlib.md5(password.encode(), usedforsecurity=False).hexdigest()


def auth(password: str = PASSWORD, user: str = LOGIN) -> dict[str, str]:
    return {**ACCEPT, "x-auth-user": user, "x-auth-key": userkey(password)}


def progress_body(document: str, progress: str, percentage: float) -> dict[str, Any]:
    """KOSyncClient:update_progress's payload (metadata as sent with "send metadata" on)."""
    return {
        "document": document,
        "metadata": {"filename": "frankenstein", "title": "Frankenstein", "authors": "Shelley"},
        "progress": progress,
        "percentage": percentage,
        "device": "Kobo",
        "device_id": "6E3C1D2B4F5A47D8A1B2C3D4E5F60718",
    }


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, books_dir: Path) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("kosync-home")
    formats = books_dir / "formats"
    ids = {}
    for name in ("frankenstein.epub", "frankenstein.pdf"):
        ids[name] = ok_json(run_folio_in(home, "add", str(formats / name), "--json"))
    ok(run_folio_in(home, "users", "sync-password", LOGIN, input=PASSWORD + "\n"))
    return {"home": home, "formats": formats, "added": ids}


@pytest.fixture(scope="module")
def server(library: dict[str, Any]) -> Iterator[FolioServer]:
    with FolioServer(library["home"]) as s:
        yield s


@pytest.fixture
def client(server: FolioServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def book_id(client: httpx.Client, fmt: str) -> str:
    books = client.get("/api/v1/books").json()
    return next(str(b["id"]) for b in books if b["format"] == fmt)


def position(client: httpx.Client, fmt: str) -> dict[str, Any]:
    book = client.get(f"/api/v1/books/{book_id(client, fmt)}").json()
    return dict(book["reading_position"])


def test_register_and_login_as_the_plugin_does(client: httpx.Client) -> None:
    register = client.post(
        "/users/create", json={"username": LOGIN, "password": userkey(PASSWORD)}, headers=ACCEPT
    )
    assert register.status_code == 201 and register.json() == {"username": LOGIN}
    assert client.get("/users/auth", headers=auth()).status_code == 200


def test_an_epub_xpointer_moves_folio_to_that_chapter(
    client: httpx.Client, library: dict[str, Any]
) -> None:
    document = koreader_partial_md5(library["formats"] / "frankenstein.epub")
    # DocFragment[11] is the eleventh (X)HTML document of the spine: Chapter 5 in this EPUB
    # (title page, contents, Letters 1-4, Chapters 1-5).
    xpointer = "/body/DocFragment[11]/body/section/p[4]/text().20"

    pushed = client.put(
        "/syncs/progress", json=progress_body(document, xpointer, 0.2034), headers=auth()
    )

    assert pushed.status_code == 200
    assert pushed.json()["document"] == document and isinstance(pushed.json()["timestamp"], int)
    where = position(client, "epub")
    assert where["chapter"] == "Chapter 5"
    # The reader stands 20 characters into the fourth paragraph of Chapter 5's document:
    # "Oh! No mortal could| support the horror...". folio's text stops exactly there.
    limit = where["char_offset"]
    read = client.get(
        f"/api/v1/books/{book_id(client, 'epub')}/text",
        params={"start": limit - 40, "end": limit},
    ).json()
    assert read["text"].endswith("\n\nOh! No mortal could")
    assert where["source"] == "KOReader on Kobo"
    assert where["description"].endswith("from KOReader on Kobo, just now")
    back = client.get(f"/syncs/progress/{document}", headers=auth()).json()
    assert back["progress"] == xpointer and back["percentage"] == 0.2034
    assert back["device"] == "Kobo" and back["document"] == document


def test_a_pdf_page_moves_folio_to_that_page(client: httpx.Client, library: dict[str, Any]) -> None:
    document = koreader_partial_md5(library["formats"] / "frankenstein.pdf")

    pushed = client.put(
        "/syncs/progress", json=progress_body(document, "45", 45 / 121), headers=auth()
    )

    assert pushed.status_code == 200
    where = position(client, "pdf")
    assert where["kind"] == "page" and where["value"] == 45
    assert where["page"] == "45"
    assert "from KOReader on Kobo" in where["description"]


def test_every_client_shows_where_the_position_came_from(
    client: httpx.Client, library: dict[str, Any]
) -> None:
    document = koreader_partial_md5(library["formats"] / "frankenstein.pdf")
    client.put("/syncs/progress", json=progress_body(document, "30", 30 / 121), headers=auth())

    shown = ok(run_folio_in(library["home"], "show", book_id(client, "pdf")))
    assert "from KOReader on Kobo" in shown and "p. 30 of 121" in shown
    models = client.get("/v1/models", headers={"authorization": "Bearer any"}).json()["data"]
    assert any("from KOReader on Kobo" in m["position"] for m in models)


def test_a_push_for_a_book_not_added_yet_is_applied_when_it_is_added(
    client: httpx.Client, library: dict[str, Any]
) -> None:
    # KOReader's filename mode: md5 of the file name.
    document = hashlib.md5(b"frankenstein.md", usedforsecurity=False).hexdigest()
    assert client.get(f"/syncs/progress/{document}", headers=auth()).json() == {}

    pushed = client.put("/syncs/progress", json=progress_body(document, "0", 0.5), headers=auth())
    assert pushed.status_code == 200
    added = ok_json(
        run_folio_in(library["home"], "add", str(library["formats"] / "frankenstein.md"), "--json")
    )

    book = client.get(f"/api/v1/books/{added['book']['id']}").json()
    assert book["reading_position"]["percent"] == 50
    assert book["reading_position"]["source"] == "KOReader on Kobo"


def test_a_wrong_password_gets_401(client: httpx.Client, library: dict[str, Any]) -> None:
    document = koreader_partial_md5(library["formats"] / "frankenstein.epub")
    wrong = auth(password="not the password")

    assert client.get("/users/auth", headers=wrong).status_code == 401
    put = client.put("/syncs/progress", json=progress_body(document, "1", 0.1), headers=wrong)
    assert put.status_code == 401 and put.json()["code"] == 2001
    assert client.get(f"/syncs/progress/{document}", headers=wrong).status_code == 401
    assert client.get("/users/auth", headers=ACCEPT).status_code == 401  # no login at all
    taken = client.post(
        "/users/create", json={"username": LOGIN, "password": userkey("x")}, headers=ACCEPT
    )
    assert taken.status_code == 402 and taken.json()["code"] == 2002


def test_an_unknown_document_has_no_progress(client: httpx.Client) -> None:
    unknown = client.get(f"/syncs/progress/{'0' * 32}", headers=auth())
    assert unknown.status_code == 200 and unknown.json() == {}


def test_a_malformed_body_gets_the_reference_servers_status(client: httpx.Client) -> None:
    headers = {**auth(), "content-type": "application/json"}
    not_json = client.put("/syncs/progress", content=b"{not json", headers=headers)
    assert (not_json.status_code, not_json.json()["code"]) == (400, 103)
    a_list = client.put("/syncs/progress", json=[1, 2], headers=auth())
    assert (a_list.status_code, a_list.json()["code"]) == (400, 104)
    no_document = client.put(
        "/syncs/progress", json={"progress": "1", "percentage": 0.1, "device": "K"}, headers=auth()
    )
    assert (no_document.status_code, no_document.json()["code"]) == (403, 2004)
    no_percentage = client.put(
        "/syncs/progress", json={"document": "abc", "progress": "1", "device": "K"}, headers=auth()
    )
    assert (no_percentage.status_code, no_percentage.json()["code"]) == (403, 2003)


def test_with_users_a_device_signs_in_with_its_sync_login_not_a_token(
    tmp_path: Path, books_dir: Path
) -> None:
    """Once folio has users every API request needs a bearer token, and the request guard checks
    the credentials of a state-changing request before its body: KOReader has no token, only its
    x-auth headers, and still pushes; its push moves only its own user's book."""
    home = tmp_path / "home"
    book = books_dir / "formats" / "frankenstein.md"
    local = ok_json(run_folio_in(home, "add", str(book), "--json"))["book"]["id"]
    token = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))["token"]
    ok(run_folio_in(home, "users", "sync-password", "alice", input=PASSWORD + "\n"))
    document = koreader_partial_md5(book)

    bearer = {"authorization": f"Bearer {token}"}
    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        job = client.post(
            "/api/v1/books", files={"file": (book.name, book.read_bytes())}, headers=bearer
        ).json()["job"]
        while job["status"] in ("queued", "running"):
            job = client.get(f"/api/v1/jobs/{job['job_id']}", headers=bearer).json()
        assert job["status"] == "done", job
        assert client.get("/users/auth", headers=auth(user="alice")).status_code == 200
        pushed = client.put(
            "/syncs/progress", json=progress_body(document, "0", 0.4), headers=auth(user="alice")
        )
        assert pushed.status_code == 200
        no_token = client.put("/api/v1/books/x/position", json={"percent": 1})
        assert no_token.status_code == 401  # the API itself still wants a token
        (alices,) = client.get("/api/v1/books", headers=bearer).json()

    assert alices["reading_position"]["percent"] == 40
    assert alices["reading_position"]["source"] == "KOReader on Kobo"
    # The same file added by the local user (before alice existed) is not alice's to move.
    assert "KOReader" not in ok(run_folio_in(home, "show", local))


def test_failed_logins_over_the_limit_are_refused_as_koreader_shows_it(tmp_path: Path) -> None:
    """After FOLIO_SYNC_LOGIN_FAILURES wrong keys the login is refused, even with its right key,
    until the window ends: its Login dialog gets the status it shows a message for (401, with
    Retry-After), a push gets 429 (which the plugin queues and retries), a pull 429. Another
    login from another address is not held back; the address limit holds back every login."""
    home = tmp_path / "home"
    for name in ("alice", "bob"):
        ok(run_folio_in(home, "users", "add", name))
        ok(run_folio_in(home, "users", "sync-password", name, input=PASSWORD + "\n"))
    limits = {"FOLIO_SYNC_LOGIN_FAILURES": "3", "FOLIO_SYNC_ADDRESS_FAILURES": "6"}
    with FolioServer(home, env=limits) as server, httpx.Client(base_url=server.url) as client:
        for n in range(3):
            wrong = client.get("/users/auth", headers=auth(password=f"guess {n}", user="alice"))
            assert wrong.status_code == 401 and wrong.json()["message"] == "Unauthorized"

        refused = client.get("/users/auth", headers=auth(user="alice"))
        assert refused.status_code == 401, refused.text
        assert refused.json()["message"].startswith("Too many failed sync logins: try again in")
        assert 890 <= int(refused.headers["Retry-After"]) <= 900
        push = client.put("/syncs/progress", json=progress_body("0" * 32, "1", 0.1),
                          headers=auth(user="alice"))  # fmt: skip
        assert push.status_code == 429 and "Retry-After" in push.headers
        assert push.json()["code"] == 2001
        pull = client.get(f"/syncs/progress/{'0' * 32}", headers=auth(user="alice"))
        assert pull.status_code == 429
        assert client.get("/users/auth", headers=auth(user="bob")).status_code == 200

        for n in range(3):  # the address's 6th failure
            client.get("/users/auth", headers=auth(password=f"guess {n}", user="bob"))
        bob = client.get("/users/auth", headers=auth(user="bob"))
        assert bob.status_code == 401 and "Too many failed" in bob.json()["message"]
        register = client.post("/users/create", json={"username": "bob", "password": "x" * 32},
                               headers=ACCEPT)  # fmt: skip
        assert register.status_code == 402 and "Retry-After" in register.headers


def calibre_copy(source: Path, target: Path, *, identifier: str | None = None) -> Path:
    """The EPUB as Calibre exports it: the package document re-written with other metadata (a
    calibre:timestamp, here), every other entry as it was; ``identifier`` also replaces the
    package's unique identifier (another edition, as far as the structure digest can tell)."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as copy:
        for info in original.infolist():
            data = original.read(info)
            if info.filename.endswith(".opf"):
                stamp = '<meta name="calibre:timestamp" content="2026-11-26T10:00:00+00:00"/>'
                text = data.decode("utf-8").replace("</metadata>", f"{stamp}</metadata>")
                if identifier is not None:
                    root = etree.fromstring(text.encode("utf-8"))
                    unique = root.get("unique-identifier")
                    (element,) = root.xpath(f"//*[local-name()='identifier'][@id='{unique}']")
                    element.text = identifier
                    text = etree.tostring(root, encoding="unicode")
                data = text.encode("utf-8")
            copy.writestr(info, data)
    return target


def structure_digest(path: Path) -> str:
    """MD5 of the package's unique identifier and its spine hrefs (manifest order of the spine,
    joined by newlines): the "structure" identifier of a push."""
    with zipfile.ZipFile(path) as z:
        container = etree.fromstring(z.read("META-INF/container.xml"))
        (opf_path,) = container.xpath("//*[local-name()='rootfile']/@full-path")
        opf = etree.fromstring(z.read(opf_path))
    unique = opf.get("unique-identifier")
    (identifier,) = opf.xpath(f"//*[local-name()='identifier'][@id='{unique}']/text()")
    hrefs = {i.get("id"): i.get("href") for i in opf.xpath("//*[local-name()='item']")}
    spine = [hrefs[i] for i in opf.xpath("//*[local-name()='itemref']/@idref")]
    joined = "\n".join([identifier.strip(), *spine]).encode("utf-8")
    return hashlib.md5(joined, usedforsecurity=False).hexdigest()


def test_a_calibre_copy_is_matched_by_structure_and_another_edition_by_title(
    tmp_path: Path, books_dir: Path
) -> None:
    """KOReader reads a copy Calibre re-wrote (another partial MD5): the push's structure digest
    finds the book and its xpointer is followed. A copy with another identifier (another edition)
    is matched by the title and authors its metadata names, the book being the user's only one
    with them: its percentage is taken, moved back, and its xpointer (in Chapter 5) is not."""
    home = tmp_path / "home"
    original = books_dir / "formats" / "frankenstein.epub"
    added = ok_json(run_folio_in(home, "add", str(original), "--json"))["book"]["id"]
    ok(run_folio_in(home, "users", "sync-password", LOGIN, input=PASSWORD + "\n"))
    exported = calibre_copy(original, tmp_path / "Frankenstein - Mary Shelley.epub")
    edition = calibre_copy(original, tmp_path / "edition.epub", identifier="urn:isbn:9780000000")
    assert koreader_partial_md5(exported) != koreader_partial_md5(original)
    assert structure_digest(exported) == structure_digest(original) != structure_digest(edition)
    chapter_5 = "/body/DocFragment[11]/body/section/p[4]/text().20"

    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        book = client.get(f"/api/v1/books/{added}").json()
        body = progress_body(koreader_partial_md5(exported), chapter_5, 0.9)
        body["identifiers"] = {"structure": structure_digest(exported)}
        assert client.put("/syncs/progress", json=body, headers=auth()).status_code == 200
        where = client.get(f"/api/v1/books/{added}").json()["reading_position"]
        assert where["chapter"] == "Chapter 5", where
        text = client.get(
            f"/api/v1/books/{added}/text",
            params={"start": where["char_offset"] - 40, "end": where["char_offset"]},
        )
        assert text.json()["text"].endswith("\n\nOh! No mortal could")  # fmt: skip
        assert where["source"] == "KOReader on Kobo (matched by the EPUB's identifier and spine)"

        body = progress_body(koreader_partial_md5(edition), chapter_5, 0.5)
        body["metadata"] = {"filename": edition.name, "title": book["title"],
                            "authors": book["author"]}  # fmt: skip
        assert client.put("/syncs/progress", json=body, headers=auth()).status_code == 200
        where = client.get(f"/api/v1/books/{added}").json()["reading_position"]
        assert where["chapter"] != "Chapter 5"  # the xpointer of another edition is not followed
        half = round(book["char_count"] * 0.5)
        assert half - 6000 <= where["char_offset"] <= half - 4000, (where, half)
        assert where["source"] == "KOReader on Kobo (matched by title and authors)"

        body["metadata"]["title"] = "Another Book"  # fits none of the user's books: kept only
        body["percentage"] = 0.7
        assert client.put("/syncs/progress", json=body, headers=auth()).status_code == 200
        assert client.get(f"/api/v1/books/{added}").json()["reading_position"] == where
    assert "from KOReader on Kobo (matched by title and authors)" in ok(
        run_folio_in(home, "show", added)
    )
