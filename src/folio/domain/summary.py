"""Extractive summaries of chapters: the sentences most central to a chapter (LexRank).

A chapter's sentences are compared by the cosine of their vectors (the book's embedder, or TF-IDF
when there is none); each sentence's centrality is its PageRank in that similarity graph (power
iteration). Only sentences fit to stand alone in a summary are ranked (``summary_sentences``):
narration of a sensible length, neither mostly inside quotation marks (dialogue), nor a question,
nor a fragment; a near copy of a sentence ranked higher is dropped. A chapter with no such
sentence (a tale told inside quotation marks, as the creature's in Frankenstein) ranks all its
sentences of a sensible length that end a statement.

A chapter's ``opening`` is its first summary sentence among its first few: where the chapter sets
its scene ("When I had attained the age of seventeen my parents resolved that I should become a
student at the university of Ingolstadt.").

A ``StorySummary`` holds, for each story chapter of a book, its best sentences as offsets into the
book's text, most central first, computed once at import and kept with the book (``to_json`` /
``from_json``: one JSON document with a ``version``; another version reads as None, and the
caller ranks the chapters again from their text).

Invariant: ``rank_chapter(text, start, end, ...)`` reads and returns only sentences inside
``[start, end)``: a chapter read in part is ranked from its read part alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from folio.domain.search import STOPWORDS
from folio.domain.sentences import spoken_spans

# Raise it whenever what ``rank_chapter`` returns changes: summaries of another version are
# ranked again from the text.
SUMMARY_VERSION = 4
# The summary is kept with the book's chapter recaps under an index no chapter has (chapters
# count from 1), so no table is needed for it.
SUMMARY_INDEX = 0
MIN_WORDS, MAX_WORDS = 8, 45
MAX_QUOTED = 0.3  # share of a sentence's characters inside quotation marks, at most
MAX_SENTENCES = 200  # sentences ranked in one chapter (evenly spread over a longer one)
KEEP = 6  # sentences kept per chapter
DAMPING = 0.85
NEAR_COPY = 0.9  # cosine over which a sentence repeats one ranked higher
OPENING_WITHIN = 5  # sentences of a chapter where its opening may be...
OPENING_CHARS = 3000  # ...within its first characters (only they are read)
_WORD = re.compile(r"[a-z][a-z'’]+")
_QUOTES = re.compile(r"[“”\"]|\n[ \t]*\n")
_TRAILING = "”\"’'_)]*"

Span = tuple[int, int]
Matrix = npt.NDArray[np.float32]
Embed = Callable[[Sequence[str]], Matrix]


@dataclass(frozen=True, slots=True)
class Ranked:
    """One sentence of a chapter: its offsets in the book's text and its centrality, scaled so
    that 1.0 is a chapter's average sentence (comparable across chapters)."""

    start: int
    end: int
    weight: float


def quoted_ranges(text: str) -> list[Span]:
    """The parts of ``text`` inside quotation marks (curly, or straight ones taken in pairs); a
    quotation still open at a blank line ends there (a speech running on over paragraphs opens
    again with its own mark)."""
    ranges: list[Span] = []
    opened: int | None = None
    for m in _QUOTES.finditer(text):
        mark = m.group()
        if mark == "“" or (mark == '"' and opened is None):
            opened = m.start() if opened is None else opened
        elif mark in '”"':
            if opened is not None:
                ranges.append((opened, m.end()))
            opened = None
        elif opened is not None:  # a blank line
            ranges.append((opened, m.start()))
            opened = None
    if opened is not None:
        ranges.append((opened, len(text)))
    return ranges


def summary_sentences(
    text: str, start: int, end: int, *, max_quoted: float = MAX_QUOTED
) -> list[Span]:
    """The sentences of ``text[start:end]`` fit for a summary, as offsets into ``text``: of
    ``MIN_WORDS`` to ``MAX_WORDS`` words, starting with a capital and ending with a full stop
    or an exclamation mark (not a question, not words leading into a speech), and at most
    ``max_quoted`` inside quotation marks; a play's by its speeches, with their speakers'
    prefixes, never a stage direction (``sentences.spoken_spans``)."""
    quoted = quoted_ranges(text[start:end])
    out = []
    for s, e in spoken_spans(text, start, end, opening=True):  # a chapter's start
        sentence = text[s:e]
        if not MIN_WORDS <= len(sentence.split()) <= MAX_WORDS:
            continue
        first = next((ch for ch in sentence if ch.isalpha()), "")
        if not first.isupper() or not sentence.rstrip(_TRAILING).endswith((".", "!")):
            continue  # a fragment, a question, or words that lead into a speech ("said,--")
        inside = sum(max(0, min(e - start, b) - max(s - start, a)) for a, b in quoted)
        if inside <= max_quoted * (e - s):
            out.append((s, e))
    return out


def centrality(vectors: Matrix, damping: float = DAMPING) -> npt.NDArray[np.float64]:
    """LexRank: each row's PageRank in the graph of cosine similarities between the rows (unit
    vectors), an edge weighing how much a similarity exceeds the average one (so any model's
    scale serves). Sums to 1."""
    n = len(vectors)
    if n <= 2:
        return np.full(n, 1.0 / n if n else 0.0)
    sim = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    np.fill_diagonal(sim, np.nan)
    weights = np.nan_to_num(np.clip(sim - np.nanmean(sim), 0.0, None))
    totals = weights.sum(axis=1, keepdims=True)
    moves = np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / n)
    rank = np.full(n, 1.0 / n)
    for _ in range(100):
        new = (1.0 - damping) / n + damping * (moves.T @ rank)
        done = float(np.abs(new - rank).sum()) < 1e-9
        rank = new
        if done:
            break
    return np.asarray(rank / rank.sum(), dtype=np.float64)


def tfidf_vectors(texts: Sequence[str]) -> Matrix:
    """Unit TF-IDF vectors of ``texts`` over their own content words (no embedder needed)."""
    words = [[w for w in _WORD.findall(t.lower()) if w not in STOPWORDS] for t in texts]
    vocabulary = {w: i for i, w in enumerate(sorted({w for ws in words for w in ws}))}
    out = np.zeros((len(texts), max(1, len(vocabulary))), dtype=np.float32)
    df = Counter(w for ws in words for w in set(ws))
    for row, ws in enumerate(words):
        for w, n in Counter(ws).items():
            out[row, vocabulary[w]] = n * np.log((1 + len(texts)) / (1 + df[w]))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.asarray(out / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def rank_chapter(
    text: str, start: int, end: int, embed: Embed | None, *, keep: int = KEEP
) -> list[Ranked]:
    """The ``keep`` most central summary sentences of ``text[start:end]`` (most central first,
    near copies of a higher one left out), each with its weight; a chapter told in dialogue
    only ranks its speeches. ``embed``: the embedder's ``embed`` (None: TF-IDF)."""
    spans = summary_sentences(text, start, end) or summary_sentences(
        text, start, end, max_quoted=1.0
    )
    if len(spans) > MAX_SENTENCES:
        step = len(spans) / MAX_SENTENCES
        spans = [spans[int(i * step)] for i in range(MAX_SENTENCES)]
    if not spans:
        return []
    sentences = [" ".join(text[s:e].split()) for s, e in spans]
    vectors = np.asarray(
        embed(sentences) if embed is not None else tfidf_vectors(sentences), dtype=np.float32
    )
    scores = centrality(vectors) * len(spans)
    kept: list[int] = []
    for i in sorted(range(len(spans)), key=lambda i: (-scores[i], i)):
        if all(float(vectors[i] @ vectors[j]) < NEAR_COPY for j in kept):
            kept.append(i)
        if len(kept) == keep:
            break
    return [Ranked(*spans[i], round(float(scores[i]), 4)) for i in kept]


def opening(text: str, start: int, end: int, *, within: int = OPENING_WITHIN) -> Ranked | None:
    """How ``text[start:end]`` opens: its first summary sentence, when it is one of its first
    ``within`` sentences (a chapter opening in dialogue has none), with weight 0."""
    stop = min(end, start + OPENING_CHARS)
    first = spoken_spans(text, start, stop, opening=True)[:within]  # a play's: no direction
    fit = set(summary_sentences(text, start, stop)) if first else set()
    return next((Ranked(s, e, 0.0) for s, e in first if (s, e) in fit), None)


@dataclass(frozen=True, slots=True)
class StorySummary:
    """Each chapter's best sentences (by ``Chapter.index``), most central first; ``model``:
    what compared them (the embedder's name, or ``tfidf``)."""

    chapters: Mapping[int, tuple[Ranked, ...]]
    model: str

    @staticmethod
    def of(
        text: str,
        chapters: Iterable[tuple[int, int, int]],
        embed: Embed | None,
        *,
        model: str,
        on_chapter: Callable[[], None] | None = None,
    ) -> StorySummary:
        """The summary of ``text``'s ``chapters``, each given as ``(index, start, end)``."""
        ranked = {}
        for index, start, end in chapters:
            ranked[index] = tuple(rank_chapter(text, start, end, embed))
            if on_chapter is not None:
                on_chapter()
        return StorySummary(ranked, model)

    def to_json(self) -> str:
        chapters = {
            str(i): [[r.start, r.end, r.weight] for r in rs] for i, rs in self.chapters.items()
        }
        return json.dumps(
            {"version": SUMMARY_VERSION, "model": self.model, "chapters": chapters},
            separators=(",", ":"),
        )

    @staticmethod
    def from_json(text: str | None) -> StorySummary | None:
        """The summary in ``text``; None when there is none, or it is of another version or
        not a summary at all."""
        try:
            data = json.loads(text or "")
            if data.get("version") != SUMMARY_VERSION:
                return None
            chapters = {
                int(i): tuple(Ranked(int(s), int(e), float(w)) for s, e, w in rows)
                for i, rows in data["chapters"].items()
            }
            return StorySummary(chapters, str(data.get("model", "")))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
