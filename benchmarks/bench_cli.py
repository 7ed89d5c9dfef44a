"""CLI start-up benchmark: what a user waits for on a one-shot command.

1. ``folio search BOOK QUERY`` as a whole process (interpreter start, imports, settings, SQLite
   open, ONNX model load, query embedding, search, rendering): median of N runs. The bundled
   Frankenstein is imported first into a temporary FOLIO_HOME; the ONNX model ships in the
   package.
2. ``python -c "import folio.entrypoints.cli.main"``: the start-up every command pays.
3. What costs the time: ``python -X importtime`` of the one-shot search, the heaviest top-level
   packages by cumulative import time.

    .venv/bin/python benchmarks/bench_cli.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLIO = Path(sys.executable).with_name("folio")
QUERY = "Who is Victor's friend from Geneva?"
TARGET_SEARCH_S = 2.0
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _run(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, done


def _environment(home: Path) -> dict[str, str]:
    env = dict(os.environ, FOLIO_HOME=str(home), COLUMNS="100")
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST", "FOLIO_PROVIDER"):
        env.pop(var, None)
    return env


def _import_book(env: dict[str, str]) -> str:
    """Import the bundled book with the real embedder; returns its id."""
    code = (
        "from folio.bootstrap import Container\n"
        "from folio.entrypoints.cli.demo import bundled_book\n"
        "print(Container().ingest.execute(bundled_book()).book.id)\n"
    )
    _, done = _run([sys.executable, "-c", code], env)
    return done.stdout.strip().splitlines()[-1]


def import_costs(args: list[str], env: dict[str, str], *, top: int = 8) -> list[tuple[str, float]]:
    """The ``top`` root packages by import time (ms, the self time of all their modules summed) in
    a run of ``args``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    per_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        m = _IMPORT_LINE.match(line)
        if m:
            per_package[m.group(4).split(".")[0]] += int(m.group(1)) / 1000
    return sorted(per_package.items(), key=lambda kv: -kv[1])[:top]


def measure(*, runs: int = 5) -> dict[str, Any]:
    """Run the benchmark (printing as it goes); returns timings in seconds and import costs."""
    with tempfile.TemporaryDirectory(prefix="folio-bench-cli-") as home:
        env = _environment(Path(home))
        started = time.perf_counter()
        book_id = _import_book(env)
        print(f"imported the bundled book in {time.perf_counter() - started:.1f} s ({book_id[:8]})")
        search = [str(FOLIO), "search", book_id[:8], QUERY]
        _run(search, env)  # warm the OS file cache; not counted
        searches = [_run(search, env)[0] for _ in range(runs)]
        help_runs = [_run([str(FOLIO), "--help"], env)[0] for _ in range(runs)]
        imports = [
            _run([sys.executable, "-c", "import folio.entrypoints.cli.main"], env)[0]
            for _ in range(runs)
        ]
        bare = [_run([sys.executable, "-c", "pass"], env)[0] for _ in range(runs)]
        costs = import_costs(
            ["-m", "folio.entrypoints.cli.main", "search", book_id[:8], QUERY], env
        )
    numbers = {
        "search_s": searches,
        "help_s": help_runs,
        "import_main_s": imports,
        "python_s": bare,
        "import_costs_ms": costs,
    }
    report(numbers)
    return numbers


def report(numbers: dict[str, Any]) -> None:
    for key, label in (
        ("search_s", f"folio search BOOK {QUERY!r}"),
        ("help_s", "folio --help"),
        ("import_main_s", 'python -c "import folio.entrypoints.cli.main"'),
        ("python_s", 'python -c "pass" (the interpreter alone)'),
    ):
        t = numbers[key]
        print(
            f"{label:58} median {statistics.median(t):5.2f} s  (min {min(t):.2f}, "
            f"max {max(t):.2f}, n={len(t)})"
        )
    print("heaviest packages to import in a one-shot search (-X importtime, self ms summed):")
    for package, ms in numbers["import_costs_ms"]:
        print(f"  {package:28} {ms:8.0f} ms")


def metrics(*, quick: bool) -> list[Any]:
    from run_all import Metric

    numbers = measure(runs=3 if quick else 5)
    search = statistics.median(numbers["search_s"])
    heaviest = ", ".join(f"{p} {ms:.0f}" for p, ms in numbers["import_costs_ms"][:4])
    return [
        Metric(
            "cli",
            "one-shot `folio search` process: median",
            search,
            "s",
            target=f"< {TARGET_SEARCH_S:.0f} s",
            ok=search < TARGET_SEARCH_S,
            note=f"n={len(numbers['search_s'])}",
        ),
        Metric(
            "cli",
            "`import folio.entrypoints.cli.main`: median",
            statistics.median(numbers["import_main_s"]),
            "s",
            note=f"bare interpreter {statistics.median(numbers['python_s']):.2f} s",
        ),
        Metric("cli", "`folio --help`: median", statistics.median(numbers["help_s"]), "s"),
        Metric("cli", "heaviest imports of a search (ms)", None, note=heaviest),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    measure(runs=parser.parse_args().runs)


if __name__ == "__main__":
    main()
