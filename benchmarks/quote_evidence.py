"""Sentence-level evidence of the offline answer: does a quote hold what answers the reader?

Replays the conversations of a ``*.conversations.jsonl`` file (the CoQA anthology by default)
through the real offline chat (``ChatWithBook``, the packaged embedder, SQLite), turn by turn in
one conversation each, and scores each turn's citations (every quoted sentence of the extractive
answer is a source narrowed to its own characters) against the turn's evidence span:

- ``passage``: one of the 5 passages each search of the turn ranks first overlaps the evidence
  (what retrieval found, as ``folio eval retrieval`` scores the agent: in the order the answer
  was drawn from, ``TurnResult.found``, where a version records it);
- ``any quote``: a quoted sentence overlaps it (what the answer shows the reader);
- ``first quote``: the first one does (what the reader reads first).

By turn depth too. The book is imported once into ``--cache-dir`` (reused while the file and the
model are unchanged), like ``folio eval retrieval``.

    .venv/bin/python benchmarks/quote_evidence.py [--conversations PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from folio.app.evaluation.conversations import EvidenceMapper, load_conversations
from folio.app.evaluation.retrieval import depth_bucket
from folio.bootstrap import Container
from folio.config import load_settings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "eval" / "coqa_anthology_dev.conversations.jsonl"
KEYS = ("passage", "any quote", "first quote")


def overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=Path, default=DEFAULT)
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "folio-qe")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    conversations = load_conversations(args.conversations)[: args.limit]
    raw_path = args.conversations.parent / conversations[0].book
    raw = raw_path.read_bytes()
    key = hashlib.sha256(raw).hexdigest()[:16]
    settings = load_settings().replaced(home=args.cache_dir / key)
    container = Container(settings.replaced(conversation_store="sqlite", database_url=None))
    book = container.books.find_by_hash(hashlib.sha256(raw).hexdigest())
    if book is None:
        book = container.ingest.execute(raw_path).book
    mapper = EvidenceMapper(raw.decode("utf-8"), container.books.get_text(book.id))
    chat = container.chat(provider="offline")
    hits: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(("turns", *KEYS), 0))
    for conversation in conversations:
        if conversation.book != conversations[0].book:
            continue
        conversation_id = container.conversations.create(book.id, "quote evidence").id
        for depth, turn in enumerate(conversation.turns, 1):
            result = chat.execute(conversation_id, turn.question)
            evidence = [m for s, e in turn.evidence if (m := mapper.map(s, e)) is not None]
            if not evidence:
                continue
            answered = dict(getattr(result, "found", ()))  # the order the answer was drawn from
            passages = [
                (p.char_start, p.char_end)
                for query in result.searches
                for p in answered.get(query, ())[:5]
            ] or [
                (h.chunk.char_start, h.chunk.char_end)
                for query in result.searches
                for h in container.searcher.search(book, query, k=5)
            ]
            quotes = [(c.char_start, c.char_end) for c in result.citations if c.quote]
            row = {
                "passage": any(overlaps(s, e, evidence) for s, e in passages),
                "any quote": any(overlaps(s, e, evidence) for s, e in quotes),
                "first quote": bool(quotes) and overlaps(*quotes[0], evidence),
            }
            for bucket in ("all", depth_bucket(depth)):
                hits[bucket]["turns"] += 1
                for k, v in row.items():
                    hits[bucket][k] += int(v)
    report = {
        b: {"turns": h["turns"], **{k: round(h[k] / h["turns"], 4) for k in KEYS}}
        for b, h in sorted(hits.items())
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for bucket, row in report.items():
        print(
            f"{bucket:12s} turns {row['turns']:4d}  " + "  ".join(f"{k} {row[k]:.3f}" for k in KEYS)
        )


if __name__ == "__main__":
    main()
