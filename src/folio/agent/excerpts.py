"""What a model reads of each passage a search found: the sentences that answer, not the chunk.

A search result sent to a model is most of what it reads in a turn. Each passage's text is cut to
the sentences the embedder puts closest to the query, each with its neighbours (a bounded window),
in the book's order, with "…" where text is left out (``Passage.shown``, ``Passage.sent_text``).
The passage keeps its place: chunk id, chapter, pages and offsets are those of the whole chunk, so
a citation names its pages and ``read_passage(chunk_id)`` returns the whole text around it when
the model wants more.

Invariants:
- what is shown of a passage is spans of its own text, in the book's order, apart from each other;
- the search's first ``lead`` passages, and a passage no longer than ``budget``, are shown whole;
- of any other, the sentence closest to the query is always shown (cut at ``budget`` characters
  when it alone is longer), with as many of its neighbours as fit; then the next closest, with
  theirs, while the passage stays within ``budget`` characters;
- the embedder reads at most ``shortlist`` sentences of each passage (those sharing most words with
  the query), each cut at ``EMBEDDED_WORDS`` words, all the passages of a search in one call.

The offline policy reads whole passages (it picks its own sentences): only a model's tools cut
them (``ToolServices.excerpts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from folio.domain.passages import Passage
from folio.domain.ports import Embedder
from folio.domain.search import query_terms
from folio.domain.sentences import sentence_spans

EMBEDDED_WORDS = 40  # of a sentence, enough for its subject and gist

Span = tuple[int, int]


def closeness(embedder: Embedder, query: str, texts: Sequence[str]) -> list[float]:
    """Cosine of ``query`` with each text: one call to the embedder (none without texts)."""
    if not texts:
        return []
    vectors = np.asarray(embedder.embed([query, *texts]), dtype=np.float32)
    return [float(x) for x in vectors[1:] @ vectors[0]]


@dataclass(frozen=True, slots=True)
class _Cut:
    """A passage to cut: its sentences (book offsets) and those the embedder reads."""

    passage: Passage
    sentences: list[Span]
    candidates: list[int]

    def text(self, i: int) -> str:
        start, end = self.sentences[i]
        offset = self.passage.char_start
        return self.passage.text[start - offset : end - offset]


@dataclass(frozen=True, slots=True)
class PassageExcerpts:
    """Cuts the passages of a search to what answers its query (see the module docstring).
    ``neighbours``: sentences shown on each side of one that answers; ``budget``: characters
    shown of a passage, at most; ``shortlist``: sentences of a passage the embedder reads;
    ``lead``: the first passages of a search (its best) are shown whole.

    The defaults are chosen by ``benchmarks/model_evidence.py`` (CoQA anthology, 773 turns, the
    top 5 passages): the text sent holds the evidence of 95.5% of the turns whose whole passages
    hold it, in 78% of their characters; without ``lead``, 84%."""

    embedder: Embedder
    neighbours: int = 1
    budget: int = 700
    shortlist: int = 8
    lead: int = 1

    def trim(self, query: str, passages: Sequence[Passage]) -> tuple[Passage, ...]:
        """``passages``, each with what a model is shown of it; one within the budget, or whose
        text is not the book's own slice, is left whole."""
        terms = set(query_terms(query))
        cuts = [self._cut(p, terms) if i >= self.lead else _Cut(p, [], [])
                for i, p in enumerate(passages)]  # fmt: skip
        texts = [" ".join(c.text(i).split()[:EMBEDDED_WORDS]) for c in cuts for i in c.candidates]
        scores = iter(closeness(self.embedder, query, texts))
        out = []
        for cut in cuts:
            own = {i: next(scores) for i in cut.candidates}
            ranked = sorted(cut.candidates, key=lambda i: (-own[i], i))
            out.append(
                replace(cut.passage, shown=self._shown(cut, ranked)) if ranked else cut.passage
            )
        return tuple(out)

    def _cut(self, passage: Passage, terms: set[str]) -> _Cut:
        if not passage.is_slice or len(passage.text.strip()) <= self.budget:
            return _Cut(passage, [], [])
        offset = passage.char_start
        sentences = [(offset + s, offset + e) for s, e in sentence_spans(passage.text)]
        cut = _Cut(passage, sentences, [])

        def overlap(i: int) -> tuple[int, int, int]:
            around = " ".join(cut.text(j) for j in (i - 1, i + 1) if 0 <= j < len(sentences))
            own = len(terms & set(query_terms(cut.text(i))))
            return (-own, -len(terms & set(query_terms(around))), i)

        shortlist = sorted(range(len(sentences)), key=overlap)[: self.shortlist]
        return _Cut(passage, sentences, shortlist)

    def _shown(self, cut: _Cut, ranked: list[int]) -> tuple[Span, ...]:
        """The best sentence with the neighbours that fit, then each next best with theirs (or
        alone) while the budget lasts, as spans of consecutive sentences in the book's order."""
        sentences = cut.sentences
        kept: set[int] = set()
        for centre in ranked:
            window = range(max(0, centre - self.neighbours),
                           min(len(sentences), centre + self.neighbours + 1))  # fmt: skip
            wanted = kept | set(window)
            while len(wanted) > len(kept) + 1 and _length(sentences, wanted) > self.budget:
                wanted.discard(_farthest(sentences, wanted - kept - {centre}, centre))
            if kept and _length(sentences, wanted) > self.budget:
                continue  # another one may be short enough
            kept = wanted
        spans = _runs(sentences, sorted(kept))
        if len(spans) == 1 and spans[0][1] - spans[0][0] > self.budget:  # one long sentence
            start = spans[0][0]
            head = cut.passage.text[start - cut.passage.char_start :][: self.budget]
            words = head.rsplit(None, 1)
            spans = [(start, start + len(words[0] if len(words) > 1 else head))]
        return tuple(spans)


def _length(sentences: list[Span], kept: set[int]) -> int:
    """Characters of the book that showing ``kept`` shows (the white space within a run too)."""
    return sum(end - start for start, end in _runs(sentences, sorted(kept)))


def _farthest(sentences: list[Span], among: set[int], centre: int) -> int:
    """The sentence of ``among`` to drop first: the farthest from ``centre``, then the longest."""
    return max(among, key=lambda i: (abs(i - centre), sentences[i][1] - sentences[i][0], i))


def _runs(sentences: list[Span], kept: list[int]) -> list[Span]:
    """Consecutive sentences joined into one span (the white space between them with them)."""
    spans: list[Span] = []
    for before, i in zip([None, *kept], kept, strict=False):
        if before is not None and i == before + 1:
            spans[-1] = (spans[-1][0], sentences[i][1])
        else:
            spans.append(sentences[i])
    return spans
