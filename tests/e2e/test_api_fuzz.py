"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (schemathesis) against a
real ``folio serve`` process: whatever a client sends, no 5xx. Bounded: a few examples per
operation, so the whole run takes seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

schemathesis = pytest.importorskip("schemathesis")

EXAMPLES_PER_OPERATION = 12


def test_no_request_makes_a_server_error(tmp_path: Path) -> None:
    from schemathesis.checks import not_a_server_error

    from folio.entrypoints.cli.demo import bundled_book

    home = tmp_path / "home"
    ok_json(run_folio_in(home, "add", str(bundled_book()), "--json"))
    env = {"FOLIO_MAX_REQUEST_MB": "1", "FOLIO_MAX_BOOK_MB": "1"}
    with FolioServer(home, env=env) as server:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        schema.config.update(base_url=server.url)
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 15
        failures: list[str] = []
        calls: list[int] = []
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case: Any) -> None:
                response = case.call(timeout=30)
                calls.append(response.status_code)
                if response.status_code >= 500:
                    failures.append(f"{case.method} {case.formatted_path}: {response.text[:200]}")
                    case.validate_response(response, checks=[not_a_server_error])

            run()
        assert failures == []
        assert len(calls) >= 5 * len(operations)  # the fuzzer did send requests
