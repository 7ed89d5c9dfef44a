"""The offline answers to "Who is X?" on seven novels read to a position, for a before/after diff of
any change to how a person is introduced (``folio.agent.offline.answer``, the people tool).

Each question of ``benchmarks/data/who_questions.json`` is asked in a fresh conversation; the first
two quotes of its answer are printed. Not a benchmark with a target: the first quote should say who
the person is (an introduction), not merely mention them. Diff two runs, one per source tree::

    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/who_questions.py > /tmp/before.txt
    PYTHONPATH=src .venv/bin/python benchmarks/who_questions.py > /tmp/after.txt
    diff /tmp/before.txt /tmp/after.txt

The books are imported once into ``--cache-dir`` (about 4 minutes with the shipped embedder; a run
after that takes about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"
DATA = ROOT / "benchmarks" / "data" / "who_questions.json"
QUOTES = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books-dir", type=Path, default=BOOKS)
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "folio-who")
    args = parser.parse_args()
    os.environ["FOLIO_HOME"] = str(args.cache_dir)
    from folio import Container  # after FOLIO_HOME: the library lives in the cache

    folio = Container()
    held = {b.source_name: b for b in folio.library.list_books()}
    for entry in json.loads(DATA.read_text(encoding="utf-8"))["books"]:
        book = held.get(entry["file"]) or folio.ingest.execute(args.books_dir / entry["file"]).book
        book = folio.library.set_position(
            book.id, chapter=entry.get("position"), page=entry.get("page")
        )
        print(f"## {book.title} ({book.describe_position()})")
        for question in entry["questions"]:
            conversation = folio.conversations.create(book.id)
            turn = folio.chat().execute(conversation.id, question)
            folio.conversations.delete(conversation.id)
            quotes = [line for line in turn.answer.splitlines() if line.startswith("- ")]
            print(f"  {question}")
            for line in quotes[:QUOTES] or [turn.answer.splitlines()[0]]:
                print(f"    {line[:200]}")


if __name__ == "__main__":
    main()
