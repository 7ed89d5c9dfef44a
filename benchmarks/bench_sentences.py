"""Sentence boundaries: the abbreviation-aware segmenter (sentencex, folio.domain.sentences) against
the plain regex it replaced (a full stop before a capital ends a sentence), on a whole book.

Reports the median time to segment the book (N runs) and the number of sentences each finds, and
how many sentences the regex ends right after a title ("Mr.", "Mrs.", "Dr.", "St.").

    .venv/bin/python benchmarks/bench_sentences.py [--book PATH] [--runs 7]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from folio.domain.sentences import sentence_spans

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BOOK = ROOT / "src" / "folio" / "data" / "frankenstein.txt"
# What chunking used before: . ! ? (and closing quotes) before white space, or a paragraph break.
_OLD = re.compile(r"\S.*?(?:[.!?]+[\"'’”)\]]*(?=\s|\Z)|(?=\n[ \t]*\n)|\Z)", re.S)
_TITLE_END = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St)\.$")


def old_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.start() + len(m.group().rstrip())) for m in _OLD.finditer(text)]


def timed(split: object, text: str, runs: int) -> tuple[float, list[tuple[int, int]]]:
    times, spans = [], []
    for _ in range(runs):
        start = time.perf_counter()
        spans = split(text)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, spans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=DEFAULT_BOOK)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    text = args.book.read_text(encoding="utf-8")
    for name, split in (("regex (before)", old_spans), ("sentencex (after)", sentence_spans)):
        ms, spans = timed(split, text, args.runs)
        cut = sum(bool(_TITLE_END.search(text[s:e])) for s, e in spans)
        print(
            f"{name:18} median {ms:7.1f} ms over {args.runs} runs; {len(spans)} sentences,"
            f" {cut} ending at a title (Mr./Mrs./Dr./St.); {args.book.name}, {len(text)} chars"
        )


if __name__ == "__main__":
    main()
