"""Maintainers only: write the vectors of the bundled demo book's passages beside the model.

    python scripts/known_vectors.py          # rewrites minilm/known_vectors.npz beside the model
    python scripts/known_vectors.py --check  # says whether the shipped table is whole and right
    python scripts/known_vectors.py --tests  # the test excerpts' table (tests/excerpts.py)

`folio demo` imports the bundled book (Frankenstein) with the shipped model on a reader's first run;
its passages' vectors are shipped so that import computes none (about half a minute of CPU on a
2-core machine). The script imports the book as folio does (same parser, chunker and token counter)
into a temporary library with the shipped float32 model, table lookups off, and records every
passage it embeds, then the offline policy's examples of each kind of message (embedded on a
process's first message: ``folio.agent.offline.kinds.examples``) and what a people list asks of
places (``folio.agent.lexicon.PLACES``/``PERSONS``). Run it when the model, the chunker, the book
or those examples change: the table is keyed by
each passage's text and stamped with the model's sha256 and window, so a stale table is never
wrong, only incomplete (`--check`, and a test, say so).

`--tests` does the same for the parts of the shared data set's books that the real-model tests
import (`tests/excerpts.py`), into `tests/fixtures/known_vectors.npz`; it needs ../shared/data.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from folio.adapters.embeddings.onnx import (
    KNOWN_VECTORS_FILE,
    OnnxEmbedder,
    packaged_model_dir,
    read_known_vectors,
    text_key,
    write_known_vectors,
)
from folio.agent.lexicon import PERSONS, PLACES
from folio.agent.offline.kinds import examples
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.ports import Vectors
from folio.entrypoints.cli.demo import bundled_book


class _Recording:
    """The shipped model, recording what it embeds."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.vectors: list[Vectors] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = self.inner.embed(texts)
        self.texts.extend(texts)
        self.vectors.append(vectors)
        return vectors


def passages_and_vectors(
    books: Sequence[Path], *, with_examples: bool = False
) -> tuple[list[str], Vectors, int]:
    with tempfile.TemporaryDirectory(prefix="folio-known-") as tmp:
        home = Path(tmp)
        model = OnnxEmbedder(packaged_model_dir(), home / "models")  # no table: computes all
        recording = _Recording(model)
        settings = load_settings(env={"FOLIO_HOME": str(home / "home")})
        container = Container(settings, embedder=recording)  # type: ignore[arg-type]
        for book in books:
            container.ingest.execute(book)
        if with_examples:  # what the offline policy embeds on its first message
            recording.embed([text for texts in examples().values() for text in texts])
            recording.embed([*PLACES, *PERSONS])  # and a people list on its first
        container.close()
    return recording.texts, np.concatenate(recording.vectors), model.max_tokens


def _test_excerpts(folder: Path) -> tuple[list[Path], Path]:
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from tests.excerpts import KNOWN_VECTORS, write_excerpts

    os.environ.pop("FOLIO_E2E_FULL_BOOKS", None)  # the table is of the excerpts, not whole books

    shared = Path(os.environ.get("FOLIO_SHARED_DATA") or root.parent / "shared" / "data")
    return write_excerpts(shared, folder), KNOWN_VECTORS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped table")
    parser.add_argument("--tests", action="store_true", help="the test excerpts' table instead")
    args = parser.parse_args()
    model_dir = packaged_model_dir()
    with tempfile.TemporaryDirectory(prefix="folio-excerpts-") as tmp:
        if args.tests:
            books, target = _test_excerpts(Path(tmp))
        else:
            books, target = [bundled_book()], model_dir / KNOWN_VECTORS_FILE
        texts, vectors, window = passages_and_vectors(books, with_examples=not args.tests)
    if args.check:
        known = read_known_vectors(target, model_dir, window)
        pairs = [(known.get(text_key(t)), v) for t, v in zip(texts, vectors, strict=True)]
        missing = sum(shipped is None for shipped, _ in pairs)
        worst = min((float(s @ v) for s, v in pairs if s is not None), default=1.0)
        print(f"{len(texts)} passages, {missing} without a known vector, lowest cosine {worst:.6f}")
        return 0 if not missing and worst > 0.9999 else 1
    write_known_vectors(target, texts, vectors, model_dir, window)
    print(f"wrote {target} ({len(texts)} passages, {target.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
