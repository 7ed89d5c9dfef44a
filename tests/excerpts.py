"""The parts of the shared data set's books that the real-model tests import, and the table of
their passages' vectors (``tests/fixtures/known_vectors.npz``).

Importing them embeds 438 passages with the shipped model, more than a minute of CPU on a
2-core machine, in every run. The vectors are the model's own, computed once by
``python scripts/known_vectors.py --tests`` and looked up by each passage's text, as the demo
book's are: the fork server (``tests/forked_cli.py``) adds this table to the shipped one in the
``folio`` processes it starts, and the in-process golden conversation passes it to its embedder.
A passage whose text changed (the chunker, an excerpt) is not in the table and is computed as
before; a test says when the table no longer covers the excerpts.
"""

from __future__ import annotations

import os
from pathlib import Path

KNOWN_VECTORS = Path(__file__).resolve().parent / "fixtures" / "known_vectors.npz"


def pride_and_prejudice_excerpt(books_dir: Path, target: Path) -> Path:
    """Chapters I-XVI of Pride and Prejudice: Wickham, met in Chapter XV, exists past a reader
    at Chapter 10; a quarter of the import time of the whole book."""
    lines = (books_dir / "pg1342_pride_and_prejudice.txt").read_text(encoding="utf-8").split("\n")
    target.write_text("\n".join(lines[: lines.index("CHAPTER XVII.")]), encoding="utf-8")
    return target


def moby_dick_excerpt(books_dir: Path, target: Path) -> Path:
    """Chapters 36-45 of Moby Dick ("The Quarter-Deck" to "The Affidavit"): "Moby Dick" (41) and
    "The Whiteness of The Whale" (42) among their neighbours. The whole novel (1,200 passages)
    would take minutes to embed on a 2-core machine; FOLIO_E2E_FULL_BOOKS=1 uses it anyway."""
    source = books_dir / "melville-moby_dick.txt"
    if os.environ.get("FOLIO_E2E_FULL_BOOKS"):
        return source
    lines = source.read_text(encoding="utf-8").splitlines()
    start = lines.index("CHAPTER 36")
    end = lines.index("CHAPTER 46")
    target.write_text("\n".join([lines[0], "", *lines[start:end]]) + "\n", encoding="utf-8")
    return target


def coqa_anthology(shared_data: Path, target: Path) -> Path:
    """The CoQA dev set's book, which ``folio eval retrieval`` imports with the default model."""
    target.write_bytes((shared_data / "eval" / "coqa_anthology_dev.txt").read_bytes())
    return target


def write_excerpts(shared_data: Path, folder: Path) -> list[Path]:
    """Every book above, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    books = shared_data / "books"
    return [
        pride_and_prejudice_excerpt(books, folder / "pride_and_prejudice.txt"),
        moby_dick_excerpt(books, folder / "moby_dick.txt"),
        coqa_anthology(shared_data, folder / "coqa_anthology_dev.txt"),
    ]
