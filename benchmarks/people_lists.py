"""The people each book of ``../shared/data/books`` is said to have met, for a before/after diff of
any change to how names are told apart or joined (``folio.domain.lexicon``).

Prints, for every ``*.txt`` book, the 60 most mentioned people of its whole text with their other
forms and their mention counts. Not a benchmark with a target: diff two runs, one per source tree::

    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/people_lists.py > /tmp/before.txt
    PYTHONPATH=src .venv/bin/python benchmarks/people_lists.py > /tmp/after.txt
    diff /tmp/before.txt /tmp/after.txt

(``git worktree add --detach /tmp/before REV`` makes the other tree.) About 8 s for the 18 books.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from folio.domain.lexicon import Lexicon

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books-dir", type=Path, default=BOOKS)
    parser.add_argument("--limit", type=int, default=60, help="people per book")
    args = parser.parse_args()
    for path in sorted(args.books_dir.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        print(f"## {path.name}")
        for name, mentions, _ in Lexicon.of(text).people(0, len(text), args.limit):
            print(f"  {name.name} {sorted(name.aliases)} {mentions}")


if __name__ == "__main__":
    main()
