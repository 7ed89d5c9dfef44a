"""Who the people tool takes for the narrator of each book of ``../shared/data/books``, read to a
tenth, a fifth, half and all of its text: a check of ``_narrates`` (``folio.agent.tools.reader``)
for names taken for a narrator that are none, and of what the scan costs.

For every ``*.txt`` book and share of its text, every person of the lexicon of the text read with
at least ``MIN_NARRATOR_MENTIONS`` mentions is tested, as the people list does; the names that
pass are printed, with the milliseconds the scan took and those the lexicon took to build (the
people list builds it anyway). Not a benchmark with a target: run it before and after a change to
how a narrator is told, and diff::

    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/narrators.py > /tmp/before.txt
    PYTHONPATH=src .venv/bin/python benchmarks/narrators.py > /tmp/after.txt

About 15 s for the 18 books. On 2026-11-27: only Frankenstein's Victor (at half and all of it;
at its Chapter 5, a fifth, through the people tool's window) and Moby Dick's Ishmael (at every
share); the scan at most 92 ms a book (the KJV's whole text, whose lexicon takes 3.8 s; Vanity
Fair's 66 ms and 1.0 s).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from folio.agent.tools.reader import MIN_NARRATOR_MENTIONS, _narrates
from folio.domain.lexicon import Lexicon

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"
SHARES = (0.1, 0.2, 0.5, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books-dir", type=Path, default=BOOKS)
    args = parser.parse_args()
    for path in sorted(args.books_dir.glob("*.txt")):
        whole = path.read_text(encoding="utf-8", errors="replace")
        for share in SHARES:
            text = whole[: int(len(whole) * share)]
            started = time.perf_counter()
            lexicon = Lexicon.of(text)
            built = time.perf_counter()
            found = [
                name.name
                for name, mentions, _ in lexicon.people(0, len(text), len(lexicon.names))
                if mentions >= MIN_NARRATOR_MENTIONS and _narrates([(0, text)], name.offsets)
            ]
            scanned = time.perf_counter()
            print(
                f"{path.name:34} {share:4.0%}  narrators {found}  scan"
                f" {(scanned - built) * 1000:4.0f} ms  (lexicon {(built - started) * 1000:5.0f} ms)"
            )


if __name__ == "__main__":
    main()
