"""Text-overlap metrics shared by the evaluations: SQuAD/CANARD normalisation, token F1, EM.

Invariant: scores are in [0, 1] and depend only on the normalised token multiset (lower case, no
punctuation, no articles ``a``/``an``/``the``, single spaces), exactly as the official SQuAD v1.1
script that CANARD and CoQA reuse.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse white space (SQuAD v1.1)."""
    lowered = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def token_f1(prediction: str, reference: str) -> float:
    """Harmonic mean of token precision and recall after normalisation; 1.0 when both are empty."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(reference))


def best_f1(prediction: str, references: Iterable[str]) -> float:
    """Maximum token F1 over the references (0.0 when there are none)."""
    return max((token_f1(prediction, ref) for ref in references), default=0.0)


def best_exact_match(prediction: str, references: Iterable[str]) -> float:
    """Maximum exact match over the references (0.0 when there are none)."""
    return max((exact_match(prediction, ref) for ref in references), default=0.0)
