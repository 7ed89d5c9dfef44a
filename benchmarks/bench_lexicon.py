"""The book's lexicon stored at import (issue 25): what the first ``people`` call of a process
costs before and after, and what the import pays for it.

For each book (the bundled Frankenstein; Pride and Prejudice from ``../shared/data/books``), the
book is imported once into a temporary SQLite FOLIO_HOME (hashing embeddings: the lexicon does not
depend on them). Then, each in a fresh process (``python -c``), the first ``people`` tool call
with a name (the one call that reads the lexicon) is timed inside the process, the tool modules
imported, the container opened and the tool registry built before the clock starts:

- before: the lexicon built from the book's whole text in the process, as every process did
  before it was stored (the store is asked for none and keeps none);
- after: the lexicon read from the store (``book_lexicons``);
- first use of a book imported before lexicons were stored: built from the text and stored (once
  per book; every later process reads it).

The runs of the modes alternate, so each meets the same load on a shared machine. Import-time
cost: ``Lexicon.of`` and ``to_json`` on the book's text, in this process (median), and the size of
the stored JSON.

    .venv/bin/python benchmarks/bench_lexicon.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOKS = {
    "Frankenstein": (ROOT / "src" / "folio" / "data" / "frankenstein.txt", "Clerval"),
    "Pride and Prejudice": (
        ROOT.parent / "shared" / "data" / "books" / "pg1342_pride_and_prejudice.txt",
        "Elizabeth",
    ),
}
MODES = ("before", "after", "first use")

# Runs in a fresh process: argv = [mode, name]; prints the seconds of the first people call.
_FIRST_CALL = """
import sys, time
from folio.agent.tools.base import ToolContext, ToolServices
from folio.bootstrap import Container
from folio.domain.passages import PEOPLE

mode, name = sys.argv[1], sys.argv[2]
container = Container()
books = container.books
[book] = books.list()
book = book.with_position(book.position_at_percent(100))


class Unstored:  # as before lexicons were stored: none to read, none kept
    def lexicon(self, book_id):
        return None

    def save_lexicon(self, book_id, lexicon):
        pass

    def __getattr__(self, attr):
        return getattr(books, attr)


store = Unstored() if mode == "before" else books
services = ToolServices(container.searcher, store, container.chunk_index)
ctx = ToolContext(book=book)
registry = container.tools
started = time.perf_counter()
result = registry.execute(PEOPLE, ctx, services, {"name": name})
elapsed = time.perf_counter() - started
assert result.success and result.data.people, result
print(elapsed)
"""


def _environment(home: Path) -> dict[str, str]:
    env = dict(os.environ, FOLIO_HOME=str(home), FOLIO_EMBEDDING_MODEL="hashing")
    for var in ("FOLIO_CONFIG", "FOLIO_DATABASE_URL", "FOLIO_PROVIDER"):
        env.pop(var, None)
    return env


def _first_call(env: dict[str, str], mode: str, name: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL, mode, name],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {mode} run failed:\n{done.stderr}")
    return float(done.stdout.strip().splitlines()[-1])


def _import(path: Path, env: dict[str, str]) -> None:
    code = (
        "import sys\nfrom pathlib import Path\nfrom folio.bootstrap import Container\n"
        "Container().ingest.execute(Path(sys.argv[1]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"importing {path.name} failed:\n{done.stderr}")


def _forget_lexicon(home: Path) -> None:
    with sqlite3.connect(home / "folio.db") as conn:
        conn.execute("DELETE FROM book_lexicons")


def _stored_bytes(home: Path) -> int:
    with sqlite3.connect(home / "folio.db") as conn:
        row = conn.execute("SELECT length(CAST(data AS BLOB)) FROM book_lexicons").fetchone()
    return int(row[0])


def _stored_text(home: Path) -> str:
    with sqlite3.connect(home / "folio.db") as conn:
        return str(conn.execute("SELECT text FROM book_texts").fetchone()[0])


def _import_cost(text: str, runs: int) -> tuple[float, float]:
    """Median seconds of ``Lexicon.of`` and of ``to_json`` on the text the import stores."""
    from folio.domain.lexicon import Lexicon

    build, encode = [], []
    for _ in range(runs):
        started = time.perf_counter()
        lexicon = Lexicon.of(text)
        build.append(time.perf_counter() - started)
        started = time.perf_counter()
        lexicon.to_json()
        encode.append(time.perf_counter() - started)
    return statistics.median(build), statistics.median(encode)


def bench(title: str, path: Path, name: str, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-lexicon-") as tmp:
        home = Path(tmp)
        env = _environment(home)
        _import(path, env)
        times: dict[str, list[float]] = {m: [] for m in MODES}
        for _ in range(runs):
            times["before"].append(_first_call(env, "before", name))
            times["after"].append(_first_call(env, "after", name))
            _forget_lexicon(home)
            times["first use"].append(_first_call(env, "first use", name))  # stores it again
        size = _stored_bytes(home)
        text = _stored_text(home)
    build, encode = _import_cost(text, runs)
    print(f"\n{title} ({path.name}), first people(name={name!r}) call of a fresh process,")
    print(f"median of {runs}:")
    for mode in MODES:
        ms = [t * 1000 for t in times[mode]]
        print(
            f"  {mode:<10} {statistics.median(ms):8.1f} ms  (min {min(ms):.1f}, max {max(ms):.1f})"
        )
    ratio = statistics.median(times["before"]) / statistics.median(times["after"])
    print(f"  after is {ratio:.0f}x faster than before")
    print(
        f"  import adds: Lexicon.of {build * 1000:.0f} ms + to_json {encode * 1000:.1f} ms,"
        f" {size / 1024:.0f} KiB of JSON stored"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    for title, (path, name) in BOOKS.items():
        if not path.exists():
            print(f"\n{title}: {path} is missing, skipped")
            continue
        bench(title, path, name, args.runs)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
