"""Ingest benchmark: one book imported end to end through the real ``IngestBook`` use case (parse,
chunk, embed with the default ONNX embedder, store in a fresh SQLite library), with the time of each
stage from ``IngestResult.timings``.

Target: everything but embedding (parse + chunk + store) under 10% of the total: the model is the
cost, the rest of the pipeline must not be.

    .venv/bin/python benchmarks/bench_ingest.py [--book PATH] [--embedder NAME]
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
        started = time.perf_counter()
        result = container.ingest.execute(book)
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
        "other_share": (total - timings.get("embed", 0.0)) / total if total else 0.0,
    }


def report(numbers: dict[str, Any]) -> None:
    t = numbers["timings"]
    print(
        f"{numbers['book']}: {numbers['chunks']} chunks, {numbers['pages']} pages,"
        f" embedder {numbers['embedder']}"
    )
    for stage in ("parse", "chunk", "embed", "store"):
        share = t.get(stage, 0.0) / numbers["total"] if numbers["total"] else 0.0
        print(f"  {stage:6} {t.get(stage, 0.0):8.2f} s  {share:6.1%}")
    print(f"  total  {numbers['total']:8.2f} s  (wall {numbers['wall']:.2f} s)")
    print(
        f"  everything but embedding: {numbers['other_share']:.1%} of the total"
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
    args = parser.parse_args()
    report(measure(args.book, embedding_model=args.embedder))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
