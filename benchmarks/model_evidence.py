"""Evidence a model is sent: does the text of the top 5 passages a model reads hold what answers?

With a model, ``search_book`` shows each passage cut to the sentences sharing most of the query's
words and their neighbours (``folio.agent.excerpts``); the offline policy reads whole passages.
This replays the turns of a ``*.conversations.jsonl`` file (the CoQA anthology by default) and, for
each turn with evidence (its spans mapped onto the book by ``EvidenceMapper``, as ``folio eval
retrieval`` does), searches ``search_book`` through the registry for 5 passages and scores:

- ``whole``: an evidence span lies wholly in one of the 5 passages' text (before: whole chunks);
- ``sent``: it lies wholly in what the model is sent of them (after: the excerpts, as the tool
  returns them with ``ToolServices.excerpts`` set, as a model's turn has it); ``kept``: sent/whole;
- ``overlap``: the text sent overlaps an evidence span (some of it is there);
- ``chars``: characters of passage text sent per search (``Passage.sent_text``), on average.

Two queries, as a model might write them: ``conversation``, the question with the earlier questions
of the conversation (the offline agent's query, which ``folio eval retrieval`` scores as "agent")
and ``question``, the follow-up alone (a model that leans on nothing). ``--sweep`` also scores other
windows (neighbours, budget, lead) on the conversation query, from the same searches.

    .venv/bin/python benchmarks/model_evidence.py [--limit N] [--sweep] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from folio.agent.excerpts import PassageExcerpts  # noqa: E402
from folio.agent.offline.strategy import search_query  # noqa: E402
from folio.agent.tools import ToolContext  # noqa: E402
from folio.app.evaluation.conversations import EvidenceMapper, load_conversations  # noqa: E402
from folio.bootstrap import Container  # noqa: E402
from folio.config import load_settings  # noqa: E402
from folio.domain.passages import SEARCH_BOOK, Passage, SearchResults  # noqa: E402
from folio.entrypoints.cli.eval_retrieval import INDEX_FORMAT  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "data" / "eval" / "coqa_anthology_dev.conversations.jsonl"
K = 5
# (neighbours, budget, lead): other windows, measured against the default
SWEEP = [(1, 500, 1), (1, 700, 0), (1, 700, 2), (0, 700, 1), (2, 700, 1), (1, 900, 1)]

Span = tuple[int, int]


def within(spans: Sequence[Span], evidence: Sequence[Span]) -> bool:
    """An evidence span lies wholly inside one of ``spans``."""
    return any(a <= s and e <= b for s, e in evidence for a, b in spans)


def overlaps(spans: Sequence[Span], evidence: Sequence[Span]) -> bool:
    return any(s < b and a < e for s, e in evidence for a, b in spans)


def sent_spans(passage: Passage) -> list[Span]:
    """The book offsets of what a model is sent of ``passage``."""
    if passage.shown is None:
        return [(passage.char_start, passage.char_end)]
    return list(passage.shown)


@dataclass
class Tally:
    turns: int = 0
    whole: int = 0
    sent: int = 0
    overlap: int = 0
    chars: list[int] = field(default_factory=list)
    whole_chars: list[int] = field(default_factory=list)

    def add(self, passages: Sequence[Passage], evidence: list[Span]) -> None:
        self.turns += 1
        self.whole += within([(p.char_start, p.char_end) for p in passages], evidence)
        shown = [span for p in passages for span in sent_spans(p)]
        self.sent += within(shown, evidence)
        self.overlap += overlaps(shown, evidence)
        self.chars.append(sum(len(p.sent_text) for p in passages))
        self.whole_chars.append(sum(len(p.text) for p in passages))

    def row(self) -> dict[str, float]:
        n = max(self.turns, 1)
        return {
            "turns": self.turns,
            "whole": round(self.whole / n, 4),
            "sent": round(self.sent / n, 4),
            "kept": round(self.sent / max(self.whole, 1), 4),
            "overlap": round(self.overlap / n, 4),
            "chars": round(statistics.mean(self.chars or [0])),
            "whole chars": round(statistics.mean(self.whole_chars or [0])),
        }


def open_book(path: Path, cache: Path) -> tuple[Container, Any, EvidenceMapper]:
    """The evaluation's cached import of the book (the same cache as ``folio eval retrieval``)."""
    conversations = load_conversations(path)
    raw_path = path.parent / conversations[0].book
    raw = raw_path.read_bytes()
    settings = load_settings()
    key = hashlib.sha256(raw + settings.embedding_model.encode() + INDEX_FORMAT).hexdigest()[:16]
    container = Container(
        settings.replaced(home=cache / key, conversation_store="sqlite", database_url=None)
    )
    book = container.books.find_by_hash(hashlib.sha256(raw).hexdigest())
    if book is None:
        book = container.ingest.execute(raw_path).book
    return container, book, EvidenceMapper(raw.decode("utf-8"), container.books.get_text(book.id))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=Path, default=DEFAULT)
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "folio-me")
    parser.add_argument("--sweep", action="store_true", help="score other windows too")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    container, book, mapper = open_book(args.conversations, args.cache_dir)
    excerpts = PassageExcerpts()
    services = container.tool_services(container.books, None)  # whole passages
    for_model = replace(services, excerpts=excerpts)  # as a model's turn has them
    context = ToolContext(book=book)
    tools = container.tools
    variants = {f"n{n} b{b} w{w}": PassageExcerpts(n, b, w)
                for n, b, w in (SWEEP if args.sweep else [])}  # fmt: skip
    tallies: dict[str, Tally] = {}
    tool_ms: list[float] = []
    for conversation in load_conversations(args.conversations)[: args.limit]:
        earlier: list[str] = []
        for turn in conversation.turns:
            evidence = [m for s, e in turn.evidence if (m := mapper.map(s, e)) is not None]
            queries = {"conversation": search_query(turn.question, earlier),
                       "question": turn.question}  # fmt: skip
            earlier.append(turn.question)
            if not evidence:
                continue
            for name, query in queries.items():
                arguments = {"query": query, "k": K}
                started = time.perf_counter()
                sent = tools.execute(SEARCH_BOOK, context, for_model, arguments).data
                tool_ms.append((time.perf_counter() - started) * 1000)
                assert isinstance(sent, SearchResults)
                tallies.setdefault(name, Tally()).add(sent.passages, evidence)
                if name != "conversation" or not variants:
                    continue
                whole = tools.execute(SEARCH_BOOK, context, services, arguments).data
                assert isinstance(whole, SearchResults)
                for label, variant in variants.items():
                    tallies.setdefault(label, Tally()).add(variant.trim(query, whole.passages),
                                                           evidence)  # fmt: skip
    report = {name: t.row() for name, t in tallies.items()}
    p95 = sorted(tool_ms)[int(0.95 * (len(tool_ms) - 1))]
    timing = {
        "search median ms": round(statistics.median(tool_ms), 1),
        "search p95 ms": round(p95, 1),
    }
    if args.json:
        print(json.dumps({"excerpts": report, **timing}, indent=1))
        return
    print(
        f"Top {K} passages, evidence wholly in the text a model is sent "
        f"(default window: neighbours {excerpts.neighbours}, budget {excerpts.budget}, "
        f"lead {excerpts.lead}):"
    )
    print(f"  {'query / window':22} turns  whole  sent  kept  overlap  chars sent / whole")
    for name, row in report.items():
        print(
            f"  {name:22} {row['turns']:5}  {row['whole']:.3f}  {row['sent']:.3f}"
            f"  {row['kept']:.3f}  {row['overlap']:.3f}  {row['chars']:6} / {row['whole chars']}"
        )
    print(f"  search_book with excerpts (search, cut): median {timing['search median ms']} ms, "
          f"p95 {timing['search p95 ms']} ms (default embedder)")  # fmt: skip


if __name__ == "__main__":
    main()
