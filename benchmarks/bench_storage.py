"""Saving and loading 100k conversation messages on the SQLite store, for one or more source trees.

Each run is a fresh process on a fresh library (a temporary folder): N conversations of T turns,
each turn four messages (the question, the model's tool call, the tool's result, the answer) and
its turn record with two sources. "save" stores every conversation in one writing unit of work
(conversation, messages, turns); "load" reads every conversation's messages and turns back in
read-only units of work. The trees run in turn, run after run, so that a busy machine weighs on
each alike; the medians of the wall time and of the process's CPU time are reported (on a shared
machine the wall time of the save is mostly waiting for the disk).

    .venv/bin/python benchmarks/bench_storage.py --code /work/before/src --code src [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(conversations: int, turns: int) -> dict[str, float]:
    """Runs in the child: the source tree is the one on PYTHONPATH."""
    import folio
    from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
    from folio.adapters.storage.sqlite.db import Database
    from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
    from folio.domain.llm import ToolInvocation

    t0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as folder:
        db = Database(Path(folder) / "folio.db")
        db.migrate()
        conn = db.connect()
        conn.execute(
            "INSERT INTO books (id, title, format, source_name, content_hash, page_count,"
            " char_count, created_at, owner_content)"
            " VALUES ('b', 'T', 'txt', 't.txt', 'h', 1, 1, '2026-01-01', 'local:h')"
        )
        conn.close()
        store = SqliteConversationStore(db)
        work = []
        for c in range(conversations):
            cid = f"c{c:05d}"
            conversation = Conversation(cid, "b", f"Conversation {c}", t0, t0)
            messages, records = [], []
            for t in range(1, turns + 1):
                at = t0 + timedelta(seconds=c * turns + t)
                call = ToolInvocation("search_book", f"u{t}", {"query": f"who is person {t}"})
                messages += [
                    ChatMessage.of(f"{cid}m{t}a", cid, t, 0, "user", f"Question {t}?", at),
                    ChatMessage.of(f"{cid}m{t}b", cid, t, 1, "assistant", "", at,
                                   tool_invocations=(call,)),
                    ChatMessage.of(f"{cid}m{t}c", cid, t, 2, "tool_result",
                                   '{"passages":[{"text":"' + "word " * 60 + '"}]}', at,
                                   tool_use_id=f"u{t}", tool_name="search_book"),
                    ChatMessage.of(f"{cid}m{t}d", cid, t, 3, "assistant",
                                   "The answer, with a citation (p. 12). " * 4, at),
                ]  # fmt: skip
                sources = tuple(
                    Source(f"k{t}{s}", "Chapter 1", "12", "13", 100 * s, 100 * s + 90, "a quote")
                    for s in range(2)
                )
                records.append(
                    Turn(cid, t, at, queries=(f"who is person {t}",), retrieval_attempts=1,
                         sources=sources, provider="offline", input_tokens=900, llm_calls=1,
                         latency_ms=12.5, extra={"k": 5})
                )  # fmt: skip
            work.append((conversation, messages, records))
        start, cpu = time.perf_counter(), time.process_time()
        for conversation, messages, records in work:
            with store.unit_of_work() as uow:
                uow.conversations.save(conversation)
                uow.messages.save_batch(messages)
                for record in records:
                    uow.turns.save(record)
                uow.commit()
        saved, saved_cpu = time.perf_counter() - start, time.process_time() - cpu
        try:  # a tree before read-only units of work (7b77cec) reads in a deferred one alike
            store.unit_of_work(read_only=True)
            reader = partial(store.unit_of_work, read_only=True)
        except TypeError:
            reader = store.unit_of_work
        start, cpu = time.perf_counter(), time.process_time()
        loaded = 0
        for conversation, _, _ in work:
            with reader() as uow:
                loaded += len(uow.messages.get_by_conversation(conversation.id))
                uow.turns.get_by_conversation(conversation.id)
        load, load_cpu = time.perf_counter() - start, time.process_time() - cpu
        assert loaded == conversations * turns * 4, loaded
    return {
        "save_s": saved,
        "load_s": load,
        "save_cpu_s": saved_cpu,
        "load_cpu_s": load_cpu,
        "messages": loaded,
        "folio": folio.__file__,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", help="a source tree (its src folder)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.conversations, args.turns)))
        return
    codes = [str(Path(c).resolve()) for c in (args.code or [str(ROOT / "src")])]
    results: dict[str, list[dict[str, float]]] = {c: [] for c in codes}
    for run in range(args.runs):
        for code in codes:
            env = {**os.environ, "PYTHONPATH": code}
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--conversations", str(args.conversations),
                 "--turns", str(args.turns)],
                env=env, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            result = json.loads(out)
            if not str(result["folio"]).startswith(code):
                raise SystemExit(f"{code}: the child imported folio from {result['folio']}")
            results[code].append(result)
            print(f"run {run + 1} {code}: {_times(result)}")
    print(f"\n{args.conversations * args.turns * 4:,} messages, median of {args.runs} runs:")
    for code, runs in results.items():
        print(f"  {code}: {_times({k: statistics.median(r[k] for r in runs) for k in _KEYS})}")


_KEYS = ("save_s", "save_cpu_s", "load_s", "load_cpu_s")


def _times(r: dict[str, float]) -> str:
    """Wall time, and the CPU time of the process (what the code costs on a shared machine)."""
    return (
        f"save {r['save_s']:.2f} s (CPU {r['save_cpu_s']:.2f} s),"
        f" load {r['load_s']:.2f} s (CPU {r['load_cpu_s']:.2f} s)"
    )


if __name__ == "__main__":
    main()
