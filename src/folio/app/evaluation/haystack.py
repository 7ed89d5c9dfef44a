"""Whole-book evaluation: the dev conversations' excerpts hidden in a long novel.

The dev set's "book" is a short anthology of excerpts, one per conversation, so a search among
its few passages is easy. A reader's book is a whole novel. ``build_haystack`` splices each excerpt
into a long novel at a random paragraph boundary (seeded: the same seed gives the same book) and
shifts every evidence span with it, so the same conversations are scored at whole-book scale.

Invariant: for every evidence span, ``haystack.text[new_start:new_end]`` equals
``anthology[start:end]``; the novel's own text is kept whole, in order, and only broken at
paragraph boundaries inside its body (never inside a Project Gutenberg header or licence).
"""

from __future__ import annotations

import bisect
import random
import re
from dataclasses import dataclass, replace

from folio.app.evaluation.conversations import EvalConversation

_HEADING = re.compile(r"^[ \t]*chapter\s+[\w.]+.*$", re.IGNORECASE | re.MULTILINE)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_START = re.compile(r"^\*{3}\s*START OF .*$", re.MULTILINE | re.IGNORECASE)
_END = re.compile(r"^\*{3}\s*END OF .*$", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Haystack:
    text: str
    conversations: list[EvalConversation]
    insertions: int


def excerpt_spans(anthology: str) -> list[tuple[int, int]]:
    """The anthology's excerpts: the text from each chapter heading to the next (the whole text
    when it has none)."""
    starts = [m.start() for m in _HEADING.finditer(anthology)] or [0]
    if starts[0] > 0 and anthology[: starts[0]].strip():
        starts.insert(0, 0)
    return list(zip(starts, [*starts[1:], len(anthology)], strict=True))


def _body(novel: str) -> tuple[int, int]:
    start, end = 0, len(novel)
    if m := _START.search(novel):
        start = m.end()
    if m := _END.search(novel, start):
        end = m.start()
    return start, end


def build_haystack(
    anthology: str, conversations: list[EvalConversation], novel: str, *, seed: int = 0
) -> Haystack:
    """The novel with every excerpt that a conversation uses spliced in (see the module
    docstring); the conversations with their evidence shifted and their book renamed later."""
    spans = excerpt_spans(anthology)
    starts = [s for s, _ in spans]

    def excerpt_of(offset: int) -> int:
        return max(0, bisect.bisect_right(starts, offset) - 1)

    used = sorted({excerpt_of(s) for c in conversations for t in c.turns for s, _ in t.evidence})
    body_start, body_end = _body(novel)
    boundaries = [
        m.end() for m in _PARAGRAPH.finditer(novel, body_start, body_end) if m.end() < body_end
    ]
    if len(boundaries) < len(used):
        boundaries = [body_end] * len(used)
    rng = random.Random(seed)
    points = sorted(rng.sample(boundaries, len(used))) if used else []
    order = list(used)
    rng.shuffle(order)  # which excerpt goes where: not in the anthology's order
    pieces: list[str] = []
    new_start: dict[int, int] = {}
    cursor = 0
    length = 0
    for point, index in zip(points, order, strict=True):
        pieces.append(novel[cursor:point])
        length += point - cursor
        start, end = spans[index]
        excerpt = "\n\n" + anthology[start:end] + "\n\n"
        new_start[index] = length + 2
        pieces.append(excerpt)
        length += len(excerpt)
        cursor = point
    pieces.append(novel[cursor:])
    text = "".join(pieces)

    def shifted(span: tuple[int, int]) -> tuple[int, int]:
        index = excerpt_of(span[0])
        delta = new_start[index] - spans[index][0]
        return span[0] + delta, span[1] + delta

    moved = [
        replace(
            c,
            turns=tuple(
                replace(t, evidence=tuple(shifted(e) for e in t.evidence)) for t in c.turns
            ),
        )
        for c in conversations
    ]
    return Haystack(text, moved, len(used))
