"""Benchmark of the default embedder (all-MiniLM-L6-v2 on onnxruntime).

Reports: the cold start of a process that builds the embedder and embeds one query (median of N;
the model ships as an ONNX file in the package, so there is no export step), and the throughput on a
whole book cut into ~200-word chunks, with onnxruntime's threads spinning between batches and
sleeping (folio's setting), in one run: wall time and the CPU time the embedding took. ``--load N``
keeps N other processes busy meanwhile, as a server's other work or a machine's other jobs would.

    .venv/bin/python benchmarks/bench_embed.py [--book PATH] [--runs 5] [--threads N] [--load N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
        with _busy(args.load):
            for spinning in (True, False):
                _throughput(
                    cache,
                    args.book,
                    words=args.words,
                    threads=args.threads,
                    batch_size=args.batch_size,
                    spinning=spinning,
                )


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=DEFAULT_BOOK)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--words", type=int, default=200, help="words per chunk")
    parser.add_argument("--load", type=int, default=0, help="busy processes during throughput")
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


@contextmanager
def _busy(processes: int) -> Iterator[None]:
    spin = "import time\nend = time.time() + 3600\nwhile time.time() < end: pass"
    busy = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(processes)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


def _throughput(
    cache: Path,
    book: Path,
    *,
    words: int,
    threads: int | None,
    batch_size: int,
    spinning: bool,
) -> None:
    from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir

    chunks = chunk_words(book.read_text(encoding="utf-8"), words)
    embedder = OnnxEmbedder(
        packaged_model_dir(), cache, threads=threads, batch_size=batch_size, spinning=spinning
    )
    embedder.embed(["warm-up"])  # session load is measured above, not here
    cpu, start = time.process_time(), time.perf_counter()
    vectors = embedder.embed(chunks)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"{book.name}, threads {'spinning' if spinning else 'sleeping'}: {len(chunks)} chunks of"
        f" ~{words} words -> {vectors.shape} in {elapsed:.1f} s ({cpu:.1f} s of CPU),"
        f" {len(chunks) / elapsed:.1f} chunks/s (batch {batch_size}, threads"
        f" {threads or 'default'}, load average {_load():.1f})"
    )


def _load() -> float:
    return os.getloadavg()[0]


if __name__ == "__main__":
    main()
