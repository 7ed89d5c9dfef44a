"""Evaluation of query rewriting against human rewrites (CANARD, TREC CAsT).

Reads ``reformulation_dev.jsonl`` (one follow-up per line, see the data README), runs each
rewriter on every item, and reports token F1 / exact match (max over the human rewrites) per
source and overall, beside the copy-the-question baseline. Invariant: every rewriter sees exactly
the same items and history; a CANARD item's ``topic`` ("Article / Section") is given to the
rewriters as a leading ``(article, section)`` exchange, as the original CANARD data lists title
and section first in the history.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from folio.app.evaluation.metrics import best_exact_match, best_f1
from folio.domain.errors import EvalDataError
from folio.domain.ports import Exchange, QueryRewriter

COPY = "copy"
OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class ReformulationItem:
    id: str
    source: str
    question: str
    rewrites: tuple[str, ...]
    history: tuple[Exchange, ...] = ()
    topic: str | None = None

    def context(self) -> tuple[Exchange, ...]:
        """The history a rewriter sees: the topic (if any) as a leading exchange, then the turns."""
        if not self.topic:
            return self.history
        article, _, section = self.topic.partition(" / ")
        return ((article.strip(), section.strip() or None), *self.history)


@dataclass(frozen=True, slots=True)
class Score:
    n: int
    f1: float
    em: float


@dataclass(frozen=True, slots=True)
class ReformulationReport:
    """``scores[source][system]``; ``source`` is a short source name or ``"overall"``."""

    scores: Mapping[str, Mapping[str, Score]]
    systems: tuple[str, ...]
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            source: {
                s: {"n": v.n, "f1": round(v.f1, 4), "em": round(v.em, 4)} for s, v in row.items()
            }
            for source, row in self.scores.items()
        }

    def format_table(self) -> str:
        lines = [f"{'source':<18}{'system':<14}{'n':>6}{'F1':>8}{'EM':>8}"]
        for source, row in self.scores.items():
            for system in self.systems:
                v = row[system]
                lines.append(f"{source:<18}{system:<14}{v.n:>6}{v.f1:>8.3f}{v.em:>8.3f}")
        return "\n".join(lines)


def short_source(source: str) -> str:
    """``"CANARD dev (CC BY-SA 4.0)"`` -> ``"CANARD dev"``."""
    return source.split(" (", 1)[0].strip() or source


def evaluate_reformulation(
    items: Sequence[ReformulationItem],
    rewriters: Mapping[str, QueryRewriter],
    *,
    on_progress: Callable[[int], None] | None = None,
) -> ReformulationReport:
    """Score the copy baseline and each rewriter on ``items``, per source and overall."""
    systems = (COPY, *rewriters)
    sums: dict[str, dict[str, list[float]]] = {}
    for done, item in enumerate(items, 1):
        for system in systems:
            prediction = _predict(item, rewriters.get(system))
            for key in (short_source(item.source), OVERALL):
                acc = sums.setdefault(key, {}).setdefault(system, [0.0, 0.0, 0.0])
                acc[0] += 1
                acc[1] += best_f1(prediction, item.rewrites)
                acc[2] += best_exact_match(prediction, item.rewrites)
        if on_progress is not None:
            on_progress(done)
    scores = {
        key: {s: Score(int(a[0]), a[1] / a[0], a[2] / a[0]) for s, a in row.items()}
        for key, row in sorted(sums.items(), key=lambda kv: (kv[0] == OVERALL, kv[0]))
    }
    return ReformulationReport(scores=scores, systems=systems)


def _predict(item: ReformulationItem, rewriter: QueryRewriter | None) -> str:
    if rewriter is None:
        return item.question
    return rewriter.rewrite(item.question, item.context())


def load_reformulation_items(path: Path) -> list[ReformulationItem]:
    """Read a ``reformulation_dev.jsonl`` file; ``EvalDataError`` names a bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise EvalDataError(f"cannot read {path}: {e}") from e
    items = [_parse_line(path, n, line) for n, line in enumerate(lines, 1) if line.strip()]
    if not items:
        raise EvalDataError(f"{path}: no items")
    return items


def _parse_line(path: Path, number: int, line: str) -> ReformulationItem:
    where = f"{path}, line {number}"
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as e:
        raise EvalDataError(f"{where}: not valid JSON ({e.msg})") from e
    if not isinstance(raw, dict):
        raise EvalDataError(f"{where}: expected a JSON object")
    question = _required_str(raw, "question", where)
    rewrites = raw.get("rewrites")
    if (
        not isinstance(rewrites, list)
        or not rewrites
        or not all(isinstance(r, str) for r in rewrites)
    ):
        raise EvalDataError(f"{where}: 'rewrites' must be a non-empty list of strings")
    topic = raw.get("topic")
    if topic is not None and not isinstance(topic, str):
        raise EvalDataError(f"{where}: 'topic' must be a string")
    return ReformulationItem(
        id=str(raw.get("id", f"line-{number}")),
        source=str(raw.get("source") or "unknown"),
        question=question,
        rewrites=tuple(rewrites),
        history=_parse_history(raw.get("history", []), where),
        topic=topic or None,
    )


def _required_str(raw: Mapping[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EvalDataError(f"{where}: '{key}' must be a non-empty string")
    return value


def _parse_history(value: object, where: str) -> tuple[Exchange, ...]:
    if not isinstance(value, list):
        raise EvalDataError(f"{where}: 'history' must be a list of [question, answer] pairs")
    history: list[Exchange] = []
    for pair in value:
        ok = isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
        if not ok or not (pair[1] is None or isinstance(pair[1], str)):
            raise EvalDataError(f"{where}: each history entry must be [question, answer or null]")
        history.append((pair[0], pair[1]))
    return tuple(history)
