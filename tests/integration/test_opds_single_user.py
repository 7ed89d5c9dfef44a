"""The OPDS catalogue of a server without users (the loopback-only local reader), in process on
real SQLite: open like every other route there, while a sync login KOReader sends is still
checked (and its failures limited as progress sync limits them); HEAD answers without a body;
the download is the imported file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.bootstrap import Container
from folio.config import load_settings
from folio.entrypoints.api.app import create_app

TEXT = "# The Keeper\n\n## Chapter 1\n\n" + "The keeper wound the clock before the storm. " * 40
PASSWORD = "a reading password"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, str, bytes]]:
    env = {
        "FOLIO_HOME": str(tmp_path / "home"),
        "FOLIO_EMBEDDING_MODEL": "hashing",
        "FOLIO_SYNC_LOGIN_FAILURES": "3",
    }
    container = Container(load_settings(env=env))
    source = tmp_path / "keeper.md"
    source.write_text(TEXT, encoding="utf-8")
    book = container.ingest.execute(source).book
    container.progress_sync.set_login("alice", PASSWORD)  # no users: the local reader's login
    with TestClient(create_app(container), base_url="http://127.0.0.1") as client:
        yield client, book.id, source.read_bytes()


def test_without_users_the_catalogue_is_the_local_readers(
    served: tuple[TestClient, str, bytes],
) -> None:
    client, book_id, data = served
    for auth in (None, ("alice", PASSWORD)):
        feed = client.get("/opds/all", auth=auth)
        assert feed.status_code == 200 and f"urn:folio:book:{book_id}" in feed.text
    assert client.get(f"/opds/books/{book_id}/file.md").content == data
    wrong = client.get("/opds/all", auth=("alice", "not the password"))
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Basic")


def test_head_answers_the_headers_only(served: tuple[TestClient, str, bytes]) -> None:
    client, book_id, data = served
    head = client.head(f"/opds/books/{book_id}/file.md")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(data))
    assert head.headers["content-type"].startswith("text/markdown")
    assert client.head("/opds").status_code == 200


def test_failed_logins_count_as_progress_sync_counts_them(
    served: tuple[TestClient, str, bytes],
) -> None:
    """The catalogue's Basic login is the sync login: its failures count against the same limit
    (here 3 a login), after which it is refused without a key check, even with the password."""
    client, _, _ = served
    for _ in range(3):
        assert client.get("/opds", auth=("alice", "guessing")).status_code == 401
    limited = client.get("/opds", auth=("alice", PASSWORD))
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert "Too many failed sync logins" in limited.text
