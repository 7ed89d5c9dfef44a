"""``best_window`` (search snippets) against the straightforward per-word scan it replaced."""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from folio.domain.search import _terms_pattern, best_window, query_terms

_TOKEN = re.compile(r"\S+")


class _Token(NamedTuple):
    start: int
    end: int
    matches: bool


def reference_window(text: str, query: str, *, words: int) -> str:
    """The previous implementation: one object per word, every window start scored."""
    pattern = _terms_pattern(set(query_terms(query)))
    hits = [m.start() for m in pattern.finditer(text)] if pattern else []
    tokens = []
    for m in _TOKEN.finditer(text):
        i = bisect.bisect_left(hits, m.start())
        tokens.append(_Token(m.start(), m.end(), i < len(hits) and hits[i] < m.end()))
    if not tokens:
        return ""
    if len(tokens) <= words:
        return " ".join(text[tokens[0].start : tokens[-1].end].split())
    best_start, best_score = 0, -1
    score = sum(t.matches for t in tokens[:words])
    for start in range(len(tokens) - words + 1):
        if start:
            score += tokens[start + words - 1].matches - tokens[start - 1].matches
        if score > best_score:
            best_start, best_score = start, score
    inside = [i for i in range(best_start, best_start + words) if tokens[i].matches]
    if inside:
        slack = words - 1 - (inside[-1] - inside[0])
        best_start = max(0, min(inside[0] - slack // 2, len(tokens) - words))
    window = tokens[best_start : best_start + words]
    snippet = " ".join(text[window[0].start : window[-1].end].split())
    prefix = "…" if best_start > 0 else ""
    suffix = "…" if best_start + words < len(tokens) else ""
    return f"{prefix}{snippet}{suffix}"


VOCABULARY = ["whale", "whales", "Ahab", "sea", "the", "hunted", "hunting", "a", "ship", "Sea."]
WORD = st.builds(
    lambda pre, w, post: pre + w + post,
    st.sampled_from(["", "", "", '"', "(", "'"]),
    st.sampled_from(VOCABULARY),
    st.sampled_from(["", "", ",", ".", '"', ")", "'s", "—whale"]),
)
TEXT = st.lists(st.tuples(WORD, st.sampled_from([" ", " ", "  ", "\n", " \t"])), max_size=120).map(
    lambda parts: "".join(w + sep for w, sep in parts)
)


@settings(max_examples=400, deadline=None)
@given(
    text=TEXT,
    query=st.lists(st.sampled_from([*VOCABULARY, "who", "is", "Moby"]), max_size=4).map(" ".join),
    words=st.integers(min_value=1, max_value=30),
)
def test_best_window_matches_the_per_word_scan(text: str, query: str, words: int) -> None:
    assert best_window(text, query, words=words) == reference_window(text, query, words=words)


def test_the_window_centres_on_the_query_words_and_marks_cuts() -> None:
    text = " ".join(f"w{i}" for i in range(100)) + " the white whale breached " + "x " * 100
    snippet = best_window(text, "white whale", words=10)
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "white whale" in snippet
    assert best_window("no match here at all", "whale", words=3) == "no match here…"
    assert best_window("   ", "whale") == ""
