"""HTTP API throughput and latency on loopback, and what HTTP adds to a chat turn.

A real ``folio serve`` (one uvicorn worker, scripted provider: a search then an answer, hashing
embedder, the bundled Frankenstein) is driven by 1, 8 and 32 concurrent httpx clients:

- ``list``: ``GET /api/v1/books``
- ``search``: ``GET /api/v1/books/{id}/search?q=...&k=5``
- ``turn``: ``POST /api/v1/conversations/{id}/messages`` (JSON), each client in its own
  conversation

Printed: requests/s, p50 and p99 latency (ms). Then the same scripted turn in-process
(``ChatWithBook.execute`` on the same library) against the HTTP turn at 1 client: medians, the
difference (the HTTP overhead) and the ratio. Bounded in requests; loopback only.

    .venv/bin/python benchmarks/bench_api.py [--requests 240] [--turns 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.api_server import DEFAULT_SCRIPT, FolioServer
from tests.e2e.conftest import ok_json, run_folio_in

QUERIES = ["Clerval", "the creature learns to read", "Elizabeth", "the Arctic", "Justine trial"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


async def drive(
    url: str, clients: int, total: int, make_request: Any, setup: Any = None
) -> dict[str, float]:
    latencies: list[float] = []
    per_client = max(1, total // clients)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        states = [await setup(client) if setup else None for _ in range(clients)]

        async def worker(n: int) -> None:
            for i in range(per_client):
                started = time.perf_counter()
                r = await make_request(client, states[n], i)
                latencies.append((time.perf_counter() - started) * 1000)
                if r.status_code >= 400:
                    raise RuntimeError(f"{r.status_code}: {r.text}")

        started = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(clients)))
        elapsed = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
    }


def in_process_turns(home: Path, script: Path, turns: int) -> list[float]:
    from folio.bootstrap import Container

    container = Container(
        home=home, embedding_model="hashing", provider="scripted", script_file=script
    )
    book = container.library.list_books()[0]
    conversation = container.conversations.create(book.id)
    times = []
    for i in range(turns):
        started = time.perf_counter()
        container.chat().execute(conversation.id, f"Who is Clerval? ({i})")
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=240, help="per scenario and level")
    parser.add_argument("--turns", type=int, default=60, help="turns per level")
    parser.add_argument("--levels", default="1,8,32")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    from folio.entrypoints.cli.demo import bundled_book

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        ok_json(run_folio_in(home, "add", str(bundled_book()), "--json"))
        results: dict[str, Any] = {}
        with FolioServer(
            home, script=DEFAULT_SCRIPT, env={"FOLIO_MAX_CONCURRENT_TURNS": "64"}
        ) as server:
            book_id = httpx.get(f"{server.url}/api/v1/books").json()[0]["id"]

            async def list_books(c: httpx.AsyncClient, _: Any, i: int) -> httpx.Response:
                return await c.get("/api/v1/books")

            async def search(c: httpx.AsyncClient, _: Any, i: int) -> httpx.Response:
                q = QUERIES[i % len(QUERIES)]
                return await c.get(f"/api/v1/books/{book_id}/search", params={"q": q, "k": 5})

            async def new_conversation(c: httpx.AsyncClient) -> str:
                r = await c.post("/api/v1/conversations", json={"book_id": book_id})
                return str(r.json()["conversation_id"])

            async def turn(c: httpx.AsyncClient, cid: str, i: int) -> httpx.Response:
                return await c.post(
                    f"/api/v1/conversations/{cid}/messages",
                    json={"message": f"Who is Clerval? ({i})"},
                )

            scenarios = [
                ("list", list_books, None, args.requests),
                ("search", search, None, args.requests),
                ("turn", turn, new_conversation, args.turns),
            ]
            for name, request, setup, total in scenarios:
                for level in levels:
                    row = asyncio.run(drive(server.url, level, max(total, level), request, setup))
                    results[f"{name}@{level}"] = row
                    print(f"{name:7} clients={level:3}  {row['requests']:4} requests  "
                          f"{row['rps']:8.1f} req/s  p50 {row['p50_ms']:8.2f} ms  "
                          f"p99 {row['p99_ms']:8.2f} ms", flush=True)  # fmt: skip
        local = in_process_turns(home, server.script_path, args.turns)
        http_p50 = results["turn@1"]["p50_ms"]
        local_p50 = statistics.median(local)
        results["in_process_turn_p50_ms"] = round(local_p50, 2)
        results["http_overhead_ms"] = round(http_p50 - local_p50, 2)
        results["http_over_in_process"] = round(http_p50 / local_p50, 2)
        print(
            f"turn in-process p50 {local_p50:.2f} ms; over HTTP (1 client) p50 {http_p50:.2f} ms:"
            f" +{http_p50 - local_p50:.2f} ms, x{http_p50 / local_p50:.2f}"
        )
        print(json.dumps(results))


if __name__ == "__main__":
    main()
