"""The extractive answer: the sentences of the passages found that the embedder puts closest to the
question, quoted and numbered as their sources.

- a sentence whose subject (its first name) is another person than the one asked about is never
  quoted ("Who is Miss Bingley?" quotes no sentence about Mr Bingley or Mr Darcy);
- no sentence twice, and at most ``MAX_QUOTES``;
- when no sentence comes close enough, the answer says so: "Nothing up to Chapter 5 answers
  this."

Invariant: every quote is a sentence of a passage a tool returned (white space collapsed), and
the n-th quote is the answer's n-th source (the entry points print its number ``[n]`` after it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from folio.domain.lexicon import runs
from folio.domain.passages import Passage, Person
from folio.domain.ports import Embedder
from folio.domain.search import STOPWORDS, query_terms
from folio.domain.sentences import split_sentences

OFFLINE_NOTE = "(Offline mode: these are passages extracted from the book, not a generated answer.)"
MAX_QUOTES = 3
MAX_QUOTE_WORDS = 70
SHORTLIST = 12  # sentences the embedder compares with the question
EMBEDDED_WORDS = 40  # of each, enough for its subject and gist
SUBJECT_WORDS = 3  # "Mr. Lacey was", "Poor Miss Lacey sneered"
_THROUGH = re.compile(r"^through (?P<where>.+?)(?: \(.*\))?$")
_MID_CAPITAL = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+")


@dataclass(frozen=True, slots=True)
class Quote:
    sentence: str
    passage: Passage
    score: float
    cut: bool = False  # only the sentence's first ``MAX_QUOTE_WORDS`` words are quoted


def read_through(reading_limit: str) -> str:
    """ "up to Chapter 5" / "in the book" from a tool's ``reading_limit``."""
    if not reading_limit or reading_limit == "the whole book":
        return "in the book"
    m = _THROUGH.match(reading_limit)
    return f"up to {m.group('where') if m else reading_limit}"


def best_quotes(
    embedder: Embedder,
    question: str,
    passages: Sequence[Passage],
    about: Person | None = None,
) -> list[Quote]:
    """The sentences closest to ``question`` (``about``'s first appearance among them), best
    first, above the embedder's relevance floor, none whose subject is someone else."""
    pool = [*passages, *([about.first] if about else [])]
    named = {w for p in pool for w in _MID_CAPITAL.findall(p.text) if w.lower() not in STOPWORDS}
    candidates: dict[str, Passage] = {}
    seen: set[str] = set()  # a sentence once, even when one copy of it was cut short
    for passage in pool:
        for sentence in split_sentences(passage.text):
            key = " ".join(sentence.lower().split()[:12])
            if key in seen or not _answers(sentence, passage):
                continue
            seen.add(key)
            if not _someone_else(sentence, about, named):
                candidates[sentence] = passage
    if not candidates:
        return []
    texts = _shortlist(question, candidates, pool)
    embedded = [" ".join(t.split()[:EMBEDDED_WORDS]) for t in texts]
    vectors = np.asarray(embedder.embed([question, *embedded]), dtype=np.float32)
    scores = vectors[1:] @ vectors[0]
    ranked = sorted(zip(texts, scores.tolist(), strict=True), key=lambda t: -t[1])
    floor = embedder.relevance_floor
    return [_quote(s, candidates[s], v) for s, v in ranked[:MAX_QUOTES] if v > floor]


def _shortlist(question: str, candidates: dict[str, Passage], pool: Sequence[Passage]) -> list[str]:
    """The ``SHORTLIST`` candidates sharing most words with the question (then from the best
    passages): the embedder reads a few sentences a turn, not every one found."""
    terms = set(query_terms(question))
    rank = {id(p): i for i, p in enumerate(pool)}

    def overlap(sentence: str) -> tuple[int, int]:
        shared = len(terms & set(query_terms(sentence)))
        return (-shared, rank[id(candidates[sentence])])

    return sorted(candidates, key=overlap)[:SHORTLIST]


def compose(quotes: Sequence[Quote], where: str) -> str:
    """The quotes in the order of their sources, with the offline note; or the honest nothing."""
    if not quotes:
        return f"Nothing {where} answers this. Try other words, or a name from the story."
    lines = [f'- "{q.sentence}"{" …" if q.cut else ""} ({q.passage.location})' for q in quotes]
    return f"From the book, {where}:\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE


def _answers(sentence: str, passage: Passage) -> bool:
    """A sentence of prose: more than a word, not a line of the chapter's heading."""
    words = re.findall(r"\w+", sentence.lower())
    heading = re.findall(r"\w+", (passage.chapter or "").lower())
    return len(words) > 2 and " ".join(words) not in " ".join(heading)


def _someone_else(sentence: str, about: Person | None, named: set[str]) -> bool:
    """The sentence opens with a name (a run of capitalised words holding a word the passages
    write capitalised mid-sentence, in its first words: where English puts the subject) that is
    not a form of the person asked about. "My departure for Ingolstadt" has no such subject."""
    if about is None:
        return False
    opening = " ".join(sentence.lstrip("\"“‘'(_-—").split()[:SUBJECT_WORDS])
    subject = next((r for r in runs(opening) if any(w in named for w in r.split())), None)
    if subject is None:
        return False
    forms = [set(f.split()) for f in (about.name, *about.aliases)]
    return not any(set(subject.split()) <= form for form in forms)


def _quote(sentence: str, passage: Passage, score: float) -> Quote:
    words = sentence.split()
    if len(words) <= MAX_QUOTE_WORDS:
        return Quote(sentence, passage, score)
    return Quote(" ".join(words[:MAX_QUOTE_WORDS]), passage, score, cut=True)
