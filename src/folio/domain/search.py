"""Search results as the index returns them, before the app adds page labels and snippets; and the
words of a query worth matching (shared by the lexical indexes and the snippet picker)."""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import snowballstemmer

from folio.domain.books import Chunk


@dataclass(frozen=True, slots=True)
class RankedChunk:
    chunk: Chunk  # already cut at the reading position
    score: float  # fused score, higher is better
    lexical_rank: int | None = None  # 1-based rank in the lexical list, None when absent there
    vector_rank: int | None = None
    similarity: float | None = (
        None  # cosine similarity of the query and chunk vectors, when computed
    )


_WORD = re.compile(r"\w+")

# Function words that match nearly every passage: dropped from lexical queries and snippet scoring.
_STOPWORD_TEXT = """
a about after again all also am an and any are as at be because been before being but by can could
did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s ``query_terms`` (Snowball's English stemmer, as the lexical index
    stems with Porter's): "created" shares "creat" with "create"."""
    return frozenset(_stem(w) for w in query_terms(text))


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:  # one per thread: a stemmer keeps its state while it works
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


_STEMMERS = threading.local()


def query_terms(query: str) -> list[str]:
    """The query's words, lowercased, without stopwords, each once, in order. When every word is a
    stopword the words are kept (a query of only "it" still searches for "it")."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    content = [w for w in words if w not in STOPWORDS]
    return content or words


# Text the reader quotes: between straight or curly double quotes, or curly single quotes that do
# not sit inside a word (an apostrophe is not a quote mark).
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|(?<!\w)‘([^‘’]+)’(?!\w)')
MIN_PHRASE_WORDS = 2


def quoted_phrases(text: str) -> list[str]:
    """The phrases ``text`` quotes, two words or more each, in order: what a reader asks about
    when they write 'Where does it say "I had worked hard"?'."""
    found = (next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text))
    return [" ".join(p.split()) for p in found if len(_WORD.findall(p)) >= MIN_PHRASE_WORDS]


def phrase_key(text: str) -> str:
    """``text`` as a run of lowercase words between spaces, so that a phrase is found in a
    passage whatever its case, punctuation, quote marks or line breaks: ``phrase_key(phrase) in
    phrase_key(passage)``."""
    return " " + " ".join(w.lower() for w in _WORD.findall(text)) + " "


T = TypeVar("T")


# Reciprocal rank fusion constant. The common default is 60; on folio's conversational dev set
# (CoQA excerpts, ~200-word passages) 10 ranks the passage a follow-up is about slightly higher in
# every query mode (question alone, with history, the agent's queries) by giving first ranks
# more weight.
RRF_K = 10


def reciprocal_rank_fusion(
    *rankings: Mapping[T, int], k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[T, float]:
    """Fused scores of items ranked (1-based) by several retrievers; absent items add nothing.
    ``weights``: one per ranking (default 1 each). Items come in the order they are first met
    (the first ranking's, then the next's), so a stable sort by score breaks ties the same way in
    every process."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("reciprocal_rank_fusion needs one weight per ranking")
    keys = dict.fromkeys(key for ranking in rankings for key in ranking)
    return {
        key: sum(w / (k + r[key]) for r, w in zip(rankings, weights, strict=True) if key in r)
        for key in keys
    }


SNIPPET_WORDS = 40  # of a search hit's snippet


def best_window(text: str, query: str, *, words: int = SNIPPET_WORDS) -> str:
    """The ``words``-word window of ``text`` holding the most words that match the query (the
    earliest on ties, then shifted so its matches sit in the middle), on one line, with "…" where
    the window cuts the text.

    Works from the few matches, not from every word: the text is split once (in C) and each match
    is placed by counting the words before it, so no per-word objects are built."""
    tokens = text.split()
    if len(tokens) <= words:
        return " ".join(tokens)
    start = window_start(text, query, words=words)
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + words < len(tokens) else ""
    return f"{prefix}{' '.join(tokens[start : start + words])}{suffix}"


def window_start(text: str, query: str, *, words: int, head: bool = False) -> int:
    """Where ``best_window`` starts: the index, in ``text.split()``, of the first of the
    ``words`` words holding the most words that match the query (0 when none does); ``head``:
    0 too when the first ``words`` words hold as many (a quote then starts with its sentence)."""
    total = len(text.split())
    if total <= words:
        return 0
    hits = _matching_words(text, set(query_terms(query)))
    best = _best_start(hits, words, total)
    if head and bisect.bisect_left(hits, words) >= _held(hits, best, words):
        return 0
    return _centred(hits, best, words, total)


def _held(hits: list[int], start: int, words: int) -> int:
    return bisect.bisect_left(hits, start + words) - bisect.bisect_left(hits, start)


def _matching_words(text: str, terms: set[str]) -> list[int]:
    """Indexes (in ``text.split()``) of the words holding a match, ascending, each once."""
    pattern = _terms_pattern(terms)
    if pattern is None:
        return []
    found: list[int] = []
    for m in pattern.finditer(text):
        at = m.start()
        # words before the match; a match inside a word ('"whale') belongs to that word
        index = len(text[:at].split()) - (1 if at and not text[at - 1].isspace() else 0)
        if not found or found[-1] != index:
            found.append(index)
    return found


def _best_start(hits: list[int], words: int, total: int) -> int:
    """The earliest window start holding the most hits. A window's count only rises when its end
    reaches a hit, so the best start is 0 or ``hit - words + 1`` for some hit."""
    last = total - words
    best_start, best_score = 0, -1
    for start in sorted({0, *(min(max(0, h - words + 1), last) for h in hits)}):
        score = bisect.bisect_left(hits, start + words) - bisect.bisect_left(hits, start)
        if score > best_score:
            best_start, best_score = start, score
    return best_start


def _centred(hits: list[int], start: int, words: int, total: int) -> int:
    """Shift a window so that the matches it holds sit in its middle, not at an edge."""
    inside = hits[bisect.bisect_left(hits, start) : bisect.bisect_left(hits, start + words)]
    if not inside:
        return start
    slack = words - 1 - (inside[-1] - inside[0])
    return max(0, min(inside[0] - slack // 2, total - words))


def _terms_pattern(terms: set[str]) -> re.Pattern[str] | None:
    """Words matching a query term, with a crude stemmer: a term of 4+ letters matches any word
    sharing its first ``max(4, len - 2)`` letters ("whales"/"whale", "hunting"/"hunted"); a
    shorter term matches only itself."""
    if not terms:
        return None
    parts = sorted(
        (re.escape(t[: max(4, len(t) - 2)]) + r"\w*" if len(t) >= 4 else re.escape(t) + r"\b")
        for t in terms
    )
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + ")", re.IGNORECASE)
