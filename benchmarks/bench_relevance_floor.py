"""The offline answer's relevance floor (``Embedder.relevance_floor``) against what it separates.

For every turn of a conversations file (``../shared/data/eval``, the CoQA anthology by default) it
embeds the reader's question with the packaged model and scores two sentences of the book:
- the sentence holding the turn's evidence (it answers the question);
- a sentence drawn at random from another conversation's story (it cannot answer it).
It prints the quantiles of both, the share of each above the floor, and the floor that would
separate them best (highest balanced accuracy), so the floor is a measured number, not a guess.

    .venv/bin/python benchmarks/bench_relevance_floor.py [--conversations PATH] [--limit 400]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from folio.adapters.embeddings import make_embedder
from folio.domain.sentences import sentence_spans

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "eval" / "coqa_anthology_dev.conversations.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=Path, default=DEFAULT)
    parser.add_argument("--limit", type=int, default=400, help="turns scored (default 400)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.conversations.read_text().splitlines() if line]
    text = (args.conversations.parent / rows[0]["book"]).read_text(encoding="utf-8")
    spans = sentence_spans(text)
    starts = np.array([s for s, _ in spans])

    def sentence_at(offset: int) -> int:
        return int(np.searchsorted(starts, offset, side="right") - 1)

    # each conversation's story: the sentences between its first and last evidence
    stories = []
    for row in rows:
        offsets = [e[0] for turn in row["turns"] for e in turn.get("evidence") or []]
        stories.append(range(sentence_at(min(offsets)), sentence_at(max(offsets)) + 1))
    rng = random.Random(args.seed)
    questions, answering, unrelated = [], [], []
    for i, row in enumerate(rows):
        others = [s for j, s in enumerate(stories) if j != i and len(s)]
        for turn in row["turns"]:
            if not turn.get("evidence") or len(questions) >= args.limit:
                continue
            start, end = spans[sentence_at(turn["evidence"][0][0])]
            other = rng.choice(others)
            o_start, o_end = spans[rng.choice(other)]
            questions.append(turn["question"])
            answering.append(text[start:end])
            unrelated.append(text[o_start:o_end])
    embedder = make_embedder("all-MiniLM-L6-v2", cache_dir=Path.home() / ".cache" / "folio")
    q = embedder.embed(questions)
    good = (q * embedder.embed(answering)).sum(axis=1)
    bad = (q * embedder.embed(unrelated)).sum(axis=1)
    floor = embedder.relevance_floor
    print(f"{len(questions)} turns of {args.conversations.name}; floor {floor} ({embedder.name})")
    for name, scores in (("answering sentence", good), ("unrelated sentence", bad)):
        q10, q50, q90 = np.quantile(scores, [0.1, 0.5, 0.9])
        print(
            f"{name:19} cosine p10 {q10:.3f}  median {q50:.3f}  p90 {q90:.3f};"
            f" above the floor {np.mean(scores > floor):.1%}"
        )
    grid = np.round(np.arange(0.0, 0.61, 0.05), 2)
    print("floor  answering above  unrelated above")
    for t in grid:
        print(f"{t:5.2f}  {np.mean(good > t):15.1%}  {np.mean(bad > t):15.1%}")
    balanced = [(np.mean(good > t) + np.mean(bad <= t)) / 2 for t in grid]
    best = int(np.argmax(balanced))
    print(
        f"best separating floor {grid[best]:.2f} (balanced accuracy {balanced[best]:.3f});"
        f" at {floor}: {(np.mean(good > floor) + np.mean(bad <= floor)) / 2:.3f}"
    )


if __name__ == "__main__":
    main()
