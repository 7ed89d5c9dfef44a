"""Conversations that change subject, built from conversations that do not.

The dev sets' conversations each stay on one story, so a search that carries the whole
conversation never pays for it there. Readers change subject. Two general constructions replay
the same turns in that other kind of conversation:

- ``chain_conversations`` joins each run of N consecutive conversations of one book into one
  session (on the anthology, N different stories; spliced into a haystack, the same): after each
  join, the earlier questions are about another subject. ``EvalConversation.switches`` records
  where each joined part starts, so the first turns after a switch can be scored apart.
- ``quote_turns`` turns a seeded share of the turns into asking where the book says the exact
  words of their evidence (``Where does it say "..."?``), as a reader quoting a line does.

Invariant: every turn keeps its evidence, and the turns keep their order; only the conversation
around them (and, for a quote, the question's wording) changes. Both are deterministic: the same
input and seed give the same sessions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace

from folio.app.evaluation.conversations import EvalConversation, EvalTurn

QUOTE_TEMPLATE = 'Where does it say "{}"?'
MIN_QUOTE_WORDS = 3  # fewer words do not make a line a reader would quote
MAX_QUOTE_WORDS = 12  # a reader quotes a line, not a paragraph
_QUOTE_MARKS = re.compile(r"[\"“”]")
_WORD = re.compile(r"\w+")
_EDGE = " \t\n,.;:!?-—"


def chain_conversations(
    conversations: Sequence[EvalConversation], n: int
) -> list[EvalConversation]:
    """Each book's conversations, in the order given, joined ``n`` at a time into one session
    (the last session of a book may join fewer). ``n`` of 1 (or less) changes nothing."""
    if n <= 1:
        return list(conversations)
    by_book: dict[str, list[EvalConversation]] = {}
    for conversation in conversations:
        by_book.setdefault(conversation.book, []).append(conversation)
    out: list[EvalConversation] = []
    for items in by_book.values():
        out += [join(items[i : i + n]) for i in range(0, len(items), n)]
    return out


def join(parts: Sequence[EvalConversation]) -> EvalConversation:
    """One session of ``parts`` (all of one book), one after the other."""
    turns: list[EvalTurn] = []
    switches: list[int] = [*parts[0].switches]
    for index, part in enumerate(parts):
        if index:
            switches.append(len(turns))
            switches += [len(turns) + s for s in part.switches]
        turns += part.turns
    return EvalConversation(
        id="+".join(p.id for p in parts),
        book=parts[0].book,
        turns=tuple(turns),
        switches=tuple(switches),
    )


def quote_turns(
    conversations: Sequence[EvalConversation], text: str, share: float, *, seed: int = 0
) -> list[EvalConversation]:
    """The conversations with about ``share`` of their turns asking for the words of their
    evidence in ``text`` (the book file the spans index). A turn is drawn with its own seeded
    chance (seed and conversation id), so the choice does not depend on which other
    conversations are evaluated; a turn whose evidence has too few words stays as it was."""
    if share <= 0:
        return list(conversations)
    out = []
    for conversation in conversations:
        rng = random.Random(f"{seed}:{conversation.id}")
        turns = []
        for turn in conversation.turns:
            drawn = rng.random() < share
            words = quote_of(text, turn.evidence) if drawn else None
            if words is not None:
                turn = replace(turn, question=QUOTE_TEMPLATE.format(words), quoted=True)
            turns.append(turn)
        out.append(replace(conversation, turns=tuple(turns)))
    return out


def quote_of(text: str, evidence: Sequence[tuple[int, int]]) -> str | None:
    """The words of the first evidence span long enough to quote (``MIN_QUOTE_WORDS``), as
    written, up to ``MAX_QUOTE_WORDS``, without a word the span cuts, quotation marks or the
    punctuation at its edges; None when no span is long enough."""
    for start, end in evidence:
        words = _QUOTE_MARKS.sub(" ", text[start:end]).split()
        if _cuts(text, start):
            words = words[1:]
        if _cuts(text, end):
            words = words[:-1]
        if len(_WORD.findall(" ".join(words))) < MIN_QUOTE_WORDS:
            continue
        kept = " ".join(words[:MAX_QUOTE_WORDS]).strip(_EDGE)
        if len(_WORD.findall(kept)) >= MIN_QUOTE_WORDS:
            return kept
    return None


def _cuts(text: str, offset: int) -> bool:
    """Does ``offset`` fall inside a word of ``text``?"""
    return 0 < offset < len(text) and text[offset - 1].isalnum() and text[offset].isalnum()
