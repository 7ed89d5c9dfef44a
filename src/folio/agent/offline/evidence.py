"""How well the passages a search found cover a question: the ground of an honest answer.

A question names people, places and things ("Who is Justine?", "Why did Victor leave Geneva?").
When no passage up to the reader's position mentions a name the question asks about, the honest
answer is "nothing up to Chapter 5 mentions Justine; it may come later in the book", not the best
unrelated sentence. When the names are there but none of what is asked about them is ("who killed
William?" with passages about William's childhood), the match is weak: say so before quoting.

Invariant: judged from the question's own words and the passages' text only, the same way for any
book (no vocabulary of a book or a data set).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from folio.domain.passages import Passage
from folio.domain.search import STOPWORDS

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_QUESTION_WORDS = frozenset(
    {"who", "whom", "whose", "what", "which", "when", "where", "why", "how", "does", "did", "do",
     "is", "are", "was", "were", "can", "could", "would", "should", "will", "tell", "describe",
     "explain", "summarize", "summarise", "name", "list", "give", "show", "find", "quote"}
)  # fmt: skip
_THROUGH = re.compile(r"^through (?P<where>.+?)(?: \(.*\))?$")


@dataclass(frozen=True, slots=True)
class Coverage:
    """``missing_names``: names the question asks about that no passage mentions;
    ``matched_terms``/``asked_terms``: the question's other content words found in the passages."""

    names: tuple[str, ...]
    missing_names: tuple[str, ...]
    asked_terms: tuple[str, ...]
    matched_terms: tuple[str, ...]

    @property
    def weak(self) -> bool:
        """Names are there, but nothing of what is asked about them."""
        return bool(self.asked_terms) and not self.matched_terms


def question_names(question: str) -> list[str]:
    """Capitalised words of the question that are not question or function words: "Who killed
    William?" -> ["William"]; "What did Elizabeth think of Mr. Darcy?" -> ["Elizabeth", "Darcy"]."""
    names = []
    for token in _TOKEN.findall(question):
        word = token.strip("'’-")
        lower = word.lower()
        if (
            len(word) > 1
            and word[0].isupper()
            and lower not in STOPWORDS
            and lower not in _QUESTION_WORDS
            and lower not in {"mr", "mrs", "miss", "ms", "dr", "sir", "lady", "lord"}
        ):
            names.append(word.removesuffix("'s").removesuffix("’s"))
    return list(dict.fromkeys(names))


def content_terms(question: str, names: Sequence[str]) -> list[str]:
    lowered_names = {n.lower() for n in names}
    return [
        w
        for w in (t.lower().strip("'’-") for t in _TOKEN.findall(question))
        if len(w) > 2
        and w not in STOPWORDS
        and w not in _QUESTION_WORDS
        and w.removesuffix("'s") not in lowered_names
    ]


def _stem(word: str) -> str:
    return word[: max(4, len(word) - 3)] if len(word) > 5 else word


def coverage(question: str, passages: Sequence[Passage]) -> Coverage:
    text = " ".join(p.text for p in passages)
    words = {w.lower() for w in _TOKEN.findall(text)}
    names = question_names(question)
    # Case-insensitive: a capitalised title the book writes in lower case ("Professor Waldman",
    # "the professor") is mentioned.
    missing = tuple(n for n in names if not re.search(rf"\b{re.escape(n)}\b", text, re.I))
    asked = content_terms(question, names)
    matched = tuple(t for t in asked if any(w.startswith(_stem(t)) for w in words))
    return Coverage(tuple(names), missing, tuple(asked), matched)


def read_through(reading_limit: str) -> str:
    """ "up to the end of Chapter 5" / "in the book" from a tool's ``reading_limit``."""
    if not reading_limit or reading_limit == "the whole book":
        return "in the book"
    m = _THROUGH.match(reading_limit)
    where = m.group("where") if m else reading_limit
    return f"up to {where}"


def join_names(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


def honest_note(question: str, passages: Sequence[Passage], reading_limit: str) -> str | None:
    """What a search result should say when its passages do not answer ``question``: a name no
    passage mentions, or none of what is asked (about the names it found, or at all). ``None``
    when the passages cover the question."""
    if not passages:
        return None
    found = coverage(question, passages)
    where = read_through(reading_limit)
    later = "" if where == "in the book" else "; it may come later in the book"
    if found.missing_names:
        return f"Nothing {where} mentions {join_names(found.missing_names)}{later}."
    if found.weak and found.names:
        return (
            f"These passages mention {join_names(found.names)} but nothing {where} clearly "
            f"answers the question{later}."
        )
    if found.weak:  # a question without names ("Who is murdered?"): none of its words found
        return f"Nothing {where} clearly answers the question{later}."
    return None
