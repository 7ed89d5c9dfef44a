"""The people each book of ``../shared/data/books`` is said to have met, for a before/after diff of
any change to how names are told apart or joined (``folio.domain.lexicon``).

Prints, for every ``*.txt`` book, the 60 most mentioned people of its whole text with their other
forms and their mention counts. Not a benchmark with a target: diff two runs, one per source tree::

    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/people_lists.py > /tmp/before.txt
    PYTHONPATH=src .venv/bin/python benchmarks/people_lists.py > /tmp/after.txt
    diff /tmp/before.txt /tmp/after.txt

(``git worktree add --detach /tmp/before REV`` makes the other tree.) About 8 s for the 18 books.
``--places`` also prints, for each book at 10%, 30% and all of its text, the names the people
tool leaves out of the list as places the packaged embedder knows (``folio.agent.lexicon``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from folio.agent.lexicon import CANDIDATES, Lexicons
from folio.domain.lexicon import Lexicon

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books-dir", type=Path, default=BOOKS)
    parser.add_argument("--limit", type=int, default=60, help="people per book")
    parser.add_argument("--places", action="store_true", help="and the places left out")
    args = parser.parse_args()
    lexicons = None
    if args.places:
        from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir

        cache = Path.home() / ".cache" / "folio-people-lists"
        lexicons = Lexicons(OnnxEmbedder(packaged_model_dir(), cache, recent_vectors=0))
    for path in sorted(args.books_dir.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        print(f"## {path.name}")
        for name, mentions, _ in Lexicon.of(text).people(0, len(text), args.limit):
            print(f"  {name.name} {sorted(name.aliases)} {mentions}")
        for share in (0.1, 0.3, 1.0) if lexicons else ():
            read = text[: int(len(text) * share)]
            lexicon = Lexicon.of(read)
            every = lexicon.people(0, len(read), CANDIDATES)
            kept = {n.name for n, _, _ in lexicons.people(lexicon, 0, len(read), CANDIDATES)}
            print(
                f"  left out as places at {share:.0%}:",
                [n.name for n, _, _ in every if n.name not in kept],
            )


if __name__ == "__main__":
    main()
