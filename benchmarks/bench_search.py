"""Search latency: median and p95 of ``SearchBook.search`` (query embedding + hybrid SQLite search +
snippet) over 100 queries on Moby Dick, alone in the database and with the 18 .txt books of the
shared data set stored beside it.

    .venv/bin/python benchmarks/bench_search.py [--embedder auto|hashing|onnx] [--embed-all]

With the ONNX model, the 17 other books get random unit vectors of the same dimension unless
``--embed-all`` is given: their vector values do not affect a Moby Dick query (the vector side reads
only that book's matrix), while their text does (one FTS index for all books), and embedding ~18k
chunks on a small machine takes many minutes.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.contract.library_data import StoredBook, book_from_file  # noqa: E402
from tests.unit.test_snippets import reference_window  # noqa: E402

import folio.app.search as search_module  # noqa: E402
from folio.adapters.embeddings import DEFAULT_MODEL, HashingEmbedder, make_embedder  # noqa: E402
from folio.adapters.storage.sqlite.db import Database  # noqa: E402
from folio.adapters.storage.sqlite.library import SqliteLibrary  # noqa: E402
from folio.app.search import SearchBook  # noqa: E402
from folio.config import load_settings  # noqa: E402
from folio.domain.books import Book, PositionKind, ReadingPosition  # noqa: E402
from folio.domain.ports import Embedder, Vectors  # noqa: E402

BOOKS = ROOT.parent / "shared" / "data" / "books"
MOBY = BOOKS / "melville-moby_dick.txt"
QUESTIONS = [
    "Why does Ahab hunt the white whale?",
    "Who is Queequeg?",
    "What happened to Ahab's leg?",
    "Where does Ishmael meet Queequeg?",
    "What is the name of the ship?",
    "Father Mapple sermon about Jonah",
    "the doubloon nailed to the mast",
    "Starbuck wants to turn back",
    "What does Ishmael think of the sea?",
    "coffin life buoy",
    "the try-works at night",
    "How are whales classified?",
    "the spouter inn landlord",
    "Pip falls overboard",
    "the whiteness of the whale",
    "Fedallah prophecy hearse",
    "What did Stubb eat?",
    "ambergris",
    "The Rachel searching for her lost boys",
    "how does the story end",
]
_WORD = re.compile(r"[A-Za-z]{4,}")
TARGET_MEDIAN_MS = 30.0


def main() -> None:
    args = _parse_args()
    measure(embedder=args.embedder, embed_all=args.embed_all)


def measure(
    *, embedder: str = "auto", embed_all: bool = False, with_others: bool = True
) -> dict[str, dict[str, float]]:
    """Run the benchmark (printing as it goes); returns ``{"1 book": stats, "18 books": stats}``
    where each ``stats`` holds median/p95/max in ms of the whole search, of the query embedding and
    of the index alone, the first search of a process, and how the other books were embedded."""
    chosen, embedder_name = _embedder(embedder)
    print(f"embedder: {embedder_name}")
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        library = _open_library(Path(tmp) / "folio.db")
        moby = _store(library, MOBY, chosen)
        print(f"Moby Dick: {len(moby.chunks)} chunks, {len(moby.book.pages)} pages")
        queries = _queries(moby.text)
        searcher = SearchBook(library, chosen)
        out["1 book"] = _report("1 book in the DB", searcher, library, chosen, moby.book, queries)
        if with_others:
            real = embed_all or embedder_name.startswith("hash")
            _add_others(library, chosen, embed_all=real)
            count = library.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            books = len(library.list())
            label = f"{books} books, {count} chunks"
            out[f"{books} books"] = _report(label, searcher, library, chosen, moby.book, queries)
            out[f"{books} books"].update(books=books, chunks=count, others_embedded=float(real))
        library.close()
    return out


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=["auto", "hashing", "onnx"], default="auto")
    parser.add_argument("--embed-all", action="store_true", help="embed the 17 other books too")
    return parser.parse_args()


def _embedder(choice: str) -> tuple[Embedder, str]:
    if choice != "hashing":
        try:
            embedder = make_embedder(DEFAULT_MODEL, cache_dir=load_settings().models_dir)
            embedder.embed(["warm up the model"])
            return embedder, f"{embedder.name} (ONNX)"
        except Exception as e:  # benchmark: fall back and say why
            if choice == "onnx":
                raise
            print(f"(real embedder unavailable: {e}; using hashing)")
    embedder = HashingEmbedder()
    return embedder, embedder.name


def _open_library(path: Path) -> SqliteLibrary:
    db = Database(path)
    db.migrate()
    return SqliteLibrary(db)


def _store(
    library: SqliteLibrary, path: Path, embedder: Embedder, vectors: Vectors | None = None
) -> StoredBook:
    t0 = time.perf_counter()
    stored = book_from_file(path, _NoEmbedding(embedder.dimensions), book_id=path.stem)
    t1 = time.perf_counter()
    if vectors is None:
        vectors = embedder.embed([c.text for c in stored.chunks])
    t2 = time.perf_counter()
    library.add(stored.book, stored.text, stored.chunks, vectors)
    t3 = time.perf_counter()
    print(
        f"  stored {path.name}: parse+chunk {t1 - t0:.1f}s, embed {t2 - t1:.1f}s,"
        f" add {t3 - t2:.2f}s ({len(stored.chunks)} chunks)"
    )
    return StoredBook(stored.book, stored.text, stored.chunks, vectors)


def _add_others(library: SqliteLibrary, embedder: Embedder, *, embed_all: bool) -> None:
    rng = np.random.default_rng(0)
    for path in sorted(BOOKS.glob("*.txt")):
        if path == MOBY:
            continue
        vectors = None
        if not embed_all:
            n = len(book_from_file(path, _NoEmbedding(embedder.dimensions)).chunks)
            vectors = _random_unit(rng, n, embedder.dimensions)
        _store(library, path, embedder, vectors)


class _NoEmbedding:
    """Zero vectors, so that parsing and chunking are timed apart from embedding."""

    name = "none"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> Vectors:
        return np.zeros((len(texts), self.dimensions), dtype=np.float32)


def _random_unit(rng: np.random.Generator, n: int, d: int) -> Vectors:
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _queries(text: str, n: int = 100) -> list[str]:
    rng = random.Random(42)
    words = sorted(set(_WORD.findall(text)))
    generated = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(n - len(QUESTIONS))]
    return QUESTIONS + generated


def _report(
    label: str,
    searcher: SearchBook,
    library: SqliteLibrary,
    embedder: Embedder,
    book: Book,
    queries: list[str],
) -> dict[str, float]:
    rng = random.Random(7)
    positions = [
        book.position
        if i % 2
        else ReadingPosition(rng.randrange(book.char_count), PositionKind.PERCENT, 1.0)
        for i in range(len(queries))
    ]
    cold = _time(lambda: library.search(book.id, "whale", embedder.embed(["whale"])[0]))
    library._vectors.clear()  # measure the first search of a process: loads the vector cache
    cold = _time(lambda: library.search(book.id, "whale", embedder.embed(["whale"])[0]))
    for q in queries[:5]:
        searcher.search(book, q)
    total, before = _before_after(searcher, book, queries, positions)
    embed = [_time(lambda q=q: embedder.embed([q])) for q in queries]
    vectors = [embedder.embed([q])[0] for q in queries]
    index = [
        _time(lambda q=q, v=v, p=p: library.search(book.id, q, v, max_char_offset=p.char_offset))
        for q, v, p in zip(queries, vectors, positions, strict=True)
    ]
    print(f"\n{label}: {len(queries)} queries (half with a random reading position)")
    print(f"  SearchBook.search (embed + index + snippet): {_stats(total)}")
    print(f"    same, before (per-word snippet scan):     {_stats(before)}")
    print(f"    query embedding only:                     {_stats(embed)}")
    print(f"    ChunkIndex.search only:                   {_stats(index)}")
    print(f"  first search in a process (loads the book's vectors): {cold:.1f} ms")
    return {
        **_numbers("total", total),
        **_numbers("before", before),
        **_numbers("embed", embed),
        **_numbers("index", index),
        "cold_ms": cold,
    }


def _before_after(
    searcher: SearchBook, book: Book, queries: list[str], positions: list[ReadingPosition]
) -> tuple[list[float], list[float]]:
    """Each query timed with today's snippets and with the per-word scan they replaced
    (``before``), interleaved and best of 3 per query, so machine load hits both alike."""
    lean = search_module.best_window
    after_ms: list[float] = []
    before_ms: list[float] = []
    try:
        for q, p in zip(queries, positions, strict=True):
            placed = book.with_position(p)
            runs: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(3):
                for old in (False, True):
                    search_module.best_window = reference_window if old else lean
                    runs[old].append(_time(lambda q=q, b=placed: searcher.search(b, q)))
            after_ms.append(min(runs[False]))
            before_ms.append(min(runs[True]))
    finally:
        search_module.best_window = lean
    return after_ms, before_ms


def _numbers(prefix: str, ms: list[float]) -> dict[str, float]:
    return {
        f"{prefix}_median_ms": statistics.median(ms),
        f"{prefix}_p95_ms": _p95(ms),
        f"{prefix}_max_ms": max(ms),
    }


def _p95(ms: list[float]) -> float:
    ordered = sorted(ms)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]


def _time(call: Callable[[], object]) -> float:
    t = time.perf_counter()
    call()
    return (time.perf_counter() - t) * 1000


def _stats(ms: list[float]) -> str:
    return (
        f"median {statistics.median(ms):6.2f} ms   p95 {_p95(ms):6.2f} ms   max {max(ms):6.2f} ms"
    )


def metrics(*, quick: bool) -> list[Any]:
    """The summary rows for ``run_all``; ``quick`` skips the 17 other books."""
    from run_all import Metric

    numbers = measure(with_others=not quick)
    rows = []
    for label, stats in numbers.items():
        note = ""
        if "books" in stats and not stats["others_embedded"]:
            note = "other 17 books: real text + FTS, random vectors (not embedded)"
        median = stats["total_median_ms"]
        rows += [
            Metric(
                "search",
                f"Moby Dick, {label}: search median",
                median,
                "ms",
                target=f"< {TARGET_MEDIAN_MS:.0f} ms",
                ok=median < TARGET_MEDIAN_MS,
                note=note,
            ),
            Metric("search", f"Moby Dick, {label}: search p95", stats["total_p95_ms"], "ms"),
            Metric("search", "  of which query embedding (median)", stats["embed_median_ms"], "ms"),
        ]
    if quick:
        rows.append(Metric("search", "18 books", None, note="skipped (--quick)"))
    return rows


if __name__ == "__main__":
    main()
