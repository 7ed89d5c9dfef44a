"""How a book uses a name, from the text around its mentions (the lexicon's signals,
``folio.domain.lexicon``): whether it stands where the book puts people or where it puts things
and places, and whether the book speaks of it as "he" or as "she".

General signals only: the slots of people are learned from where the book puts "he", "she",
"him" and its titled names, those of things from where it puts "the" and "the <noun>"; no list
of verbs, prepositions, names or places.

Invariant: every count comes from the text given, so a lexicon of the text read learns nothing
past the reader's position.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

Mention = tuple[int, int, str, bool]  # start, end, form, met mid-sentence

_SEXED = re.compile(r"([.!?])|\b(?:(he|his|himself)|she|herself)\b", re.IGNORECASE)
SEX_REACH = 120  # characters after a mention searched for its pronoun
MIN_SEXED = 2  # pronouns a form's lean starts from, half each way
MIN_SLOTS = 20  # pronouns and articles a text needs for its people to be told from places
BEFORE_REACH = 24  # characters before a mention searched for the word before it
# the word or mark after a mention (a possessive counts as a word)
_AFTER = re.compile(r"\s*([’']s\b|[A-Za-z]+|[^\w\s])")
_PRONOUN = re.compile(r"\b(?:[Hh]e|[Ss]he|him)\b")  # the slots of people
_ARTICLE = re.compile(r"\b[Tt]he\b")  # the slots of things and places
_POSSESSIVE = frozenset({"’s", "'s"})
_NOUN = re.compile(r"\b[Tt]he [a-z]+\b")


def person_scores(
    text: str, mentions: Sequence[Mention], titles: set[str]
) -> tuple[dict[int, float], set[str]]:
    """How much each mention (by offset) stands where the book puts people rather than things
    (log odds of its neighbouring words), and the titles of people. The word before a
    possessive ("at Mrs. Goddard's") is the slot of what is possessed: it is not counted."""
    slots = {o: _slot(text, o, e) for o, e, _, _ in mentions}
    pronoun = Counter(_before(text, m.start()) for m in _PRONOUN.finditer(text))
    article = Counter(_before(text, m.start()) for m in _ARTICLE.finditer(text))
    noun = Counter(_after(text, m.end()) for m in _NOUN.finditer(text))
    article["the"] += noun.total()  # and "the" itself stands before things
    if min(pronoun.total(), article.total()) < MIN_SLOTS:  # too little text to tell
        return {}, set()
    titled: dict[str, list[int]] = defaultdict(list)
    for o, _, form, _ in mentions:
        if " " in form and form.split()[0] in titles:
            titled[form.split()[0]].append(o)
    by_pronoun = _odds(pronoun, article)
    of_people = {t: os for t, os in titled.items() if sum(by_pronoun(slots[o][0]) for o in os) > 0}
    people = [slots[o] for os in of_people.values() for o in os]
    before = _odds(pronoun + Counter(b for b, _ in people if b), article)
    after = _odds(Counter(a for _, a in people), noun) if people else (lambda _: 0.0)
    scores = {o: (before(b) if b else 0.0) + after(a) for o, (b, a) in slots.items()}
    return scores, set(of_people)


def _slot(text: str, start: int, end: int) -> tuple[str, str]:
    after = _after(text, end)
    return ("" if after in _POSSESSIVE else _before(text, start)), after


def _before(text: str, at: int) -> str:
    chunk = text[max(0, at - BEFORE_REACH) : at].rstrip()
    if not chunk or not chunk[-1].isalpha():
        return chunk[-1] if chunk and not chunk[-1].isalnum() and chunk[-1] != "_" else ""
    start = len(chunk)
    while start and chunk[start - 1].isalpha():
        start -= 1
    return chunk[start:].lower()


def _after(text: str, at: int) -> str:
    m = _AFTER.match(text, at)
    return m.group(1).lower() if m else ""


def _odds(people: Counter[str], things: Counter[str]) -> Callable[[str], float]:
    """The log odds that a word stands by a person rather than a thing; 0 for a word seen by
    neither (one unseen observation of each word, on each side in proportion to its size)."""
    p, t = sum(people.values()) or 1, sum(things.values()) or 1
    v = len(people.keys() | things.keys()) or 1

    def odds(word: str) -> float:
        return math.log((people[word] + 1) / (p + v)) - math.log(
            (things[word] + t / p) / (t + v * t / p)
        )

    return odds


def leans(
    text: str, forms: Mapping[str, list[int]], ends: Mapping[int, int], titles: set[str]
) -> dict[str, float]:
    """How far the text speaks of each form as "he" (towards 1) or "she" (towards -1): of a
    titled form, as of every name with its title ("Miss Bingley" as of all the "Miss")."""
    counts = {f: Counter(_sex(text, ends[o]) for o in offsets) for f, offsets in forms.items()}
    pooled: dict[str, Counter[int]] = defaultdict(Counter)
    for f, c in counts.items():
        pooled[f.split()[0] if f.split()[0] in titles else f] += c
    lean = {k: (c[1] - c[-1]) / (c[1] + c[-1] + MIN_SEXED) for k, c in pooled.items()}
    return {f: lean[f.split()[0] if f.split()[0] in titles else f] for f in forms}


def _sex(text: str, end: int) -> int:
    """1 when the first pronoun after a mention, in its sentence, is "he" ("his"), -1 when it
    is "she", else 0 ("him" and "her" are more often someone else)."""
    m = _SEXED.search(text, end, min(len(text), end + SEX_REACH))
    return 0 if m is None or m.group(1) else (1 if m.group(2) else -1)
