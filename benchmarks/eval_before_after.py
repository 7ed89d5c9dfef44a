"""Retrieval recall of two versions of folio on the same conversations, in one run.

Runs ``folio eval retrieval --json`` with this checkout's code (after) and with another commit's
(before: checked out into a temporary git worktree and run with the same interpreter and
packages), each in a fresh FOLIO_HOME, on the dev anthology as it is and spliced into a whole novel
(``--haystack``). Prints recall@5 and recall@10 of every mode, overall and per turn-depth bucket,
side by side.

    .venv/bin/python benchmarks/eval_before_after.py --before 11248dd [--limit N]
        [--haystack pg1342_pride_and_prejudice.txt] [--json results.json]

The default ``before`` is the last commit with the hand-written follow-up, referent and
reformulation rules (issue 25 replaced them with the offline policy in ``folio.agent.offline``).
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
DATA = ROOT.parent / "shared" / "data"
CONVERSATIONS = DATA / "eval" / "coqa_anthology_dev.conversations.jsonl"


def evaluate(src: Path, home: Path, extra: list[str]) -> tuple[dict[str, Any], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FOLIO_", "ANTHROPIC_"))}
    env.update(FOLIO_HOME=str(home), PYTHONPATH=str(src), FOLIO_PROVIDER="offline")
    command = [sys.executable, "-m", "folio.entrypoints.cli.main", "eval", "retrieval"]
    command += ["--conversations", str(CONVERSATIONS), "--books-dir", str(DATA / "books")]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *extra, "--json"], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"{src}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout), time.perf_counter() - started


def rows(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{"agent": {...}, "agent turns 1-3": {...}}`` whatever nesting the version prints."""
    out: dict[str, dict[str, float]] = {}
    for key, value in report.items():
        if isinstance(value, dict) and any(k.startswith("recall@") for k in value):
            out[key] = {k: float(v) for k, v in value.items() if isinstance(v, (int, float))}
        elif isinstance(value, dict):
            for sub, inner in rows(value).items():
                out[f"{key} {sub}"] = inner
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="11248dd")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--haystack", default="pg1342_pride_and_prejudice.txt")
    parser.add_argument("--json", type=Path, help="also write every number here")
    args = parser.parse_args()
    limit = ["--limit", str(args.limit)] if args.limit else []
    haystack = [*limit, "--haystack", args.haystack]
    settings = {"anthology": limit, f"haystack {args.haystack}": haystack}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="folio-before-") as tmp:
        before = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before],
            check=True,
        )
        try:
            for name, extra in settings.items():
                for label, src in (("before", before / "src"), ("after", ROOT / "src")):
                    home = Path(tmp) / f"{label}-{name.split()[0]}"
                    report, seconds = evaluate(src, home, extra)
                    results[f"{name} {label}"] = {"rows": rows(report), "seconds": seconds}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)])
    for name in settings:
        b, a = results[f"{name} before"], results[f"{name} after"]
        print(f"\n{name}: before {args.before} ({b['seconds']:.0f} s), HEAD ({a['seconds']:.0f} s)")
        print(
            f"{'mode':28} {'R@5 before':>10} {'R@5 after':>10} {'R@10 before':>11}"
            f" {'R@10 after':>10}  searches/turn before after"
        )
        for mode in sorted(set(b["rows"]) | set(a["rows"])):
            rb, ra = b["rows"].get(mode, {}), a["rows"].get(mode, {})
            cells = [
                rb.get("recall@5"),
                ra.get("recall@5"),
                rb.get("recall@10"),
                ra.get("recall@10"),
            ]
            text = ["-" if c is None else f"{c:.4f}" for c in cells]
            searches = [r.get("searches_per_turn") for r in (rb, ra)]
            note = " ".join("-" if s is None else f"{s:.2f}" for s in searches)
            print(f"{mode:28} {text[0]:>10} {text[1]:>10} {text[2]:>11} {text[3]:>10}  {note}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
