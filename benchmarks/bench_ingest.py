"""Ingest benchmark: one book imported end to end through the real ``IngestBook`` use case (parse,
chunk, store in a fresh SQLite library, embed with the ONNX embedder), with the time of each stage
from ``IngestResult.timings`` and the time until a keyword search first answers (measured by
searching from the progress callback the moment embedding starts).

Before/after in one run (``--compare``): float32 embeddings against int8. The pipeline before the
"searchable in seconds" change stored the book only after embedding it all, so its first search
could come no earlier than the end of the import (the float32 total).

Target: everything but embedding (parse + chunk + store) under 10% of the total: the model is the
cost, the rest of the pipeline must not be.

    .venv/bin/python benchmarks/bench_ingest.py [--book PATH] [--embedder NAME] [--compare]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT.parent / "shared" / "data" / "books"
MOBY = BOOKS / "melville-moby_dick.txt"
FRANKENSTEIN = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
TARGET_OTHER_SHARE = 0.10
MODEL_STAGES = ("embed", "sentences", "summarise")  # the embedder's work (passages, sentences)


def measure(book: Path = MOBY, *, embedding_model: str | None = None) -> dict[str, Any]:
    """Import ``book`` into an empty library; returns stage seconds, chunk count and wall time."""
    from folio.bootstrap import Container
    from folio.config import load_settings

    with tempfile.TemporaryDirectory(prefix="folio-bench-ingest-") as home:
        overrides = {"home": Path(home)}
        if embedding_model:
            overrides["embedding_model"] = embedding_model  # type: ignore[assignment]
        container = Container(load_settings(**overrides))
        embedder = container.embedder
        embedder.embed(["warm up: the model load is not part of the ingest"])
        probe = _FirstSearch(container)
        started = probe.started = time.perf_counter()
        result = container.ingest.execute(book, progress=probe)
        wall = time.perf_counter() - started
    timings = dict(result.timings)
    total = sum(timings.values())
    return {
        "book": book.name,
        "embedder": embedder.name,
        "chunks": result.chunk_count,
        "pages": result.book.page_count,
        "timings": timings,
        "total": total,
        "wall": wall,
        "first_search": probe.answered_after,
        "first_search_hits": probe.hits,
        "other_share": (total - sum(timings.get(s, 0.0) for s in MODEL_STAGES)) / total
        if total
        else 0.0,
    }


class _FirstSearch:
    """Progress that runs a keyword search as soon as the book is stored (embedding starts)."""

    def __init__(self, container: Any) -> None:
        self._container = container
        self.started = 0.0
        self.answered_after: float | None = None
        self.hits = 0

    def stage(self, name: str, total: int | None = None) -> None:
        if name == "embed" and self.answered_after is None:
            book = self._container.library.list_books()[0]
            self.hits = len(self._container.searcher.search(book, "the sea", k=5))
            self.answered_after = time.perf_counter() - self.started

    def advance(self, n: int = 1) -> None:
        pass


def report(numbers: dict[str, Any]) -> None:
    t = numbers["timings"]
    print(
        f"{numbers['book']}: {numbers['chunks']} chunks, {numbers['pages']} pages,"
        f" embedder {numbers['embedder']}"
    )
    for stage in ("parse", "chunk", "store", "embed", "sentences", "summarise"):
        share = t.get(stage, 0.0) / numbers["total"] if numbers["total"] else 0.0
        print(f"  {stage:9} {t.get(stage, 0.0):8.2f} s  {share:6.1%}")
    print(f"  total  {numbers['total']:8.2f} s  (wall {numbers['wall']:.2f} s)")
    print(
        f"  first keyword search answered after {numbers['first_search']:.2f} s"
        f" ({numbers['first_search_hits']} hits)"
    )
    print(
        f"  everything but the embedder: {numbers['other_share']:.1%} of the total"
        f" (target < {TARGET_OTHER_SHARE:.0%})"
    )


def metrics(*, quick: bool) -> list[Any]:
    from run_all import Metric

    numbers = measure(FRANKENSTEIN if quick else MOBY)
    report(numbers)
    t, share = numbers["timings"], numbers["other_share"]
    book = numbers["book"]
    return [
        Metric(
            "ingest",
            f"{book}: total ingest",
            numbers["total"],
            "s",
            note=f"{numbers['chunks']} chunks",
        ),
        Metric("ingest", "  embed", t.get("embed"), "s"),
        Metric(
            "ingest",
            "  parse + chunk + store",
            numbers["total"] - t.get("embed", 0.0),
            "s",
            note=f"parse {t['parse']:.2f}, chunk {t['chunk']:.2f}, store {t['store']:.2f}",
        ),
        Metric(
            "ingest",
            "  share not embedding",
            round(share * 100, 1),
            "%",
            target=f"< {TARGET_OTHER_SHARE:.0%}",
            ok=share < TARGET_OTHER_SHARE,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=MOBY)
    parser.add_argument("--embedder", help="embedding model name (default: the configured one)")
    parser.add_argument(
        "--compare", action="store_true", help="float32 (before) and int8 (after) in one run"
    )
    args = parser.parse_args()
    if not args.compare:
        report(measure(args.book, embedding_model=args.embedder))
        return
    before = measure(args.book, embedding_model="all-MiniLM-L6-v2")
    report(before)
    after = measure(args.book, embedding_model="all-MiniLM-L6-v2-int8")
    report(after)
    print(
        f"total import: {before['total']:.1f} s -> {after['total']:.1f} s"
        f" ({before['total'] / after['total']:.2f}x faster);"
        f" first keyword search: {before['total']:.1f} s (old pipeline: after the whole import)"
        f" -> {after['first_search']:.2f} s"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
