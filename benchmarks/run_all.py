"""Run every benchmark and print ONE summary table (metric, value, target, ok?); also write
``benchmarks/results.json``.

Benchmarks report numbers, they are not tests: a missed target is printed as ``no``, never raised.
Each benchmark module exposes ``metrics(*, quick: bool) -> list[Metric]`` and keeps its own CLI.

    .venv/bin/python benchmarks/run_all.py [--quick] [--only NAME ...]     (make bench)

``--quick`` skips the slowest parts (the 17 other books of the search benchmark, the embedding
benchmark, most of the evaluation set) and uses fewer repetitions.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.json"
# name -> module of benchmarks/ (each exposes ``metrics(*, quick)``), in the order they run
BENCHMARKS = {
    "ingest": "bench_ingest",
    "search": "bench_search",
    "cli": "bench_cli",
    "turn": "bench_turn",
    "eval": "bench_eval",
    "postgres": "bench_postgres",
    "embed": "bench_embed",  # not ours: run as a process, as it is
}


@dataclass(frozen=True, slots=True)
class Metric:
    """One number of a benchmark, with its target (``ok`` is None when there is no target)."""

    benchmark: str
    name: str
    value: float | None
    unit: str = ""
    target: str = ""
    ok: bool | None = None
    note: str = ""

    def shown_value(self) -> str:
        if self.value is None:
            return "n/a"
        if abs(self.value) >= 100 or float(self.value).is_integer():
            return f"{self.value:,.0f} {self.unit}".strip()
        return f"{self.value:.3g} {self.unit}".strip()


def below(value: float, limit: float) -> bool:
    return value < limit


def at_least(value: float, limit: float) -> bool:
    return value >= limit


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    args = _parse_args()
    names = args.only or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        sys.exit(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT))
    results: list[Metric] = []
    timings: dict[str, float] = {}
    loads = [load_average()]
    for name in names:
        print(f"\n=== {name} ({BENCHMARKS[name]}.py), load average {load_average():.1f} ===")
        started = time.perf_counter()
        results.extend(_run_one(name, quick=args.quick))
        timings[name] = round(time.perf_counter() - started, 1)
        loads.append(load_average())
    print_table(results, loads)
    _write(results, timings, loads, quick=args.quick, names=names)


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the slowest parts")
    parser.add_argument(
        "--only", action="append", metavar="NAME", help=f"run only NAME ({', '.join(BENCHMARKS)})"
    )
    return parser.parse_args()


def _run_one(name: str, *, quick: bool) -> list[Metric]:
    if name == "embed":
        return _embed_metrics(quick=quick)
    module = importlib.import_module(BENCHMARKS[name])
    measure: Callable[..., list[Metric]] = module.metrics
    try:
        return measure(quick=quick)
    except Exception as e:  # a benchmark that breaks is reported in the table, not fatal
        traceback.print_exc()
        return [Metric(name, "benchmark failed", None, note=f"{type(e).__name__}: {e}")]


def _embed_metrics(*, quick: bool) -> list[Metric]:
    """``bench_embed.py`` (not ours) is run as it is, as a process; its output is passed through."""
    if quick:
        return [Metric("embed", "embedding benchmark", None, note="skipped (--quick)")]
    import subprocess

    script = ROOT / "benchmarks" / "bench_embed.py"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    print(done.stdout + done.stderr)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return [Metric("embed", "bench_embed.py", None, note=f"failed: exit {done.returncode}")]
    rows = [Metric("embed", "bench_embed.py wall time", seconds, "s")]
    for name, pattern, unit in _EMBED_LINES:
        found = re.search(pattern, done.stdout)
        rows.append(
            Metric(
                "embed",
                name,
                float(found.group(1)) if found else None,
                unit,
                note="" if found else "not found in its output",
            )
        )
    return rows


# What bench_embed.py prints, as (metric, regex of its value, unit).
_EMBED_LINES = (
    ("cold process: load model + embed 1 query", r"cold process .*?median ([\d.]+) s", "s"),
    ("embedding throughput (Moby Dick)", r"([\d.]+) chunks/s", "chunks/s"),
)


def print_table(results: list[Metric], loads: list[float]) -> None:
    rows = [("benchmark", "metric", "value", "target", "ok?")]
    for m in results:
        ok = "-" if m.ok is None else ("yes" if m.ok else "NO")
        if m.value is None and m.note:
            value = m.note
        else:
            value = m.shown_value() + (f"  ({m.note})" if m.note else "")
        rows.append((m.benchmark, m.name, value, m.target or "-", ok))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print("\n" + "=" * (sum(widths) + 3 * (len(widths) - 1)))
    print("SUMMARY")
    for n, row in enumerate(rows):
        print(" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
        if n == 0:
            print("-+-".join("-" * w for w in widths))
    print(
        f"(machine: {os.cpu_count()} CPUs, load average {min(loads):.1f}-{max(loads):.1f} during "
        "the run; latencies are medians over repeated runs and move with the load)"
    )


def _write(
    results: list[Metric],
    timings: dict[str, float],
    loads: list[float],
    *,
    quick: bool,
    names: list[str],
) -> None:
    data = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "benchmarks": names,
        "seconds_per_benchmark": timings,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average": [round(x, 2) for x in loads],
        },
        "metrics": [asdict(m) for m in results],
    }
    RESULTS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"results written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
