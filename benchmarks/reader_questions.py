"""Ten reader questions per book, asked offline through the real CLI, written down for judging.

Imports each book of ``data/reader_questions.json`` into a fresh FOLIO_HOME at its reading position
(``folio add FILE --position P --json``), then asks its ten questions in ONE conversation, each as
its own process (``folio chat BOOK -m Q --json``, then ``--conversation ID`` for the next turns),
with the offline provider and no model keys. Writes a Markdown transcript: for every turn the
question, its rubric (written before any run), the answer, its citations, the engine time of the
turn (``latency_ms`` of the stored turn) and the wall time of the process. Judging the answers
against the rubrics is left to a person (``reader_questions/judgments.md``).

The folio that runs is the source tree given by ``--src`` (default: ``$PYTHONPATH`` if set, else
this checkout's ``src``), with this interpreter and its packages, so two versions can be compared:

    PYTHONPATH=/work/before/src .venv/bin/python benchmarks/reader_questions.py --out before.md
    .venv/bin/python benchmarks/reader_questions.py --src src --out after.md [--book sense]

The transcript names the tree, its commit (and whether it has uncommitted changes) and the
``folio/__init__.py`` the CLI imported. Most of the run is embedding the two books with the real
model (a few minutes on the 2-core development machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = Path(__file__).resolve().parent / "data" / "reader_questions.json"
BOOKS = ROOT.parent / "shared" / "data" / "books"
TURN_TIMEOUT = 600  # seconds: a cold process loads the embedding model before its first answer
IMPORT_TIMEOUT = 1800


@dataclass
class Turn:
    kind: str
    question: str
    rubric: str
    answer: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    searches: list[Any] = field(default_factory=list)
    engine_ms: float | None = None
    wall_s: float = 0.0
    error: str | None = None


@dataclass
class BookRun:
    file: str
    title: str
    position: str
    described: str = ""
    import_s: float = 0.0
    chunks: int | None = None
    turns: list[Turn] = field(default_factory=list)


class Folio:
    """``python -m folio.entrypoints.cli.main`` of one source tree in one FOLIO_HOME, offline."""

    def __init__(self, src: Path, home: Path) -> None:
        self.home = home
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FOLIO_", "ANTHROPIC_", "OPENAI_", "OLLAMA_"))
        }
        env.update(FOLIO_HOME=str(home), PYTHONPATH=str(src), FOLIO_PROVIDER="offline")
        self.env = env

    def run(self, *args: str, timeout: int) -> tuple[subprocess.CompletedProcess[str], float]:
        command = [sys.executable, "-m", "folio.entrypoints.cli.main", *args]
        started = time.perf_counter()
        done = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        return done, time.perf_counter() - started

    def imported_from(self) -> str:
        code = "import folio; print(folio.__file__)"
        done = subprocess.run(
            [sys.executable, "-c", code], env=self.env, capture_output=True, text=True, check=False
        )
        return done.stdout.strip() or done.stderr.strip()[-300:]

    def engine_ms(self, conversation_id: str) -> dict[int, float]:
        """``turn_number -> latency_ms`` as the turns were stored (empty if the store differs)."""
        path = self.home / "folio.db"
        if not path.exists():
            return {}
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                rows = db.execute(
                    "SELECT turn_number, latency_ms FROM turns WHERE conversation_id = ?",
                    (conversation_id,),
                ).fetchall()
        except sqlite3.Error:
            return {}
        return {int(n): float(ms) for n, ms in rows}


def load_books(path: Path, books_dir: Path, only: list[str]) -> list[dict[str, Any]]:
    if not books_dir.is_dir():
        sys.exit(
            f"reader_questions: the books directory {books_dir} is absent; this benchmark reads "
            "the shared books (../shared/data/books next to the checkout, or --books-dir)."
        )
    books: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["books"]
    if only:
        books = [b for b in books if any(o.lower() in b["file"].lower() for o in only)]
        if not books:
            sys.exit(f"reader_questions: no book of {path.name} matches {only}")
    missing = [b["file"] for b in books if not (books_dir / b["file"]).is_file()]
    if missing:
        sys.exit(f"reader_questions: {', '.join(missing)} not found in {books_dir}")
    return books


def import_book(folio: Folio, path: Path, position: str) -> tuple[str, BookRun]:
    done, seconds = folio.run(
        "add", str(path), "--position", position, "--json", timeout=IMPORT_TIMEOUT
    )
    if done.returncode:
        sys.exit(f"reader_questions: folio add {path.name} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    book = result["book"]
    run = BookRun(path.name, book.get("title", ""), position, import_s=seconds)
    run.described = book.get("reading_position", {}).get("description", "")
    run.chunks = result.get("chunks")
    return str(book["id"]), run


def ask(folio: Folio, book_id: str, conversation: str | None, turn: Turn) -> str | None:
    """Ask ``turn.question`` (a new conversation when ``conversation`` is None); fill the turn in
    and return the conversation id. A failing turn is recorded, not fatal: it is a result."""
    where = ["--conversation", conversation] if conversation else ["--new"]
    try:
        done, turn.wall_s = folio.run(
            "chat", book_id, *where, "-m", turn.question, "--json", timeout=TURN_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        turn.error = f"no answer within {TURN_TIMEOUT} s"
        return conversation
    if done.returncode:
        turn.error = f"exit {done.returncode}: {done.stderr.strip()[-1500:]}"
        return conversation
    data = json.loads(done.stdout)
    turn.answer = str(data.get("answer") or "")
    turn.citations = list(data.get("citations") or [])
    turn.searches = list(data.get("searches") or [])
    return str(data["conversation_id"])


def run_book(src: Path, tmp: Path, books_dir: Path, spec: dict[str, Any]) -> BookRun:
    folio = Folio(src, tmp / Path(spec["file"]).stem)
    print(f"{spec['file']}: importing at {spec['position']} ...", file=sys.stderr, flush=True)
    book_id, run = import_book(folio, books_dir / spec["file"], spec["position"])
    print(f"  imported in {run.import_s:.0f} s; {run.described}", file=sys.stderr, flush=True)
    conversation: str | None = None
    for number, item in enumerate(spec["turns"], start=1):
        turn = Turn(item["kind"], item["question"], item["rubric"])
        conversation = ask(folio, book_id, conversation, turn)
        run.turns.append(turn)
        state = turn.error or f"{len(turn.answer)} characters"
        print(f"  {number:2}. {turn.kind}: {state} ({turn.wall_s:.1f} s)", file=sys.stderr)
    if conversation:
        stored = folio.engine_ms(conversation)
        for number, turn in enumerate(run.turns, start=1):
            turn.engine_ms = stored.get(number) if not turn.error else None
    return run


def tree_state(src: Path) -> str:
    """``7b77cec`` or ``7b77cec + uncommitted changes under src``: which code the run used."""
    git = ["git", "-C", str(src)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    if head.returncode:
        return "not a git tree"
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "."], capture_output=True, text=True, check=False
    )
    changed = len(dirty.stdout.splitlines())
    suffix = f" + uncommitted changes in {changed} files under src" if changed else ""
    return head.stdout.strip() + suffix


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines()) or "> "


def cite(c: dict[str, Any]) -> str:
    pages = f"p. {c.get('page_start')}"
    if c.get("page_end") not in (None, c.get("page_start")):
        pages = f"pp. {c.get('page_start')}-{c.get('page_end')}"
    return f"{c.get('chapter') or '?'}, {pages}"


def render_turn(number: int, turn: Turn) -> list[str]:
    engine = "-" if turn.engine_ms is None else f"{turn.engine_ms:.0f} ms"
    lines = [
        f"### {number}. {turn.kind}: {turn.question}",
        "",
        f"*Rubric:* {turn.rubric}",
        "",
        f"*Engine:* {engine}; process {turn.wall_s:.1f} s; searches: "
        + (", ".join(json.dumps(s, ensure_ascii=False) for s in turn.searches) or "none"),
        "",
    ]
    if turn.error:
        return [*lines, f"**Failed:** {turn.error}", ""]
    lines += [quoted(turn.answer), ""]
    if turn.citations:
        lines += ["*Citations:* " + "; ".join(cite(c) for c in turn.citations), ""]
    return lines


def render(runs: list[BookRun], src: Path, imported: str, started: datetime, seconds: float) -> str:
    lines = [
        "# Reader questions: transcript",
        "",
        f"- source tree: `{src}` ({tree_state(src)})",
        f"- folio imported from: `{imported}`",
        f"- run: {started:%Y-%m-%d %H:%M} UTC, {seconds:.0f} s in all; provider offline",
        "- questions and rubrics: `benchmarks/data/reader_questions.json`",
        "",
    ]
    for run in runs:
        engine = [t.engine_ms for t in run.turns if t.engine_ms is not None]
        median = sorted(engine)[len(engine) // 2] if engine else None
        lines += [
            f"## {run.title} ({run.file}), position {run.position}",
            "",
            f"Read {run.described}. Import {run.import_s:.0f} s ({run.chunks} passages); "
            + (f"median engine time per turn {median:.0f} ms." if median is not None else ""),
            "",
        ]
        for number, turn in enumerate(run.turns, start=1):
            lines += render_turn(number, turn)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the Markdown transcript")
    parser.add_argument("--src", type=Path, help="folio source tree (default: $PYTHONPATH or src)")
    parser.add_argument("--book", action="append", default=[], help="only books whose file ...")
    parser.add_argument("--books-dir", type=Path, default=BOOKS)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    args = parser.parse_args()
    src = (args.src or Path(os.environ.get("PYTHONPATH") or ROOT / "src")).resolve()
    if not (src / "folio" / "__init__.py").is_file():
        sys.exit(f"reader_questions: {src} is not a folio source tree (no folio/__init__.py)")
    books = load_books(args.questions, args.books_dir, args.book)
    started, clock = datetime.now(UTC), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="folio-reader-questions-") as tmp:
        imported = Folio(src, Path(tmp)).imported_from()
        print(f"folio from {imported}", file=sys.stderr)
        if not imported.startswith(str(src)):
            sys.exit(f"reader_questions: folio was imported from {imported}, not from {src}")
        runs = [run_book(src, Path(tmp), args.books_dir, spec) for spec in books]
    text = render(runs, src, imported, started, time.perf_counter() - clock)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
