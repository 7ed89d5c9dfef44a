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
import time
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


BOUNDS = {"FOLIO_MAX_REQUEST_MB": "1", "FOLIO_MAX_BOOK_MB": "1"}


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory):
    with FolioServer(demo_book_home(tmp_path_factory, "fuzz"), env=BOUNDS) as server:
        yield server


@pytest.fixture(scope="module")
def known_server(tmp_path_factory: pytest.TempPathFactory):
    """The same server on a library no generator has called: the fuzzer adds books (one it
    names 'file' is listed before Frankenstein), and a short id it makes up can name a real
    book (any unique prefix does) to move, rename or delete it. The tests that need real ids
    take them here, where the library holds the bundled book alone, as imported."""
    with FolioServer(demo_book_home(tmp_path_factory, "known"), env=BOUNDS) as server:
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
    known_server: FolioServer,
) -> None:
    url = known_server.url
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


def test_a_real_answer_of_every_operation_fits_its_schema(known_server: FolioServer) -> None:
    """The generators rarely name a real book or conversation, so their answers are mostly
    errors: here every operation is called once or more with real ids and valid bodies (turns
    streamed and not), and each answer's status must be documented and its body fit the schema."""
    from folio.adapters.parsers.koreader_ids import partial_md5
    from folio.entrypoints.cli.demo import bundled_book

    schema = schemathesis.openapi.from_url(f"{known_server.url}/openapi.json")
    answered: dict[tuple[str, str], set[int]] = {}
    with httpx.Client(base_url=known_server.url, timeout=60) as c:
        spec = c.get("/openapi.json").json()

        def check(method: str, path: str, response: httpx.Response) -> httpx.Response:
            documented = spec["paths"][path][method.lower()]["responses"]
            assert str(response.status_code) in documented, (method, path, response.text[:200])
            response.request.read()  # a multipart body is a stream until read
            schema[path][method].validate_response(response)
            answered.setdefault((method.lower(), path), set()).add(response.status_code)
            return response

        def call(method: str, path: str, ids: dict[str, str] | None = None, **kw: Any) -> Any:
            response = c.request(method, path.format(**(ids or {})), **kw)
            return check(method, path, response)

        for path in ("/api/v1/health", "/api/v1/about", "/api/v1/me", "/healthcheck", "/metrics"):
            call("GET", path)
        (only,) = call("GET", "/api/v1/books").json()  # the bundled book, as imported
        book = only["id"]
        b = {"book_id": book}
        title = call("GET", "/api/v1/books/{book_id}", b).json()["title"]
        call("PATCH", "/api/v1/books/{book_id}", b, json={"title": title})
        call("PUT", "/api/v1/books/{book_id}/position", b, json={"percent": 50})
        hit = call("GET", "/api/v1/books/{book_id}/search", b, params={"q": "Clerval"})
        passage = hit.json()["results"][0]
        span = {"start": passage["char_start"], "end": passage["char_end"]}
        call("GET", "/api/v1/books/{book_id}/text", b, params=span)
        words = " ".join(passage["text"].split()[:8])  # a highlight inside the window
        clip = f"{title}\n- Your Highlight on Location 1-2\n\n{words}\n==========\n"
        kindle = {"file": ("My Clippings.txt", clip.encode(), "text/plain")}
        call("POST", "/api/v1/highlights/import", data=b, files=kindle)
        mine = call("GET", "/api/v1/books/{book_id}/highlights", b).json()["highlights"]
        h = {**b, "highlight_id": mine[0]["id"]}
        call("DELETE", "/api/v1/books/{book_id}/highlights/{highlight_id}", h)
        conversation = call("POST", "/api/v1/conversations", json=b).json()["conversation_id"]
        cv = {"conversation_id": conversation}
        call("GET", "/api/v1/conversations", params=b)
        turn = "/api/v1/conversations/{conversation_id}/messages"
        for stream in (False, True):
            call("POST", turn, cv, json={"message": "Who is Clerval?", "stream": stream})
            call("POST", "/api/v1/chat", json={**b, "message": "And Elizabeth?", "stream": stream})
            body = {"model": book, "stream": stream, "messages": [{"role": "user", "content": "?"}]}
            call("POST", "/v1/chat/completions", json=body)
        detail = call("GET", "/api/v1/conversations/{conversation_id}", cv, params={"verbose": 1})
        assert detail.json()["turn_details"][0]["citations"]
        call("PATCH", "/api/v1/conversations/{conversation_id}", cv, json={"title": "Clerval"})
        export = "/api/v1/conversations/{conversation_id}/export"
        assert call("GET", export, cv).headers["content-type"].startswith("text/markdown")
        exported = call("GET", export, cv, params={"format": "json"}).content
        headers = {"Content-Type": "application/json"}
        copy = call("POST", "/api/v1/conversations/import", content=exported, headers=headers)
        call("DELETE", "/api/v1/conversations/{conversation_id}", copy.json())
        call("GET", "/v1/models")
        call("GET", "/v1/models/{model_id}", {"model_id": book})
        text = ("Chapter 1\n\n" + "The miller walked to the river at dawn. " * 200).encode()
        upload = call("POST", "/api/v1/books", files={"file": ("mill.txt", text, "text/plain")})
        job = {"job_id": upload.json()["job"]["job_id"]}
        for _ in range(300):
            if call("GET", "/api/v1/jobs/{job_id}", job).json()["status"] in ("done", "failed"):
                break
            time.sleep(0.1)
        call("DELETE", "/api/v1/books/{book_id}", {"book_id": upload.json()["book"]["id"]})
        place = {"document": partial_md5(bundled_book()), "progress": "", "percentage": 0.5}
        call("POST", "/api/v1/koreader/ask", json={**place, "question": "Who is Clerval?"})
        call("POST", "/api/v1/koreader/story", json=place)
        call("POST", "/api/v1/koreader/people", json=place)
        call("POST", "/users/create", json={"username": "nobody", "password": "x"})
        call("GET", "/users/auth")
        call("PUT", "/syncs/progress", json={"document": "d", "progress": "1", "percentage": 0.5})
        call("GET", "/syncs/progress/{document}", {"document": "d"})
    operations = {(m, p) for p, ops in spec["paths"].items() for m in ops}
    assert operations - answered.keys() == set()
    successes = sum(any(s < 300 for s in statuses) for statuses in answered.values())
    print(f"real answers: {len(answered)} operations, {successes} with a success checked")
    assert successes >= len(operations) - 4  # progress sync needs a device's login
