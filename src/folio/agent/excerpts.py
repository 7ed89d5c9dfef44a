"""What a model reads of each passage a search found: the sentences that answer, not the chunk.

A search result sent to a model is most of what it reads in a turn. Each passage's text is cut to
the sentences that share most of the query's words, each with its neighbours (a bounded window),
in the book's order, with "…" where text is left out (``Passage.shown``, ``Passage.sent_text``).
The passage keeps its place: chunk id, chapter, pages and offsets are those of the whole chunk, so
a citation names its pages and ``read_passage(chunk_id)`` returns the whole text around it when
the model wants more.

Invariants:
- what is shown of a passage is spans of its own text, in the book's order, apart from each other;
- the search's first ``lead`` passages, and a passage no longer than ``budget``, are shown whole;
- of any other, the best sentence is always shown (cut at ``budget`` characters when it alone is
  longer), with as many of its neighbours as fit; then the next best, with theirs, while the
  passage stays within ``budget`` characters;
- sentences are ranked by the query's words they share, then by those their neighbours share,
  then by their place in the passage: no embedder is called. Ranking them with the embedder kept
  the evidence of 0.858 of the turns against 0.851 with ``lead`` 1
  (``benchmarks/model_evidence.py``), and made a model's turn 59/47/26 ms against 12/17/18 at
  turns 1/10/20 (``benchmarks/bench_turn_depth.py``).

The offline policy reads whole passages (it picks its own sentences): only a model's tools cut
them (``ToolServices.excerpts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from folio.domain.passages import Passage
from folio.domain.search import query_terms
from folio.domain.sentences import sentence_spans

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class PassageExcerpts:
    """Cuts the passages of a search to what answers its query (see the module docstring).
    ``neighbours``: sentences shown on each side of one that answers; ``budget``: characters
    shown of a passage, at most; ``lead``: the first passages of a search (its best) are shown
    whole.

    The defaults are chosen by ``benchmarks/model_evidence.py`` (CoQA anthology, 773 turns, the
    top 5 passages): the text sent holds the evidence of 98.9% of the turns whose whole passages
    hold it, in 85% of their characters (3,759 of 4,441); with one passage whole, 94.8% in 80%;
    with none, 84.4%. Over 20 turns a model is sent 79,855 tokens with ``lead`` 2, 77,510 with 1
    (``benchmarks/bench_turn.py``; LlamaIndex's engine at 5 passages: 84,190)."""

    neighbours: int = 1
    budget: int = 700
    lead: int = 2

    def trim(self, query: str, passages: Sequence[Passage]) -> tuple[Passage, ...]:
        """``passages``, each with what a model is shown of it; one within the budget, or whose
        text is not the book's own slice, is left whole."""
        terms = set(query_terms(query))
        return tuple(self._trim(p, terms) if i >= self.lead else p for i, p in enumerate(passages))

    def _trim(self, passage: Passage, terms: set[str]) -> Passage:
        if not passage.is_slice or len(passage.text.strip()) <= self.budget:
            return passage
        offset = passage.char_start
        sentences = [(offset + s, offset + e) for s, e in sentence_spans(passage.text)]
        if not sentences:
            return passage
        texts = [passage.text[s - offset : e - offset] for s, e in sentences]

        def shared(i: int) -> tuple[int, int, int]:
            """The query's words the sentence shares (most first), then those its neighbours
            share, then its place."""
            around = " ".join(texts[j] for j in (i - 1, i + 1) if 0 <= j < len(texts))
            own = len(terms & set(query_terms(texts[i])))
            return (-own, -len(terms & set(query_terms(around))), i)

        ranked = sorted(range(len(sentences)), key=shared)
        return replace(passage, shown=self._shown(passage, sentences, ranked))

    def _shown(
        self, passage: Passage, sentences: list[Span], ranked: list[int]
    ) -> tuple[Span, ...]:
        """The best sentence with the neighbours that fit, then each next best with theirs (or
        alone) while the budget lasts, as spans of consecutive sentences in the book's order."""
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
            head = passage.text[start - passage.char_start :][: self.budget]
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
