"""Operating a real ``folio serve`` (two workers, JSON logs, scripted provider): after a scripted
conversation ``/metrics``, read with the Prometheus text parser, counts exactly the tool calls the
stored turns hold, per tool, and the model calls and turns; the server's log lines are JSON, name
each turn's request id as its response did, and never carry the reader's or the model's words.
``/metrics`` needs a token once users exist."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok, ok_json, run_folio_in

V1 = "/api/v1"
ANSWER = "Henry Clerval is the friend who nursed Victor through his fever."
SCRIPT = {
    "steps": [
        [
            {"tool": "search_book", "arguments": {"query": "Clerval"}},
            {"tool": "list_chapters", "arguments": {}},
        ],
        {"tool": "search_book", "arguments": {}},  # invalid: the model forgot the query
        ANSWER,
    ]
}
# Words only the reader typed: no log line may hold them.
QUESTIONS = (
    "Who is Clerval to the wombat-lantern keeper?",
    "And what did the wombat-lantern keeper do next?",
    "Tell me about the wombat-lantern keeper once more.",
)
JSON_LOGS = ("--log-format", "json", "--log-level", "info")
GIVEN_ID = "trace-7f3a.e2e:1"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the bundled demo book imported through the CLI."""
    home = demo_book_home(tmp_path_factory, "obs-home")
    return home


def scrape(c: httpx.Client, **headers: str) -> dict[tuple[str, frozenset[Any]], float]:
    r = c.get("/metrics", headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


class Requests:
    """What a client asked and got, by method, route template (from the OpenAPI document's
    paths) and status."""

    def __init__(self) -> None:
        self.templates: list[str] = []
        self.made: list[tuple[str, str, str]] = []

    def record(self, response: httpx.Response) -> None:
        path = response.request.url.path
        self.made.append((response.request.method, self.template(path), str(response.status_code)))

    def template(self, path: str) -> str:
        matching = [
            t for t in self.templates
            if re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(t)), path)
        ]  # fmt: skip
        return min(matching, key=lambda t: t.count("{"), default=path)  # a literal path first


def http_requests(
    metrics: dict[tuple[str, frozenset[Any]], float],
    before: dict[tuple[str, frozenset[Any]], float],
) -> Counter[tuple[str, str, str]]:
    """``folio_http_requests_total`` counted since ``before``, by (method, route, status)."""
    then = counts(before, "folio_http_requests_total")
    grown: Counter[tuple[str, str, str]] = Counter()
    for labels, n in counts(metrics, "folio_http_requests_total").items():
        method, route, status = (value for _, value in labels)
        if n > then.get(labels, 0):
            grown[(method, route, status)] = int(n - then.get(labels, 0))
    return grown


def scrape_settled(
    c: httpx.Client, before: dict[tuple[str, frozenset[Any]], float], made: Requests, since: int
) -> tuple[dict[tuple[str, frozenset[Any]], float], Counter[tuple[str, str, str]]]:
    """A scrape, and the requests made since ``since`` (the scrape itself excluded: it counts
    when it ends). A worker counts a request once its last byte is sent, which the client may see
    a moment earlier: scraped again, up to a second, until the counts are in."""
    for _ in range(20):
        upto = len(made.made)
        metrics = scrape(c)
        expected = Counter(made.made[since:upto])
        if http_requests(metrics, before) == expected:
            break
        time.sleep(0.05)
    return metrics, expected


def counts(metrics: dict[tuple[str, frozenset[Any]], float], name: str) -> dict[Any, float]:
    """The samples of ``name`` by their labels (as sorted tuples)."""
    return {tuple(sorted(labels)): v for (n, labels), v in metrics.items() if n == name}


def run_turns(c: httpx.Client, conversation: str) -> list[tuple[str, dict[str, Any]]]:
    """Three turns (JSON with a request id, streamed, JSON without one): each one's request id
    as its response carried it, and its result."""
    url = f"{V1}/conversations/{conversation}/messages"
    first = c.post(url, json={"message": QUESTIONS[0]}, headers={"X-Request-ID": GIVEN_ID})
    assert first.status_code == 200, first.text
    turns = [(first.headers["x-request-id"], first.json())]
    with connect_sse(c, "POST", url, json={"message": QUESTIONS[1], "stream": True}) as source:
        events = [(e.event, json.loads(e.data)) for e in source.iter_sse()]
        turns.append((source.response.headers["x-request-id"], events[-1][1]))
    assert events[-1][0] == "done"
    third = c.post(url, json={"message": QUESTIONS[2]})
    assert third.status_code == 200, third.text
    turns.append((third.headers["x-request-id"], third.json()))
    return turns


def upload_a_book(c: httpx.Client) -> None:
    text = "\n\n".join(f"CHAPTER {i}\n\n" + "The keeper counted ships. " * 60 for i in (1, 2))
    r = c.post(f"{V1}/books", files={"file": ("keeper.txt", text.encode(), "text/plain")})
    assert r.status_code == 202, r.text
    for _ in range(600):
        if c.get(r.headers["location"]).json()["status"] in ("done", "failed"):
            return
        time.sleep(0.1)
    raise AssertionError("the import did not finish")


def test_a_scripted_conversation_shows_in_metrics_and_in_json_logs(
    library: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(library, home)
    scratch = tmp_path / "tmp"  # where folio serve keeps the workers' metrics files
    scratch.mkdir()
    env = {"FOLIO_GUARDRAIL": "none", "TMPDIR": str(scratch)}
    made_requests = Requests()
    with (
        FolioServer(home, script=SCRIPT, env=env, workers=2, args=JSON_LOGS) as server,
        httpx.Client(
            base_url=server.url, timeout=60, event_hooks={"response": [made_requests.record]}
        ) as c,
    ):
        (metrics_dir,) = scratch.glob("folio-metrics-*")
        assert list(metrics_dir.glob("*.db"))  # prometheus_client's multiprocess mode
        made_requests.templates = list(c.get("/openapi.json").json()["paths"])
        before = scrape(c)
        since = len(made_requests.made) - 1  # the scrape above counts from the next one on
        book = c.get(f"{V1}/books").json()[0]["id"]
        conversation = c.post(f"{V1}/conversations", json={"book_id": book}).json()
        conversation_id = conversation["conversation_id"]
        turns = run_turns(c, conversation_id)
        upload_a_book(c)
        detail = c.get(f"{V1}/conversations/{conversation_id}", params={"verbose": "true"})
        stored = detail.json()["messages"]
        # no users: the local user's loopback server needs no token
        metrics, expected = scrape_settled(c, before, made_requests, since)
        about = c.get(f"{V1}/about").json()

    # every request since the first scrape, summed over both workers, under its route template
    assert http_requests(metrics, before) == expected
    assert expected[("POST", "/api/v1/conversations/{conversation_id}/messages", "200")] == 3
    assert expected[("GET", "/api/v1/jobs/{job_id}", "200")] >= 1
    latency = counts(metrics, "folio_http_request_duration_seconds_count")
    before_latency = counts(before, "folio_http_request_duration_seconds_count")
    timed = Counter({(m, r): n for (m, r, _), n in expected.items()})
    for (method, route), n in timed.items():
        key = (("method", method), ("route", route))
        assert latency[key] - before_latency.get(key, 0) == n
    # each worker's memory and open files, CPU over both, the version as folio --version says it
    memory = counts(metrics, "process_resident_memory_bytes")
    assert len(memory) == 2 and all(v > 10_000_000 for v in memory.values())
    assert len(counts(metrics, "process_open_fds")) == 2
    assert counts(metrics, "process_cpu_seconds_total")[()] > 0
    version = ok(run_folio_in(home, "--version")).split()[-1]
    assert about["version"] == version
    assert counts(metrics, "folio_build_info") == {(("version", version),): 1}

    assert not metrics_dir.exists()  # removed when the server stopped

    # the tool calls the stored turns hold, by tool and outcome
    made = Counter(
        (m["tool_name"], "error" if m["is_error"] else "ok")
        for m in stored
        if m["role"] == "tool_result"
    )
    assert made == {
        ("search_book", "ok"): 3,
        ("list_chapters", "ok"): 3,
        ("search_book", "error"): 3,
    }
    histogram = counts(metrics, "folio_tool_call_duration_seconds_count")
    assert histogram == {
        (("outcome", "ok"), ("tool", "search_book")): 3,
        (("outcome", "ok"), ("tool", "list_chapters")): 3,
        (("outcome", "invalid_arguments"), ("tool", "search_book")): 3,
    }
    model_calls = counts(metrics, "folio_model_call_duration_seconds_count")
    assert model_calls == {
        (("model", "scripted-1"), ("outcome", "ok"), ("provider", "scripted")): sum(
            t["llm_calls"] for _, t in turns
        )
    }
    assert counts(metrics, "folio_turns_total") == {(("outcome", "answered"),): 3}
    output = counts(metrics, "folio_tokens_total")[
        (("kind", "output"), ("model", "scripted-1"), ("provider", "scripted"))
    ]
    assert output == sum(t["output_tokens"] for _, t in turns)
    stages = counts(metrics, "folio_import_stages_total")
    assert {s[0][1] for s in stages} >= {"queued", "parse", "chunk", "store", "done"}
    assert all(v == 1 for v in stages.values())
    assert counts(metrics, "folio_turns_in_flight") == {(): 0}

    lines = (home / "server.log").read_text(encoding="utf-8").splitlines()
    logged = [json.loads(line) for line in lines]  # every line is JSON, the banner too
    assert any(e["logger"] == "folio.serve" and server.url in e["message"] for e in logged)
    ours = [e for e in logged if e.get("conversation_id") == conversation_id]
    by_event = Counter(e["event"] for e in ours)
    assert by_event == {
        "turn": 3,
        "tool_call": 9,
        "model_call": sum(t["llm_calls"] for _, t in turns),
    }
    request_ids = [rid for rid, _ in turns]
    assert request_ids[0] == GIVEN_ID
    assert [e["request_id"] for e in ours if e["event"] == "turn"] == request_ids
    assert {e["request_id"] for e in ours} == set(request_ids)
    for e in ours:
        assert {"time", "level", "logger", "user", "duration_ms"} <= set(e)
        assert e["user"] == "local"
    for e in (e for e in ours if e["event"] == "turn"):
        assert e["outcome"] == "answered" and e["input_tokens"] > 0
        assert {"provider", "model", "llm_calls", "tool_calls", "output_tokens"} <= set(e)
    text = "\n".join(lines)
    assert "wombat" not in text and "nursed Victor" not in text
    requests = [e for e in logged if e.get("event") == "request"]
    assert {e["request_id"] for e in requests} >= set(request_ids)


def test_metrics_need_a_token_once_users_exist(library: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(library, home)
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))
    metrics_token = "scraper-" + "s3cret" * 4
    env = {"FOLIO_METRICS_TOKEN": metrics_token}
    with (
        FolioServer(home, env=env) as server,
        httpx.Client(base_url=server.url, timeout=60) as c,
    ):
        refused = c.get("/metrics")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "UNAUTHORIZED"
        assert refused.headers["x-request-id"]
        assert c.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert scrape(c, Authorization=f"Bearer {metrics_token}")
        assert scrape(c, Authorization=f"Bearer {alice['token']}")
        # the scraper's token opens /metrics only, not the API
        r = c.get(f"{V1}/books", headers={"Authorization": f"Bearer {metrics_token}"})
        assert r.status_code == 401
