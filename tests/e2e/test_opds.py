"""The OPDS catalogue against a real ``folio serve``, asked as KOReader's OPDS browser asks it
(koreader/koreader, plugins/opds.koplugin/opdsbrowser.lua):

- ``fetchFeed``: every request, HEAD first then GET, carries ``Accept-Encoding: identity``, an
  ``Accept`` preferring OPDS 2.0, and the catalogue's user name and password as HTTP Basic
  (LuaSocket's ``user``/``password``); a 401 says "Authentication required".
- ``genItemTableFromCatalog``: feed links whose type holds ``application/atom+xml`` by rel
  (``next`` pages), an ``application/opensearchdescription+xml`` link whose ``Url`` template
  (``{searchTerms}`` replaced by the url-encoded input) is the search; an entry is a subsection when
  a link has a catalogue type and a ``subsection``/``sort/new`` rel, a book when a link's rel
  starts with ``http://opds-spec.org/acquisition``.
- ``downloadFile``: GET of the acquisition href with the same Basic credentials, saved as is;
  KOReader's sync then names the file by ``util.partialMD5`` of its bytes.

Two users share the server; each has a sync login. The books come from ../shared/data/books.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from lxml import etree

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in
from tests.e2e.test_kosync import koreader_partial_md5

ATOM = "{http://www.w3.org/2005/Atom}"
OSD = "{http://a9.com/-/spec/opensearch/1.1/}"
ACQUIRE = "http://opds-spec.org/acquisition"
NAVIGATION = "application/atom+xml;profile=opds-catalog;kind=navigation"
ACQUISITION = "application/atom+xml;profile=opds-catalog;kind=acquisition"
KOREADER = {
    "Accept-Encoding": "identity",
    "Accept": "application/opds+json, application/atom+xml;profile=opds-catalog, */*",
}
ALICE, BOB = ("alice", "alice's reading password"), ("bob", "bob's reading password")


def _upload(c: httpx.Client, token: str, path: Path) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    r = c.post("/api/v1/books", files={"file": (path.name, path.read_bytes())}, headers=headers)
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = c.get(r.headers["location"], headers=headers).json()
        if job["status"] == "done":
            return str(job["book_id"])
        assert job["status"] != "failed", job
        time.sleep(0.1)
    raise AssertionError(job)


NOTES = b"# Notes\n\n## Chapter 1\n\n" + b"Bob keeps notes on the lighthouse keepers. " * 80


def _notes(folder: Path) -> Path:
    path = folder / "notes.md"
    path.write_bytes(NOTES)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, books_dir: Path) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("opds-home")
    formats = books_dir / "formats"
    tokens = {}
    for name, password in (ALICE, BOB):
        tokens[name] = ok_json(run_folio_in(home, "users", "add", name, "--json"))["token"]
        ok(run_folio_in(home, "users", "sync-password", name, input=password + "\n"))
    with FolioServer(home) as server, httpx.Client(base_url=server.url, timeout=60) as c:
        ids = {
            "alice.epub": _upload(c, tokens["alice"], formats / "frankenstein.epub"),
            "alice.pdf": _upload(c, tokens["alice"], formats / "frankenstein.pdf"),
            "bob.md": _upload(c, tokens["bob"], _notes(home.parent)),
        }
        series = {"series": "Gothic Tales", "series_index": 1}
        auth = {"Authorization": f"Bearer {tokens['alice']}"}
        assert c.patch(f"/api/v1/books/{ids['alice.pdf']}", json=series, headers=auth).is_success
        yield {"server": server, "home": home, "formats": formats, "ids": ids, "tokens": tokens}


@pytest.fixture
def koreader(served: dict[str, Any]) -> Iterator[httpx.Client]:
    """The OPDS browser with alice's catalogue login."""
    with httpx.Client(base_url=served["server"].url, auth=ALICE, headers=KOREADER, timeout=60) as c:
        yield c


def _feed(c: httpx.Client, href: str) -> etree._Element:
    head = c.head(href)  # KOReader asks for headers first (Last-Modified: a cached feed)
    assert head.status_code == 200 and "last-modified" not in head.headers
    r = c.get(href)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/atom+xml")
    root = etree.fromstring(r.content)
    assert root.tag == f"{ATOM}feed"
    return root


def _links(element: etree._Element) -> dict[str, etree._Element]:
    return {str(link.get("rel")): link for link in element.findall(f"{ATOM}link")}


def _entries(root: etree._Element) -> dict[str, etree._Element]:
    return {str(e.findtext(f"{ATOM}title")): e for e in root.findall(f"{ATOM}entry")}


def _subsection(entry: etree._Element) -> str:
    """The href KOReader opens for a navigation entry (opdsbrowser.lua: catalog_type + rel)."""
    for link in entry.findall(f"{ATOM}link"):
        kind, rel = str(link.get("type")), link.get("rel")
        if "application/atom+xml" in kind and rel in (
            "subsection",
            "http://opds-spec.org/sort/new",
        ):
            return str(link.get("href"))
    raise AssertionError(etree.tostring(entry))


def _acquisitions(entry: etree._Element) -> list[etree._Element]:
    return [
        link
        for link in entry.findall(f"{ATOM}link")
        if str(link.get("rel", "")).startswith(ACQUIRE)
    ]


def test_the_root_is_a_navigation_feed_koreader_follows(koreader: httpx.Client) -> None:
    root = _feed(koreader, "/opds")
    links = _links(root)
    assert links["self"].get("type") == NAVIGATION and links["start"].get("href") == "/opds"
    assert links["search"].get("type") == "application/opensearchdescription+xml"
    entries = _entries(root)
    assert set(entries) == {"Recently added", "By author", "By series", "All books"}
    recent = entries["Recently added"].find(f"{ATOM}link")
    assert recent is not None and recent.get("rel") == "http://opds-spec.org/sort/new"
    assert recent.get("type") == ACQUISITION
    assert entries["By author"].find(f"{ATOM}link").get("type") == NAVIGATION  # type: ignore[union-attr]


def test_recent_lists_only_the_readers_books_with_their_files(
    koreader: httpx.Client, served: dict[str, Any]
) -> None:
    root = _feed(koreader, _subsection(_entries(_feed(koreader, "/opds"))["Recently added"]))
    ids = served["ids"]
    entries = root.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}id") for e in entries] == [
        f"urn:folio:book:{ids['alice.pdf']}",  # the last added first
        f"urn:folio:book:{ids['alice.epub']}",
    ]
    kinds = [
        (a.get("type"), str(a.get("href")).rsplit(".", 1)[-1]) for a in _acquisitions(entries[0])
    ]
    assert kinds == [("application/pdf", "pdf")]
    assert [a.get("type") for a in _acquisitions(entries[1])] == ["application/epub+zip"]
    assert "Frankenstein" in str(entries[1].findtext(f"{ATOM}title"))
    assert root.findtext(f"{OSD}totalResults") == "2"


def test_by_author_and_by_series_lead_to_the_books(koreader: httpx.Client) -> None:
    authors = _entries(_feed(koreader, "/opds/authors"))  # as each file names its author
    assert authors and all("Shelley" in name for name in authors)
    books = [
        b for a in authors.values() for b in _feed(koreader, _subsection(a)).findall(f"{ATOM}entry")
    ]
    assert len(books) == 2 and all(_acquisitions(b) for b in books)
    series = _entries(_feed(koreader, "/opds/series"))
    assert list(series) == ["Gothic Tales"]
    (book,) = _feed(koreader, _subsection(series["Gothic Tales"])).findall(f"{ATOM}entry")
    assert _acquisitions(book)[0].get("type") == "application/pdf"


def test_the_opensearch_description_gives_a_search_that_finds_the_book(
    koreader: httpx.Client,
) -> None:
    href = _links(_feed(koreader, "/opds"))["search"].get("href")
    description = etree.fromstring(koreader.get(str(href)).content)
    (url,) = description.findall(f"{OSD}Url")
    assert url.get("type", "").startswith("application/atom+xml")
    template = str(url.get("template"))
    found = _feed(koreader, template.replace("{searchTerms}", quote("mary shelley frankenstein")))
    assert len(found.findall(f"{ATOM}entry")) == 2
    nothing = _feed(koreader, template.replace("{searchTerms}", quote("Moby Dick whale")))
    assert nothing.findall(f"{ATOM}entry") == []


def _downloaded(c: httpx.Client, href: str) -> httpx.Response:
    head = c.head(href)  # KOReader's getServerFileName
    assert head.status_code == 200 and 'filename="' in head.headers["content-disposition"]
    return c.get(href)


def test_a_download_is_the_imported_file_and_its_digest_is_the_one_sync_knows(
    koreader: httpx.Client, served: dict[str, Any], tmp_path: Path
) -> None:
    ids = served["ids"]
    root = _feed(koreader, "/opds/all")
    entry = next(
        e
        for e in root.findall(f"{ATOM}entry")
        if e.findtext(f"{ATOM}id", "").endswith(ids["alice.epub"])
    )
    r = _downloaded(koreader, str(_acquisitions(entry)[0].get("href")))
    assert r.status_code == 200 and r.headers["content-type"] == "application/epub+zip"
    saved = tmp_path / "Mary Shelley - Frankenstein.epub"  # KOReader's own name for it
    saved.write_bytes(r.content)
    original = served["formats"] / "frankenstein.epub"
    assert saved.read_bytes() == original.read_bytes()
    with sqlite3.connect(served["home"] / "folio.db") as db:
        (stored,) = db.execute(
            "SELECT partial_md5 FROM book_documents WHERE book_id = ?", (ids["alice.epub"],)
        ).fetchone()
    assert koreader_partial_md5(saved) == stored


def test_another_users_books_are_absent_and_their_files_not_found(
    served: dict[str, Any], koreader: httpx.Client
) -> None:
    ids = served["ids"]
    with httpx.Client(base_url=served["server"].url, auth=BOB, headers=KOREADER) as bob:
        listed = [e.findtext(f"{ATOM}id") for e in _feed(bob, "/opds/all").findall(f"{ATOM}entry")]
        assert listed == [f"urn:folio:book:{ids['bob.md']}"]
        assert bob.get(f"/opds/books/{ids['alice.pdf']}/file.pdf").status_code == 404
    assert koreader.get(f"/opds/books/{ids['bob.md']}/file.md").status_code == 404
    assert koreader.get("/opds/books/no-such-book/file.epub").status_code == 404


def test_a_wrong_or_missing_login_is_asked_for_basic_credentials(served: dict[str, Any]) -> None:
    url = served["server"].url
    for auth in (("alice", "not her password"), ("nobody", ALICE[1]), None):
        r = httpx.get(f"{url}/opds", auth=auth, headers=KOREADER)
        assert r.status_code == 401, (auth, r.text)
        assert r.headers["www-authenticate"].startswith('Basic realm="folio"')
    broken = httpx.get(f"{url}/opds/recent", headers={"Authorization": "Basic %%%"})
    assert broken.status_code == 401


def test_a_folio_token_signs_in_too(served: dict[str, Any]) -> None:
    url, token = served["server"].url, served["tokens"]["alice"]
    bearer = httpx.get(f"{url}/opds/all", headers={"Authorization": f"Bearer {token}"})
    as_password = httpx.get(f"{url}/opds/all", auth=("alice", token))
    assert bearer.status_code == as_password.status_code == 200
    assert httpx.get(f"{url}/opds/all", auth=("bob", token)).status_code == 401


def _kept(home: Path, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    return home / "book-files" / digest[:2] / digest


def test_a_book_whose_file_was_not_kept_is_listed_without_a_download(
    served: dict[str, Any],
) -> None:
    """A book imported before folio kept files (here: its file taken out of the store)."""
    ids, home = served["ids"], served["home"]
    kept = _kept(home, NOTES)
    kept.unlink(missing_ok=True)
    with httpx.Client(base_url=served["server"].url, auth=BOB, headers=KOREADER) as bob:
        listed = _feed(bob, "/opds/recent").findall(f"{ATOM}entry")
        entry = next(e for e in listed if e.findtext(f"{ATOM}id", "").endswith(ids["bob.md"]))
        assert _acquisitions(entry) == []
        assert "add the same file" in str(entry.findtext(f"{ATOM}content"))
        assert bob.get(f"/opds/books/{ids['bob.md']}/file.md").status_code == 404


def test_a_shared_file_is_deleted_with_the_last_book_that_has_it(served: dict[str, Any]) -> None:
    tokens, home = served["tokens"], served["home"]
    text = b"CHAPTER 1\n\n" + b"The keeper Marta counted the ships in the bay. " * 60
    path = home.parent / "keeper.txt"
    path.write_bytes(text)
    with httpx.Client(base_url=served["server"].url, timeout=60) as c:
        alice_book, bob_book = _upload(c, tokens["alice"], path), _upload(c, tokens["bob"], path)
        kept = _kept(home, text)
        assert kept.read_bytes() == text  # one file for both copies
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        assert c.delete(f"/api/v1/books/{alice_book}", headers=alice).status_code == 204
        assert kept.exists()
        assert c.get(f"/opds/books/{bob_book}/file.txt", auth=BOB).content == text
        bob = {"Authorization": f"Bearer {tokens['bob']}"}
        assert c.delete(f"/api/v1/books/{bob_book}", headers=bob).status_code == 204
        assert not kept.exists()
        assert c.get(f"/opds/books/{bob_book}/file.txt", auth=BOB).status_code == 404


def test_the_opds2_catalogue_leads_to_the_same_books_and_files(
    koreader: httpx.Client, served: dict[str, Any]
) -> None:
    """opdsbrowser.lua ``genItemTableFromCatalog2``: navigation hrefs, publications' metadata
    and acquisition links, and the search link's ``{?query}`` made ``?query=%s``."""
    root = koreader.get("/opds/v2")
    assert root.headers["content-type"].startswith("application/opds+json")
    feed = root.json()
    navigation = {n["title"]: n["href"] for n in feed["navigation"]}
    recent = koreader.get(navigation["Recently added"]).json()
    ids = [p["metadata"]["identifier"] for p in recent["publications"]]
    assert ids == [f"urn:folio:book:{served['ids'][k]}" for k in ("alice.pdf", "alice.epub")]
    (acquire,) = recent["publications"][1]["links"]
    assert acquire["rel"] == ACQUIRE and acquire["type"] == "application/epub+zip"
    original = (served["formats"] / "frankenstein.epub").read_bytes()
    assert koreader.get(acquire["href"]).content == original
    search = next(link["href"] for link in feed["links"] if link["rel"] == "search")
    template = search.split("{")[0] + "?query=%s"
    found = koreader.get(template.replace("%s", quote("frankenstein"))).json()
    assert len(found["publications"]) == 2
    with httpx.Client(base_url=served["server"].url, auth=BOB, headers=KOREADER) as bob:
        theirs = bob.get("/opds/v2/all").json()["publications"]
        assert [p["metadata"]["identifier"] for p in theirs] == [
            f"urn:folio:book:{served['ids']['bob.md']}"
        ]
