"""Conversational retrieval evaluation: does folio find the passage a follow-up question is about?

Each conversation is replayed turn by turn. Modes:

- ``agent``: what the chat pipeline actually searched (``ChatWithBook`` with the chosen provider;
  its own earlier answers form the history unless gold history is asked for; the latest search of
  a turn ranked first);
- ``question``: the question alone;
- ``history``: the question with all earlier questions of the conversation appended.

A turn with evidence is scored: a hit at rank r when the r-th retrieved passage overlaps an evidence
span. recall@k is the share of scored turns with a hit within the first k; MRR uses the first hit's
rank. Each mode is also scored by turn depth (``agent turns 1-3``, ``4-9``, ``10+``), so that a
search that degrades as the conversation grows shows. A session that changes subject
(``chains.chain_conversations``) is also scored on the turns after each switch (``agent after
switch 1-3``, ``4+``: the earlier questions are about another subject there), and quote turns
(``chains.quote_turns``) on their own (``agent quotes``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from folio.app.evaluation.conversations import EvalConversation, EvidenceMapper
from folio.domain.books import Book, SearchHit
from folio.domain.ports import BookSearcher

MODES = ("agent", "question", "history")
DEPTHS = ((1, 3), (4, 9), (10, None))


def depth_bucket(turn_number: int) -> str:
    """ "turns 1-3", "turns 4-9", "turns 10+": where a turn lies in its conversation."""
    for low, high in DEPTHS:
        if low <= turn_number and (high is None or turn_number <= high):
            return f"turns {low}-{high}" if high is not None else f"turns {low}+"
    return "turns ?"


def switch_bucket(since_switch: int | None) -> str | None:
    """ "after switch 1-3", "after switch 4+": where a turn lies after its session last changed
    subject (``since_switch`` 1 is the first turn of the new subject); None before any switch."""
    if since_switch is None or since_switch < 1:
        return None
    return "after switch 1-3" if since_switch <= 3 else "after switch 4+"


def turn_buckets(conversation: EvalConversation) -> list[tuple[str, ...]]:
    """The buckets each turn of ``conversation`` is also scored in: its depth, where it lies
    after the last switch of subject, and "quotes" for a quote turn."""
    starts = set(conversation.switches)
    since: int | None = None
    out = []
    for index, turn in enumerate(conversation.turns):
        since = 1 if index in starts else (since + 1 if since is not None else None)
        switch = switch_bucket(since)
        out.append(
            (
                depth_bucket(index + 1),
                *((switch,) if switch else ()),
                *(("quotes",) if turn.quoted else ()),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """What one real chat turn did, as far as the evaluation cares."""

    searches: tuple[str, ...]
    llm_calls: int
    input_tokens: int
    output_tokens: int
    # the passages (their offsets) each search returned the turn, in its order, by query: a
    # policy that orders a search's passages again (the offline one's sentence ranking) is
    # scored on the order it answered from
    found: Mapping[str, Sequence[tuple[int, int]]] = field(default_factory=dict)


class AgentSession(Protocol):
    """One conversation of the real chat pipeline."""

    def ask(self, question: str) -> AgentTurn: ...

    def add_gold_exchange(self, question: str, answer: str) -> None: ...


@dataclass
class ModeScore:
    ks: tuple[int, ...]
    turns: int = 0
    scored: int = 0
    hits_at: dict[int, int] = field(default_factory=dict)
    reciprocal_ranks: float = 0.0
    searches: int = 0
    llm_calls: int = 0
    tokens: int = 0

    def add(
        self,
        rank: int | None,
        *,
        searches: int,
        llm_calls: int = 0,
        tokens: int = 0,
        scored: bool = True,
    ) -> None:
        self.turns += 1
        self.searches += searches
        self.llm_calls += llm_calls
        self.tokens += tokens
        if not scored:
            return
        self.scored += 1
        if rank is not None:
            self.reciprocal_ranks += 1.0 / rank
            for k in self.ks:
                if rank <= k:
                    self.hits_at[k] = self.hits_at.get(k, 0) + 1

    def summary(self) -> dict[str, float | int]:
        scored = max(self.scored, 1)
        turns = max(self.turns, 1)
        out: dict[str, float | int] = {
            f"recall@{k}": round(self.hits_at.get(k, 0) / scored, 4) for k in self.ks
        }
        out["mrr"] = round(self.reciprocal_ranks / scored, 4)
        out["turns"] = self.turns
        out["turns_scored"] = self.scored
        out["searches_per_turn"] = round(self.searches / turns, 3)
        out["llm_calls_per_turn"] = round(self.llm_calls / turns, 3)
        out["tokens_per_turn"] = round(self.tokens / turns, 1)
        return out


def first_hit_rank(hits: Sequence[SearchHit], evidence: Sequence[tuple[int, int]]) -> int | None:
    return first_span_rank([(h.chunk.char_start, h.chunk.char_end) for h in hits], evidence)


def first_span_rank(
    spans: Sequence[tuple[int, int]], evidence: Sequence[tuple[int, int]]
) -> int | None:
    """The 1-based rank of the first of ``spans`` (passages' offsets) overlapping an evidence
    span, None when none does."""
    for rank, (first, last) in enumerate(spans, 1):
        if any(first < end and start < last for start, end in evidence):
            return rank
    return None


def _inside(span: tuple[int, int], other: tuple[int, int]) -> bool:
    """Is ``span`` (a passage cut at the reading position) part of ``other`` (the same passage
    whole) or the reverse: one passage counted once."""
    return (other[0] <= span[0] and span[1] <= other[1]) or (
        span[0] <= other[0] and other[1] <= span[1]
    )


@dataclass
class RetrievalEvaluation:
    """Replays conversations against one book and accumulates a score per mode."""

    book: Book
    searcher: BookSearcher
    mapper: EvidenceMapper
    ks: tuple[int, ...] = (5, 10)
    modes: tuple[str, ...] = MODES
    new_session: Callable[[], AgentSession] | None = None
    gold_history: bool = False
    scores: dict[str, ModeScore] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.scores = {mode: ModeScore(self.ks) for mode in self.modes}
        self._buckets: tuple[str, ...] = ()

    def _add(
        self,
        mode: str,
        rank: int | None,
        *,
        searches: int,
        llm_calls: int = 0,
        tokens: int = 0,
        scored: bool = True,
    ) -> None:
        """Score a turn for ``mode`` and for each of the turn's buckets ("agent turns 4-9")."""
        for key in (mode, *(f"{mode} {bucket}" for bucket in self._buckets)):
            score = self.scores.setdefault(key, ModeScore(self.ks))
            score.add(rank, searches=searches, llm_calls=llm_calls, tokens=tokens, scored=scored)

    def run(
        self, conversation: EvalConversation, *, on_turn: Callable[[], None] | None = None
    ) -> None:
        session = self.new_session() if "agent" in self.modes and self.new_session else None
        earlier: list[str] = []
        for turn, buckets in zip(conversation.turns, turn_buckets(conversation), strict=True):
            self._buckets = buckets
            evidence = [m for s, e in turn.evidence if (m := self.mapper.map(s, e)) is not None]
            scored = bool(evidence)
            if "question" in self.scores:
                self._score_query("question", turn.question, evidence, scored)
            if "history" in self.scores:
                self._score_query("history", " ".join([turn.question, *earlier]), evidence, scored)
            if session is not None:
                self._score_agent(session, (*earlier, turn.question), evidence, scored)
                if self.gold_history:
                    session.add_gold_exchange(
                        turn.question, turn.answers[0] if turn.answers else ""
                    )
            earlier.append(turn.question)
            if on_turn:
                on_turn()

    def _search(self, query: str) -> list[SearchHit]:
        return self.searcher.search(self.book, query, k=max(self.ks))

    def _score_query(
        self, mode: str, query: str, evidence: list[tuple[int, int]], scored: bool
    ) -> None:
        rank = first_hit_rank(self._search(query), evidence) if scored else None
        self._add(mode, rank, searches=1, scored=scored)

    def _score_agent(
        self,
        session: AgentSession,
        questions: tuple[str, ...],
        evidence: list[tuple[int, int]],
        scored: bool,
    ) -> None:
        """The agent's searches, each ranked as the turn got it: the passages its search
        returned, in their order (``AgentTurn.found``), then what the query as written finds
        again at the evaluation's largest k (the turn fetched fewer); the latest search's
        passages first, then what earlier ones add. A later search is the one the turn settled
        on (the offline agent answers a new subject from its second search alone); ranked after
        the first search's k passages, it could never count."""
        turn = session.ask(questions[-1])
        spans: list[tuple[int, int]] = []
        seen: set[tuple[int, int]] = set()
        for query in reversed(turn.searches):
            again = [(h.chunk.char_start, h.chunk.char_end) for h in self._search(query)]
            for span in (*turn.found.get(query, ()), *again):
                if span not in seen and not any(_inside(span, s) for s in seen):
                    seen.add(span)
                    spans.append(span)
        rank = first_span_rank(spans, evidence) if scored else None
        self._add(
            "agent",
            rank,
            searches=len(turn.searches),
            llm_calls=turn.llm_calls,
            tokens=turn.input_tokens + turn.output_tokens,
            scored=scored,
        )

    def report(self) -> dict[str, dict[str, float | int]]:
        return {mode: score.summary() for mode, score in self.scores.items()}
