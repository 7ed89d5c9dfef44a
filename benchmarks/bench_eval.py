"""Evaluation benchmark: the shared evaluation sets run through the real CLI, as a user would.

1. ``folio eval retrieval`` on the whole CoQA dev set (50 conversations, 785 turns), all three modes
   (agent = what the offline chat pipeline searched, question alone, question + earlier questions),
   in an empty FOLIO_HOME so the wall time includes importing the book with the default embedder.
   Targets: agent recall@5 >= 0.85; the whole run under 10 minutes.
2. ``folio eval reformulation`` on the CANARD / TREC CAsT file: token F1 of the heuristic rewriter
   per source against the copy-the-question baseline. Target: at least +0.05 on each source.

    .venv/bin/python benchmarks/bench_eval.py [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "data" / "eval"
CONVERSATIONS = EVAL / "coqa_anthology_dev.conversations.jsonl"
REFORMULATION = EVAL / "reformulation_dev.jsonl"
FOLIO = Path(sys.executable).with_name("folio")
TARGET_AGENT_RECALL5 = 0.85
TARGET_WALL_S = 600.0
TARGET_F1_GAIN = 0.05


def _folio(args: list[str], home: Path) -> tuple[float, dict[str, Any]]:
    env = dict(os.environ, FOLIO_HOME=str(home))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST", "FOLIO_PROVIDER"):
        env.pop(var, None)
    started = time.perf_counter()
    done = subprocess.run([str(FOLIO), *args], capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"folio {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, json.loads(done.stdout)


def measure(*, limit: int | None = None) -> dict[str, Any]:
    """Run both evaluations (printing as it goes); returns their JSON reports and wall times."""
    extra = ["--limit", str(limit)] if limit else []
    with tempfile.TemporaryDirectory(prefix="folio-bench-eval-") as home:
        retrieval_s, retrieval = _folio(
            ["eval", "retrieval", "--conversations", str(CONVERSATIONS), "--json", *extra],
            Path(home),
        )
        reformulation_s, reformulation = _folio(
            ["eval", "reformulation", "--data", str(REFORMULATION), "--json"], Path(home)
        )
    numbers = {
        "retrieval": retrieval,
        "retrieval_s": retrieval_s,
        "reformulation": reformulation,
        "reformulation_s": reformulation_s,
        "limit": limit,
    }
    report(numbers)
    return numbers


def report(numbers: dict[str, Any]) -> None:
    scope = f"first {numbers['limit']} conversations" if numbers["limit"] else "all conversations"
    print(f"retrieval ({scope}, offline provider), {numbers['retrieval_s']:.0f} s wall:")
    for mode, row in numbers["retrieval"].items():
        print(
            f"  {mode:9} recall@5 {row['recall@5']:.3f}  recall@10 {row['recall@10']:.3f}"
            f"  MRR {row['mrr']:.3f}  turns scored {row['turns_scored']}"
            f"  LLM calls/turn {row['llm_calls_per_turn']}"
            f"  searches/turn {row['searches_per_turn']}"
        )
    print(f"reformulation, {numbers['reformulation_s']:.0f} s wall (token F1):")
    for source, row in numbers["reformulation"].items():
        cells = "  ".join(f"{system} {v['f1']:.3f} (n={v['n']})" for system, v in row.items())
        print(f"  {source:16} {cells}")


def metrics(*, quick: bool) -> list[Any]:
    from run_all import Metric

    numbers = measure(limit=10 if quick else None)
    scope = "10 conv." if quick else "50 conv."
    rows = []
    for mode, row in numbers["retrieval"].items():
        target = f">= {TARGET_AGENT_RECALL5}" if mode == "agent" else ""
        ok = row["recall@5"] >= TARGET_AGENT_RECALL5 if mode == "agent" else None
        rows += [
            Metric(
                "eval",
                f"CoQA ({scope}) {mode}: recall@5",
                row["recall@5"],
                target=target,
                ok=ok,
                note=f"{row['turns_scored']} turns scored",
            ),
            Metric(
                "eval",
                f"CoQA {mode}: recall@10 / MRR",
                row["recall@10"],
                note=f"MRR {row['mrr']:.3f}",
            ),
        ]
    wall = numbers["retrieval_s"]
    rows.append(
        Metric(
            "eval",
            f"CoQA ({scope}) wall time, import included",
            wall,
            "s",
            target=f"< {TARGET_WALL_S:.0f} s",
            ok=wall < TARGET_WALL_S,
        )
    )
    for source, row in numbers["reformulation"].items():
        if source == "overall":
            continue
        gain = row["heuristic"]["f1"] - row["copy"]["f1"]
        rows.append(
            Metric(
                "eval",
                f"reformulation F1 {source}: heuristic",
                row["heuristic"]["f1"],
                target=f"copy + {TARGET_F1_GAIN}",
                ok=gain >= TARGET_F1_GAIN,
                note=f"copy {row['copy']['f1']:.3f}, gain {gain:+.3f}, n={row['copy']['n']}",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    measure(limit=parser.parse_args().limit)


if __name__ == "__main__":
    main()
