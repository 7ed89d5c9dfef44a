"""HTTP requests in ``/metrics``: counted by method, route TEMPLATE and status (never the path a
client sent), timed, whatever answers them (a route, a mounted app, a middleware refusing before
routing, an exception); the process collectors and ``folio_build_info`` (one process; the
workers of ``folio serve`` are in tests/e2e/test_observability.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from folio.adapters.observability.metrics import PrometheusTelemetry
from folio.entrypoints.api.http_metrics import UNMATCHED, HttpMetricsMiddleware

Samples = dict[tuple[str, frozenset[Any]], float]


def samples(telemetry: PrometheusTelemetry) -> Samples:
    body, _ = telemetry.render()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


def requests_by(found: Samples) -> dict[tuple[str, str, str], float]:
    return {
        (dict(labels)["method"], dict(labels)["route"], dict(labels)["status"]): v
        for (name, labels), v in found.items()
        if name == "folio_http_requests_total"
    }


class RefusePosts:
    """Refuses a POST to /api/... before routing, as folio's request guard does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and "nope" in scope["path"]:
            await JSONResponse({"error": "no"}, status_code=401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


@pytest.fixture
def served() -> tuple[TestClient, PrometheusTelemetry]:
    telemetry = PrometheusTelemetry(version="9.8.7")
    app = FastAPI()

    @app.get("/api/v1/books/{book_id}")
    def book(book_id: str) -> dict[str, str]:
        if book_id == "missing":
            raise HTTPException(404)
        return {"id": book_id}

    @app.post("/api/v1/books/{book_id}/nope")
    def refused(book_id: str) -> dict[str, str]:
        return {}

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    app.mount("/mcp", PlainTextResponse("mounted"))
    app.add_middleware(RefusePosts)
    app.add_middleware(HttpMetricsMiddleware, telemetry=telemetry)
    return TestClient(app, raise_server_exceptions=False), telemetry


def test_requests_are_counted_by_route_template_and_status(
    served: tuple[TestClient, PrometheusTelemetry],
) -> None:
    client, telemetry = served
    for book_id in ("5f4e43b4", "a1", "a2", "missing"):
        client.get(f"/api/v1/books/{book_id}")
    client.delete("/api/v1/books/a1")  # the path exists, the method does not: 405
    client.post("/api/v1/books/a1/nope")  # refused before routing
    client.get("/boom")
    client.get("/mcp/anything/at/all")
    client.get("/no/such/path")
    client.request("BREW", "/api/v1/books/a1")

    assert requests_by(samples(telemetry)) == {
        ("GET", "/api/v1/books/{book_id}", "200"): 3,
        ("GET", "/api/v1/books/{book_id}", "404"): 1,
        ("DELETE", "/api/v1/books/{book_id}", "405"): 1,
        ("POST", "/api/v1/books/{book_id}/nope", "401"): 1,
        ("GET", "/boom", "500"): 1,
        ("GET", "/mcp/{path}", "200"): 1,
        ("GET", UNMATCHED, "404"): 1,
        ("OTHER", "/api/v1/books/{book_id}", "405"): 1,
    }


def test_each_request_is_timed_under_its_template(
    served: tuple[TestClient, PrometheusTelemetry],
) -> None:
    client, telemetry = served
    for book_id in ("x", "y"):
        client.get(f"/api/v1/books/{book_id}")
    found = samples(telemetry)
    labels = frozenset({"method": "GET", "route": "/api/v1/books/{book_id}"}.items())
    assert found[("folio_http_request_duration_seconds_count", labels)] == 2
    assert found[("folio_http_request_duration_seconds_sum", labels)] > 0
    assert not any(dict(lb).get("route", "").endswith("/x") for _, lb in found)  # no raw path


def test_the_process_its_memory_cpu_and_the_version_are_exposed() -> None:
    found = samples(PrometheusTelemetry(version="9.8.7"))
    names = {name for name, _ in found}
    assert {
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
        "process_open_fds",
        "python_info",
    } <= names
    assert found[("process_resident_memory_bytes", frozenset())] > 1_000_000
    assert found[("folio_build_info", frozenset({("version", "9.8.7")}))] == 1
