"""Benchmark of the default embedder (all-MiniLM-L6-v2 on onnxruntime).

Reports: the cold start of a process that builds the embedder and embeds one query (median of N;
the model ships as an ONNX file in the package, so there is no export step), and the throughput on a
whole book cut into ~200-word chunks.

    .venv/bin/python benchmarks/bench_embed.py [--book PATH] [--runs 5] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BOOK = (ROOT / ".." / "shared" / "data" / "books" / "melville-moby_dick.txt").resolve()

_ONE_QUERY = """
import sys, pathlib
from folio.adapters.embeddings import make_embedder
make_embedder("all-MiniLM-L6-v2", cache_dir=pathlib.Path(sys.argv[1])).embed(["who is Queequeg?"])
"""


def main() -> None:
    args = _parse_args()
    with tempfile.TemporaryDirectory(prefix="folio-bench-") as tmp:
        cache = Path(tmp)
        cold = [_time_process(_ONE_QUERY, cache) for _ in range(args.runs)]
        median = statistics.median(cold)
        print(
            f"cold process (start, load model, embed 1 query): median {median:.2f} s"
            f" over {args.runs} runs (min {min(cold):.2f}, max {max(cold):.2f})"
        )
        _throughput(
            cache, args.book, words=args.words, threads=args.threads, batch_size=args.batch_size
        )


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=DEFAULT_BOOK)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--words", type=int, default=200, help="words per chunk")
    return parser.parse_args()


def _time_process(code: str, cache: Path) -> float:
    start = time.perf_counter()
    _run(code, cache)
    return time.perf_counter() - start


def _run(code: str, cache: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code, str(cache)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"benchmark step failed:\n{result.stderr}")
    return result.stdout.strip()


def chunk_words(text: str, size: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def _throughput(
    cache: Path, book: Path, *, words: int, threads: int | None, batch_size: int
) -> None:
    from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir

    chunks = chunk_words(book.read_text(encoding="utf-8"), words)
    embedder = OnnxEmbedder(packaged_model_dir(), cache, threads=threads, batch_size=batch_size)
    embedder.embed(["warm-up"])  # session load is measured above, not here
    start = time.perf_counter()
    vectors = embedder.embed(chunks)
    elapsed = time.perf_counter() - start
    print(
        f"{book.name}: {len(chunks)} chunks of ~{words} words -> {vectors.shape}"
        f" in {elapsed:.1f} s, {len(chunks) / elapsed:.1f} chunks/s"
        f" (batch {batch_size}, threads {threads or 'default'}, load average {_load():.1f})"
    )


def _load() -> float:
    return os.getloadavg()[0]


if __name__ == "__main__":
    main()
