"""A refused highlights file is named as the reader sent it ("My Clippings.txt is not a Kindle
clippings file"), not as the server kept it while reading it ("metadata.txt": a name the reader
never gave); a name from the client stays a bare, safe file name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.bootstrap import Container
from folio.config import load_settings
from folio.entrypoints.api.app import create_app


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env))
    with TestClient(create_app(container), base_url="http://127.0.0.1") as c:
        yield c


def _refusal(client: TestClient, name: str, data: bytes) -> str:
    response = client.post("/api/v1/highlights/import", files={"file": (name, data)})
    assert response.status_code == 400, response.text
    return str(response.json()["error"]["message"])


@pytest.mark.parametrize(
    ("sent", "named"),
    [
        ("My Clippings.txt", "My Clippings.txt"),
        ("metadata.epub.lua", "metadata.epub.lua"),
        ("../../etc/notes.lua", "notes.lua"),
        ("C:\\Users\\me\\My Clippings.txt", "My Clippings.txt"),
    ],
)
def test_a_refused_file_is_named_as_the_reader_sent_it(
    client: TestClient, sent: str, named: str
) -> None:
    message = _refusal(client, sent, b"return 5" if sent.endswith(".lua") else b"not clippings")
    assert message.startswith(f"{named} is not a "), message


def test_a_file_of_another_kind_is_read_as_clippings_under_its_own_name(
    client: TestClient,
) -> None:
    message = _refusal(client, "notes.csv", b"a,b\n")
    assert message.startswith("notes.csv is not a Kindle clippings file"), message
    for odd in ("..", "\u202e.lua"):
        assert " is not a " in _refusal(client, odd, b"return 5")
