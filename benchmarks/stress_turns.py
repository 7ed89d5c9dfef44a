"""Stress: N processes x M chat turns on ONE conversation at once, for each conversation store;
reports turns stored, lost and duplicated (and whether the numbering is gap-free).

Each worker is a real process running the real chat turn (``Container().chat().execute``: offline
provider, hashing embeddings) against a shared FOLIO_HOME, so the turn's own retry on a conflict
or a busy database is what is measured.

    .venv/bin/python benchmarks/stress_turns.py [--processes 4] [--turns 10] [--stores sqlite,json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "src" / "folio" / "data" / "frankenstein.txt"

WORKER = r"""
import sys, time
from pathlib import Path
from folio.bootstrap import Container
cid, tag, turns, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
chat = Container().chat(provider="offline")
while not go.exists():
    time.sleep(0.005)
failed = 0
for i in range(turns):
    try:
        chat.execute(cid, f"[{tag}-{i}] Who is Henry Clerval?")
    except Exception as e:  # counted, reported: the stress run must finish
        failed += 1
        print(f"{tag}-{i}: {type(e).__name__}: {e}", file=sys.stderr)
print(failed)
"""


def _env(home: Path, store: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("FOLIO_", "ANTHROPIC", "OPENAI"))
    }
    env.update(
        FOLIO_HOME=str(home),
        FOLIO_EMBEDDING_MODEL="hashing",
        FOLIO_CONVERSATION_STORE=store,
        FOLIO_PROVIDER="offline",
    )
    return env


def _folio(env: dict[str, str], *args: str) -> str:
    command = [sys.executable, "-m", "folio.entrypoints.cli.main", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout


def run(store: str, *, processes: int, turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="folio-stress-") as tmp:
        home = Path(tmp)
        env = _env(home, store)
        book = json.loads(_folio(env, "add", str(BOOK), "--json"))["book"]["id"]
        cid = _folio(env, "conversations", "new", book).strip()
        go = home / "go"
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, cid, f"w{n}", str(turns), str(go)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(processes)
        ]
        time.sleep(1.0)  # let every worker import and build its container
        started = time.monotonic()
        go.touch()
        outputs = [w.communicate(timeout=600) for w in workers]
        seconds = time.monotonic() - started
        detail = json.loads(_folio(env, "conversations", "export", cid, "--format", "json"))
    questions = [
        m["content"].split("]")[0].lstrip("[") for m in detail["messages"] if m["role"] == "user"
    ]
    counts = Counter(questions)
    asked = {f"w{n}-{i}" for n in range(processes) for i in range(turns)}
    numbers = sorted(t["turn_number"] for t in detail["turns"])
    return {
        "store": store,
        "asked": len(asked),
        "stored": len(set(questions) & asked),
        "lost": len(asked - set(questions)),
        "duplicated": sum(c - 1 for c in counts.values() if c > 1),
        "gap_free": numbers == list(range(1, len(numbers) + 1)),
        "errors_shown": sum(int(out.strip().splitlines()[-1]) for out, _ in outputs if out.strip()),
        "stderr": [err for _, err in outputs if err.strip()][:3],
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--stores", default="sqlite,json")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [
        run(store, processes=args.processes, turns=args.turns) for store in args.stores.split(",")
    ]
    if args.json:
        print(json.dumps(results))
        return
    for r in results:
        print(
            f"{r['store']:6} {args.processes} processes x {args.turns} turns: asked {r['asked']},"
            f" stored {r['stored']}, lost {r['lost']}, duplicated {r['duplicated']},"
            f" gap-free {r['gap_free']}, errors shown {r['errors_shown']} ({r['seconds']} s)"
        )


if __name__ == "__main__":
    main()
