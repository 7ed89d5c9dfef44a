"""CLI start-up benchmark: what a user waits for on a one-shot command.

1. ``folio search BOOK QUERY`` as a whole process (interpreter start, imports, settings, SQLite
   open, ONNX model load, query embedding, search, rendering): median of N runs. The bundled
   Frankenstein is imported first into a temporary FOLIO_HOME; the ONNX model ships in the
   package.
2. ``folio books`` (that library of one book) and ``folio --help``: the one-shot commands that
   never embed (target for ``folio books``: under 0.3 s).
3. ``python -c "import folio.entrypoints.cli.main"``: the start-up every command pays.
4. What costs the time: ``python -X importtime`` of the one-shot search, the heaviest top-level
   packages by cumulative import time.

    .venv/bin/python benchmarks/bench_cli.py [--runs 5]

With ``--before REV``, ``folio --help``, ``folio books``, ``folio add`` (the bundled book into an
empty library) and ``folio serve`` (until it answers) are measured, for REV's code (a
temporary git worktree run with this interpreter and packages through PYTHONPATH) and for this
checkout's (or ``--after REV``'s), the runs interleaved so that both versions meet the same load
on a shared machine; each version lists a library of one book it imported itself (the bundled
Frankenstein, hashing embeddings):

    .venv/bin/python benchmarks/bench_cli.py --before 189df32 [--after HEAD] [--runs 15]
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLIO = Path(sys.executable).with_name("folio")
BUNDLED_BOOK = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
QUERY = "Who is Victor's friend from Geneva?"
TARGET_SEARCH_S = 2.0
TARGET_BOOKS_S = 0.3
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
    for var in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OLLAMA_HOST",
        "FOLIO_PROVIDER",
        "FOLIO_CONFIG",
        "FOLIO_DATABASE_URL",
        "FOLIO_EMBEDDING_MODEL",
    ):
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
        books = [_run([str(FOLIO), "books"], env)[0] for _ in range(runs)]
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
        "books_s": books,
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
        ("books_s", "folio books (one book)"),
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
    books = statistics.median(numbers["books_s"])
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
        Metric(
            "cli",
            "`folio books` (one book): median",
            books,
            "s",
            target=f"< {TARGET_BOOKS_S} s",
            ok=books < TARGET_BOOKS_S,
        ),
        Metric("cli", "`folio --help`: median", statistics.median(numbers["help_s"]), "s"),
        Metric("cli", "heaviest imports of a search (ms)", None, note=heaviest),
    ]


@contextmanager
def source_tree(rev: str | None) -> Iterator[Path]:
    """The ``src`` folder of ``rev`` checked out into a temporary git worktree (removed after);
    ``None``: this checkout's own, as it is."""
    if rev is None:
        yield ROOT / "src"
        return
    with tempfile.TemporaryDirectory(prefix="folio-bench-rev-") as tmp:
        tree = Path(tmp) / "tree"
        git = ["git", "-C", str(ROOT), "worktree"]
        subprocess.run([*git, "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            yield tree / "src"
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=False)


def compare(sources: dict[str, Path], *, runs: int) -> dict[str, dict[str, list[float]]]:
    """Wall times of ``folio --help`` and ``folio books`` for each version's source tree (run
    through PYTHONPATH), interleaved run by run; each version lists a library of one book that it
    imported itself (the bundled Frankenstein, hashing embeddings)."""
    times: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="folio-bench-startup-") as tmp:
        envs = {}
        for label, src in sources.items():
            env = dict(_environment(Path(tmp) / label), PYTHONPATH=str(src))
            _run(
                [str(FOLIO), "add", str(BUNDLED_BOOK), "--json"],
                {**env, "FOLIO_EMBEDDING_MODEL": "hashing"},
            )
            _run([str(FOLIO), "books"], env)  # warm the OS file cache; not counted
            envs[label] = env
            times[label] = {"help": [], "books": [], "add": [], "serve": []}
        for run in range(runs):
            for label, env in envs.items():
                times[label]["help"].append(_run([str(FOLIO), "--help"], env)[0])
                times[label]["books"].append(_run([str(FOLIO), "books"], env)[0])
                fresh = {**env, "FOLIO_HOME": str(Path(tmp) / f"{label}-add-{run}")}
                add = [str(FOLIO), "add", str(BUNDLED_BOOK)]
                times[label]["add"].append(
                    _run(add, {**fresh, "FOLIO_EMBEDDING_MODEL": "hashing"})[0]
                )
                times[label]["serve"].append(_serve_ready(env))
    return times


def _serve_ready(env: dict[str, str]) -> float:
    """Seconds from starting ``folio serve`` until it answers ``GET /api/v1/books``."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(FOLIO), "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while time.perf_counter() - started < 60:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/books", timeout=1):
                    return time.perf_counter() - started
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("folio serve did not answer within 60 s")
    finally:
        server.terminate()
        server.wait(timeout=30)


def report_comparison(times: dict[str, dict[str, list[float]]]) -> None:
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(
            "PYTHONDONTWRITEBYTECODE is set: folio's own modules (no __pycache__ in src/) are"
            " compiled from source at every start"
        )
    labels = list(times)
    print(f"{'wall median (min-max), s':26}" + "".join(f"{label:>30}" for label in labels))
    for command, name in (
        ("help", "folio --help"),
        ("books", "folio books (one book)"),
        ("add", "folio add (txt, hashing)"),
        ("serve", "folio serve, until ready"),
    ):
        cells = []
        for label in labels:
            t = times[label][command]
            cells.append(f"{statistics.median(t):.3f} ({min(t):.2f}-{max(t):.2f})")
        print(f"{name:26}" + "".join(f"{cell:>30}" for cell in cells))
    runs = len(times[labels[0]]["books"])
    print(f"n={runs} each, interleaved; target for folio books: < {TARGET_BOOKS_S} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=None, help="runs per command (5; 15 with --before)"
    )
    parser.add_argument(
        "--before", help="compare `folio --help` and `folio books` with this commit"
    )
    parser.add_argument("--after", help="the other version (default: this checkout as it is)")
    args = parser.parse_args()
    if args.before is None:
        measure(runs=args.runs or 5)
        return
    after = f"after {args.after}" if args.after else "after (this checkout)"
    with source_tree(args.before) as before_src, source_tree(args.after) as after_src:
        times = compare(
            {f"before {args.before}": before_src, after: after_src}, runs=args.runs or 15
        )
    report_comparison(times)


if __name__ == "__main__":
    main()
