"""HEAD of a JSON API route answers as its GET would, headers only: FastAPI's routes take GET
alone, so a HEAD fell through to the web page's catch-all mount and was a 404 (an uptime check by
HEAD, the default of many monitors, saw ``/api/v1/health`` missing; a client probing
``/api/v1/books/{id}/highlights`` saw the book missing). The request guard, in front of every
route, answers it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.testclient import TestClient

from folio.config import load_settings
from folio.entrypoints.api.guard import RequestGuard


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    app = FastAPI()

    @app.get("/api/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/api/v1/chat")
    def chat() -> dict[str, str]:
        return {"answer": "posted"}

    page = tmp_path / "static"
    page.mkdir()
    (page / "index.html").write_text("<p>folio</p>", encoding="utf-8")
    app.mount("/", StaticFiles(directory=page, html=True), name="web")
    settings = load_settings({"FOLIO_HOME": str(tmp_path)})
    guard = RequestGuard(app, settings=settings, authenticate=lambda header: "local")
    return TestClient(guard, base_url="http://127.0.0.1:8000")  # type: ignore[arg-type]


def test_head_of_an_api_route_answers_as_its_get_without_a_body(client: TestClient) -> None:
    got = client.get("/api/v1/health")
    head = client.head("/api/v1/health")

    assert head.status_code == 200 == got.status_code
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == got.headers["content-length"]


def test_head_of_other_paths_answers_as_their_get(client: TestClient) -> None:
    for path in ("/api/v1/chat", "/api/v1/nothing"):
        head = client.head(path)
        assert head.status_code == client.get(path).status_code and head.content == b""
    page = client.head("/")
    assert page.status_code == 200 and page.content == b""
