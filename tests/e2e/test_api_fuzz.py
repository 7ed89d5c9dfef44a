"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (schemathesis) against a
real ``folio serve`` process: whatever a client sends, no 5xx, and every answer is one the schema
describes (its status, its media type, its body: schemathesis' response conformance checks, on
every operation). Every operation is fuzzed with data
that fits the schema and with data that does not (schemathesis' negative mode), strings from all
of Unicode (NUL included); then targeted cases no generator makes: a lone surrogate (``\\ud800``)
in every string field, query and path, and JSON nested 100,000 deep, to every operation that
takes a body (the OpenAI-compatible route streamed too). Bounded: a few examples per operation
and mode. The run prints its operations and case counts."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home

schemathesis = pytest.importorskip("schemathesis")

EXAMPLES_PER_OPERATION = 10
SURROGATE = "\\ud800"  # as JSON escapes it: Python's json reads it into a str no codec writes
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory):
    home = demo_book_home(tmp_path_factory, "fuzz")
    env = {"FOLIO_MAX_REQUEST_MB": "1", "FOLIO_MAX_BOOK_MB": "1"}
    with FolioServer(home, env=env) as server:
        yield server


def test_no_generated_request_makes_a_server_error_or_an_undescribed_answer(
    fuzzed_server: FolioServer,
) -> None:
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.core.failures import FailureGroup
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]

    schema = schemathesis.openapi.from_url(f"{fuzzed_server.url}/openapi.json")
    schema.config.update(base_url=fuzzed_server.url)
    schema.config.generation.update(allow_x00=True, codec="utf-8")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    failures: list[str] = []
    undescribed: dict[str, str] = {}  # operation and check -> the first failure's message
    validated: dict[str, int] = {}  # operation -> answers checked against the schema
    calls: dict[str, int] = {}
    unfuzzable: list[str] = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        for operation in operations:

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case: Any) -> None:
                response = case.call(timeout=30)
                kind = str(case.meta.generation.mode.value) if case.meta else "positive"
                calls[kind] = calls.get(kind, 0) + 1
                if response.status_code >= 500:
                    failures.append(f"{case.method} {case.formatted_path}: {response.text[:200]}")
                label = case.operation.label
                validated[label] = validated.get(label, 0) + 1
                try:
                    case.validate_response(response, checks=checks)
                except FailureGroup as group:
                    for failure in group.exceptions:
                        key = f"{label} [{response.status_code}] {failure.title}"
                        undescribed.setdefault(key, str(failure.message)[:300])

            try:
                run()
            except Unsatisfiable:  # no parameter to make invalid (negative mode)
                unfuzzable.append(f"{mode.value} {operation.label}")
    print(
        f"fuzzed {len(operations)} operations: {calls} cases, {len(failures)} server errors,"
        f" {len(undescribed)} kinds of answer the schema does not describe;"
        f" nothing to make invalid in {len(unfuzzable)}"
    )
    assert failures == []
    assert undescribed == {}
    assert sorted(validated) == sorted(o.label for o in operations)  # every operation checked
    assert calls["positive"] >= 5 * len(operations)  # the fuzzer did send requests
    assert calls["negative"] >= 2 * len(operations)


def _with_surrogates(value: Any) -> Any:
    """``value`` (a schema example) with a lone surrogate appended to every string."""
    if isinstance(value, str):
        return value + "\ud800"
    if isinstance(value, dict):
        return {k: _with_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_surrogates(v) for v in value]
    return value


def _body_examples(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, an example body) of every JSON-body operation: each required string
    property gets "x", so the surrogate reaches the validated model."""
    found = []
    components = schema.get("components", {}).get("schemas", {})
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            ref = content["application/json"]["schema"].get("$ref", "")
            model = components.get(ref.rsplit("/", 1)[-1], {})
            body = {name: "x" for name in model.get("properties", {})}
            found.append((method.upper(), path, body))
    return found


def test_targeted_malformed_unicode_and_deep_nesting_are_client_errors(
    fuzzed_server: FolioServer,
) -> None:
    url = fuzzed_server.url
    with httpx.Client(base_url=url, timeout=30) as c:
        book = c.get("/api/v1/books").json()[0]["id"]
        conversation = c.post("/api/v1/conversations", json={"book_id": book}).json()
        ids = {"book_id": book, "conversation_id": conversation["conversation_id"]}
        schema = c.get("/openapi.json").json()
        cases: list[tuple[str, str, bytes, dict[str, str]]] = []
        json_type = {"Content-Type": "application/json"}
        for method, path, body in _body_examples(schema):
            filled = path.format(**{k: ids.get(k, "x") for k in _names(path)})
            if "book_id" in body:
                body["book_id"] = book
            raw = json.dumps(_with_surrogates(body) | {"model": book}, ensure_ascii=True)
            cases.append((method, filled, raw.encode(), json_type))
            cases.append((method, filled, DEEP, json_type))
        messages = [{"role": "user", "content": "x\ud800"}]
        for stream in (False, True):
            raw = json.dumps({"model": book, "stream": stream, "messages": messages})
            cases.append(("POST", "/v1/chat/completions", raw.encode(), json_type))
        for kind in ("application/json", "text/plain", "application/octet-stream"):
            cases.append(("POST", "/api/v1/conversations/import", DEEP, {"Content-Type": kind}))
            raw = json.dumps({"title": "x\ud800", "messages": []}).encode()
            cases.append(("POST", "/api/v1/conversations/import", raw, {"Content-Type": kind}))
        bad = "%ED%A0%80"  # the UTF-8 bytes of a surrogate, percent-encoded
        for path in (f"/api/v1/books/{bad}", f"/api/v1/books/{book}/search?q={bad}",
                     f"/api/v1/conversations?book_id={bad}", f"/v1/models/{bad}"):  # fmt: skip
            cases.append(("GET", path, b"", {}))
        statuses: dict[str, int] = {}
        for method, path, body, headers in cases:
            r = c.request(method, path, content=body, headers=headers)
            statuses[f"{method} {path} {len(body)}"] = r.status_code
            assert r.status_code < 500, (method, path, r.status_code, r.text[:200])
            if body:
                assert 400 <= r.status_code < 500, (method, path, r.status_code, r.text[:200])
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                raise AssertionError(f"{path} opened a stream for a malformed body")
        print(f"targeted: {len(cases)} cases, statuses {sorted(set(statuses.values()))}")
        assert len(cases) >= 20
        assert c.get(f"/api/v1/conversations/{ids['conversation_id']}").json()["turns"] == 0


def _names(path: str) -> list[str]:
    import string

    return [name for _, name, _, _ in string.Formatter().parse(path) if name]
