"""Passages in the order of the sentences that answer: the offline policy's second ranking stage.

A passage is embedded whole (about 200 words), so a question that one of its sentences answers
("What was her hair like?") competes with everything else the passage says, and the passage that
holds the answer can rank sixth. The offline policy reads sentences anyway (it quotes them), so
``SentenceRanking`` reads a search's ``pool`` best passages at sentence level and fuses, with
reciprocal rank fusion at equal weights:

- the search's own order (the query with the subject's questions: what the turn is about);
- the order of each passage's best sentence by its cosine with the question and the latest few
  questions before it (what the reader asks now: after a change of subject the search still
  carries the old one, the latest questions do not);
- when the conversation goes on with its subject, the passage the turn before answered from first
  (its search's results are recorded in this order) and its neighbours, all at rank 1 (a
  follow-up is mostly answered next to the answer before).

Every sentence of a passage counts (``split_sentences``). Its vector is the one computed at
import and kept with its passage (``BookRepository.sentence_vectors``, made by
``folio.app.ingest``): a turn embeds only what asks and the sentences of a passage that has none
kept (a book whose import has not reached them, text read by page range) or whose kept ones
may not be its own: a passage cut at the reader's position is embedded as the reader sees it
(the sentences split from a cut text need not be the whole chunk's first ones: a dialogue tag cut
short is not joined to its speech), so nothing unread ranks a passage; at most one passage of a
search is cut.

Measured with ``folio eval retrieval`` (see the README's evaluation section): agent recall@5 on
the CoQA anthology 0.917 -> 0.925, the same turns hidden in a whole novel 0.863 -> 0.879,
sessions of three conversations (``--chain 3``) 0.806 -> 0.841 and 0.778 -> 0.809.

A model's search is not ranked again: it reads the passages and picks what answers itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from folio.domain.books import StoredSentences, book_of_chunk
from folio.domain.passages import Passage
from folio.domain.ports import Embedder, SentenceVectorSource
from folio.domain.search import reciprocal_rank_fusion
from folio.domain.sentences import split_sentences

POOL = 10  # passages a search fetches for the ranking (search_book's most)


@dataclass(frozen=True, slots=True)
class SentenceRanking:
    """See the module docstring. ``stored``: where each passage's sentence vectors were kept at
    import (None: every sentence is embedded at the turn)."""

    embedder: Embedder
    stored: SentenceVectorSource | None = None
    pool: int = POOL

    def rank(
        self,
        asked: str,
        passages: Sequence[Passage],
        *,
        near: Passage | None = None,
    ) -> tuple[Passage, ...]:
        """``passages`` (a search's, best first) in the fused order (see the module docstring):
        ``asked`` is what the sentences answer, ``near`` the passage the turn before answered
        from first (None: a new subject, or no turn before searched). As given when there is
        nothing to rank by (one passage)."""
        if len(passages) < 2:
            return tuple(passages)
        rankings = [{i: i + 1 for i in range(len(passages))}]
        best = self._best_sentences(asked, passages)
        if best is not None:
            by_sentence = sorted(range(len(passages)), key=lambda i: (-best[i], i))
            rankings.append({i: r + 1 for r, i in enumerate(by_sentence)})
        if near is not None:
            rankings.append({i: 1 for i, p in enumerate(passages) if beside(p, near)})
        fused = reciprocal_rank_fusion(*rankings)
        order = sorted(fused, key=lambda i: -fused[i])  # stable: the search's order on ties
        return tuple(passages[i] for i in order)

    def _best_sentences(self, asked: str, passages: Sequence[Passage]) -> list[float] | None:
        """Each passage's best cosine with ``asked`` over its sentences (-1 for a passage without
        any); None when no passage has a sentence."""
        sentences = [split_sentences(p.text) for p in passages]
        if not any(sentences):
            return None
        kept = self._kept(passages)
        dimensions = self.embedder.dimensions
        own = [
            _own(p, len(texts), kept.get(p.chunk_id or ""), dimensions)
            for p, texts in zip(passages, sentences, strict=True)
        ]
        todo = [
            s for texts, mine in zip(sentences, own, strict=True) if mine is None for s in texts
        ]
        computed = np.asarray(self.embedder.embed([asked, *todo]), dtype=np.float32)
        question, fresh = computed[0], computed[1:]
        best: list[float] = []
        for texts, mine in zip(sentences, own, strict=True):
            if mine is None:  # embedded now, in order after what asks
                mine, fresh = fresh[: len(texts)], fresh[len(texts) :]
            best.append(float((mine @ question).max()) if len(mine) else -1.0)
        return best

    def _kept(self, passages: Sequence[Passage]) -> dict[str, StoredSentences]:
        """The sentence vectors kept for ``passages``, by chunk id (one read per book)."""
        if self.stored is None:
            return {}
        by_book: defaultdict[str, list[str]] = defaultdict(list)
        for p in passages:
            if p.chunk_id is not None:
                by_book[book_of_chunk(p.chunk_id)].append(p.chunk_id)
        kept: dict[str, StoredSentences] = {}
        for book_id, ids in by_book.items():
            kept.update(self.stored.sentence_vectors(book_id, ids))
        return kept


def _own(
    passage: Passage, count: int, kept: StoredSentences | None, dimensions: int
) -> np.ndarray | None:
    """The kept vectors of ``passage``'s ``count`` sentences when it is its chunk whole and they
    were kept by this embedder; None otherwise (cut at the reader's position, kept for other
    text or by another embedder): its sentences are embedded at the turn."""
    if kept is None or kept.vectors.shape != (count, dimensions):
        return None
    return kept.vectors if passage.char_end >= kept.chunk_end else None


def beside(passage: Passage, anchor: Passage) -> bool:
    """Is ``passage`` the ``anchor`` or next to it: in the same volume, within half the anchor's
    length of it (the passages before and after it, not the ones beyond)."""
    if passage.book_id != anchor.book_id:
        return False
    reach = (anchor.char_end - anchor.char_start) // 2
    return passage.char_start <= anchor.char_end + reach and anchor.char_start - reach <= (
        passage.char_end
    )
