"""The book's own lexicon: the names it uses (people and places), with their aliases, where each is
first met and how often it comes up, learned from the text alone.

General signals only, the same for any English prose (no list of names or titles):

- a name is a capitalised word the book writes mid-sentence, hardly ever in lower case, and not a
  stopword ("Elizabeth", "Darcy", "London");
- a title is a capitalised word that stands before several different names ("Mr", "Miss",
  "Lady", "Professor"): it makes a name of its own ("Miss Bingley" is not "Mr Bingley");
- a mention is a run of capitalised words holding a name ("Sir William Lucas", "Miss Bennet"),
  cut at a full stop unless the word before it is one the book abbreviates ("Mr.", not "Bill.");
  its shorter forms ("Sir William", "Lucas", "Miss Eliza", whose "Eliza" begins "Elizabeth")
  are aliases of the most mentioned longer name holding them, and a lone word of a titled name
  ("Darcy") goes to that name; unless the book speaks of the shorter form clearly as "he" (or
  "she") and of that name far less so: then to the holder spoken of most alike ("Bingley" is
  "Mr Bingley", not the more mentioned "Miss Bingley"). A titled form is spoken of as all the
  names with its title are;
- a person is a name the book uses in the slots it uses for people: each mention's neighbouring
  words (the word before it, the one after) are weighed by how often the book puts them around
  "he", "she", "him" and around its names with a title of people (people) against around "the"
  and "the <noun>" (things and places: "at the", "at Netherfield", "the Wild"). A title is one
  of people when its names stand where pronouns stand ("Mr", not "New" of "New Bedford").

Invariant: a ``Lexicon`` only counts and quotes text in the range it is asked about, so a people
list or a name lookup bounded by the reading position learns nothing past it. What it learns
(aliases, who is a person) comes from the text it was built from: a list bounded by the reading
position is built from the text read (``Lexicon.of``), so no alias or kind is learned past it.

A lexicon is built once, when the book is imported, and stored with it (``to_json`` /
``from_json``: one JSON document with a ``version``). ``from_json(lexicon.to_json())`` answers
every question exactly as ``lexicon`` does; a document of another version (one written by an
older way of building) reads as None, so the caller builds it again from the text.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from folio.domain.search import STOPWORDS

# a capitalised word, after an abbreviation ("Mr.", "Dr.", "St.") if any; a run may wrap a line
_WORD = r"(?:[A-Z][a-z]{0,3}\.(?:[ \t]+|[ \t]*\n[ \t]*))?[A-Z][a-z]+"
RUN = re.compile(rf"{_WORD}(?:(?:[ \t]+|[ \t]*\n[ \t]*){_WORD})*")
_LOWER = re.compile(r"\b[a-z]{3,}\b")
_MID_SENTENCE = re.compile(r"[a-z,;] $")
_STOPPED = re.compile(r"\b([A-Z][a-z]{0,3})\.[ \t]*\n?[ \t]*([A-Z])")
_SHORT = re.compile(r"\b[A-Z][a-z]{0,3}\b")
_SEXED = re.compile(r"([.!?])|\b(?:(he|his|himself)|she|herself)\b", re.IGNORECASE)
SEX_REACH = 120  # characters after a mention searched for its pronoun
MIN_SEXED = 2  # pronouns a form's lean starts from, half each way
MIN_LEAN = 0.3  # a form's lean this far from 0 says "he" or "she"
MAX_APART = 0.5  # leans further apart than this keep a form from the most mentioned holder
MIN_MENTIONS = 2
MIN_TITLED = 2  # distinct names a title stands before
PREFIX_LETTERS = 4  # "Eliza" is a form of "Elizabeth"
MIN_DROPPED = 3  # letters a short form drops: more than an ending ("Bennets", "European")
MIN_SLOTS = 20  # pronouns and articles a text needs for its people to be told from places
# the word or mark before a mention, the one after (a possessive counts as a word)
_BEFORE = re.compile(r"((?<![A-Za-z])[A-Za-z]+|[^\w\s])\s*$")
_AFTER = re.compile(r"\s*([’']s\b|[A-Za-z]+|[^\w\s])")
_PRONOUN = re.compile(r"\b(?:[Hh]e|[Ss]he|him)\b")  # the slots of people
_ARTICLE = re.compile(r"\b[Tt]he\b")  # the slots of things and places
_POSSESSIVE = frozenset({"’s", "'s"})
_NOUN = re.compile(r"\b[Tt]he [a-z]+\b")
# Raise it whenever what ``Lexicon.of`` builds changes: stored lexicons of another version are
# built again from their book's text on first use.
LEXICON_VERSION = 2


@dataclass(frozen=True, slots=True)
class Name:
    """One person or place: what the book calls it most, its other forms, every mention."""

    name: str
    aliases: frozenset[str]
    offsets: tuple[int, ...] = field(repr=False)
    person: bool = True  # a place or a thing when False

    def mentions(self, start: int, end: int) -> int:
        return bisect_left(self.offsets, end) - bisect_left(self.offsets, start)

    def first(self, start: int, end: int) -> int | None:
        i = bisect_left(self.offsets, start)
        return self.offsets[i] if i < len(self.offsets) and self.offsets[i] < end else None


class Lexicon:
    """The names of one text (see the module docstring)."""

    def __init__(self, names: Sequence[Name], titles: frozenset[str] = frozenset()) -> None:
        self.names = tuple(names)
        self.titles = titles
        self._by_form = {a: n for n in self.names for a in n.aliases}
        self._by_word: dict[str, Name] = {}
        for n in sorted(self.names, key=lambda n: len(n.offsets)):  # the most mentioned wins
            for word in {w for a in n.aliases for w in a.split() if w not in titles}:
                self._by_word[word] = n

    @classmethod
    def of(cls, text: str) -> Lexicon:
        return cls(*_build(text))

    def to_json(self) -> str:
        """The stored form: names in their order (it breaks ties between them), each with its
        aliases (sorted) and mention offsets, and the titles."""
        return json.dumps(
            {
                "version": LEXICON_VERSION,
                "titles": sorted(self.titles),
                "names": [
                    {
                        "name": n.name,
                        "aliases": sorted(n.aliases),
                        "offsets": list(n.offsets),
                        "person": n.person,
                    }
                    for n in self.names
                ],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Lexicon | None:
        """The lexicon ``to_json`` wrote; None for a document of another version."""
        data = json.loads(text)
        if not isinstance(data, Mapping) or data.get("version") != LEXICON_VERSION:
            return None
        names = [
            Name(n["name"], frozenset(n["aliases"]), tuple(n["offsets"]), bool(n["person"]))
            for n in data["names"]
        ]
        return cls(names, frozenset(data["titles"]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lexicon):
            return NotImplemented
        return (self.names, self.titles) == (other.names, other.titles)

    def find(self, form: str) -> Name | None:
        """The name ``form`` stands for: the name with that form ("Mr. Darcy", "Charlotte
        Lucas"), else the most mentioned name using its last known word ("Professor Waldman")."""
        key = normal_form(form)
        if key in self._by_form:
            return self._by_form[key]
        return next((self._by_word[w] for w in reversed(key.split()) if w in self._by_word), None)

    def people(self, start: int, end: int, limit: int) -> list[tuple[Name, int, int]]:
        """``(name, mentions, first offset)`` of the people met in ``[start, end)``, most
        mentioned first (no places)."""
        met = [(n, n.mentions(start, end), n.first(start, end)) for n in self.names if n.person]
        found = [(n, c, f) for n, c, f in met if f is not None and c >= MIN_MENTIONS]
        return sorted(found, key=lambda t: (-t[1], t[2]))[:limit]

    def mentioned(self, text: str) -> list[Name]:
        """The names ``text`` mentions, in order (each once)."""
        found = (self.find(run) for run in runs(text))
        return list(dict.fromkeys(n for n in found if n is not None))


def normal_form(text: str) -> str:
    """ "Mr. Darcy's" -> "Mr Darcy": no full stops, no possessive, single spaces."""
    words = [w.rstrip(".").removesuffix("'s").removesuffix("’s") for w in text.split()]
    return " ".join(w for w in words if w)


def runs(text: str) -> Iterable[str]:
    """Capitalised runs of ``text`` with leading stopwords dropped ("The Bennets" -> "Bennets")."""
    for m in RUN.finditer(text):
        words = normal_form(m.group()).split()
        while words and words[0].lower() in STOPWORDS:
            words.pop(0)
        if words:
            yield " ".join(words)


def _build(text: str) -> tuple[list[Name], frozenset[str]]:
    mentions = _mentions(text)
    lower = Counter(_LOWER.findall(text))
    words = Counter(w for _, _, form, mid in mentions if mid for w in form.split())
    capitalised = Counter(w for _, _, form, _ in mentions for w in form.split())
    named = {
        w
        for w, n in words.items()
        if n >= MIN_MENTIONS
        and w.lower() not in STOPWORDS
        and lower[w.lower()] * 4 < capitalised[w]
    }
    titles = _titles(mentions, named)
    named -= titles
    forms: dict[str, list[int]] = defaultdict(list)
    for offset, _, form, _ in mentions:
        kept = _trim(form.split(), named, titles)
        if kept:
            forms[" ".join(kept)].append(offset)
    scores, of_people = _person_scores(text, mentions, titles)
    ends = {o: e for o, e, _, _ in mentions}
    names = [
        _kind(n, scores, of_people)
        for n in _group(forms, titles, _leans(text, forms, ends, titles))
    ]
    return names, frozenset(titles)


Mention = tuple[int, int, str, bool]


def _mentions(text: str) -> list[Mention]:
    """``(start, end, form, mid-sentence)`` of every capitalised run, cut where a full stop
    ends a sentence ("said Bill. Henry rose": "Bill", "Henry"; but "Mr. Henry")."""
    abbreviations = _abbreviations(text)
    out = []
    for m in RUN.finditer(text):
        start = m.start()
        for stop in _STOPPED.finditer(text, start, m.end()):
            if stop.group(1) not in abbreviations:
                out.append(_mention(text, start, stop.end(1)))
                start = stop.start(2)
        out.append(_mention(text, start, m.end()))
    return out


def _mention(text: str, start: int, end: int) -> Mention:
    mid = bool(_MID_SENTENCE.search(text[max(0, start - 2) : start]))
    return start, end, normal_form(text[start:end]), mid


def _abbreviations(text: str) -> set[str]:
    """The short capitalised words the text writes with a full stop before another capitalised
    word more often than otherwise ("Mr.", "St."); after any other, a full stop ends a sentence."""
    stopped = Counter(m.group(1) for m in _STOPPED.finditer(text))
    every = Counter(_SHORT.findall(text))
    return {w for w, n in stopped.items() if 2 * n > every[w]}


def _person_scores(
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
    m = _BEFORE.search(text, max(0, at - 24), at)
    return m.group(1).lower() if m else ""


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


def _kind(name: Name, scores: Mapping[int, float], of_people: set[str]) -> Name:
    """A name is a person when one of its forms has a title of people, or when its mentions
    stand, on the whole, where people stand."""
    titled = any(a.split()[0] in of_people for a in name.aliases if " " in a)
    person = titled or sum(scores.get(o, 0.0) for o in name.offsets) >= 0
    return Name(name.name, name.aliases, name.offsets, person)


def _titles(mentions: Sequence[Mention], named: set[str]) -> set[str]:
    """Words that stand before several different names, more often than without one."""
    before: dict[str, set[str]] = defaultdict(set)
    titled: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    for _, _, form, _ in mentions:
        parts = form.split()
        for a, b in pairwise(parts):
            if b in named:
                before[a].add(b)
                titled[a] += 1
        if len(parts) == 1:
            alone[parts[0]] += 1
    return {t for t, after in before.items() if len(after) >= MIN_TITLED and alone[t] < titled[t]}


def _trim(parts: list[str], named: set[str], titles: set[str]) -> list[str]:
    """The name in a run: from its first title or name word to its last name word."""
    while parts and parts[0] not in named and parts[0] not in titles:
        parts = parts[1:]
    while parts and parts[-1] not in named:
        parts = parts[:-1]
    return parts if any(p in named for p in parts) else []


def _group(forms: dict[str, list[int]], titles: set[str], sexes: Mapping[str, float]) -> list[Name]:
    """Each form joins the most mentioned longer form that holds it (a lone word: one that
    holds it or a longer word it begins) and that the text does not speak of as of the other
    sex ("Bingley", spoken of as "he", is "Mr Bingley", not "Miss Bingley"); what no longer
    form holds is a name of its own."""
    by_word: dict[str, list[str]] = defaultdict(list)
    for form in sorted(forms, key=lambda f: (-len(forms[f]), f)):
        for word in dict.fromkeys(form.split()):
            by_word[word].append(form)
    lone = [f for f in by_word if f in forms]
    heads: dict[str, str] = {}
    for form in sorted(forms, key=lambda f: (-len(f.split()), -len(f), -len(forms[f]), f)):
        first = form.split()[0]
        candidates = by_word[first] if " " in form else [*by_word[first], *lone]
        holders = [h for h in candidates if h in heads and _holds(h, form, titles)]
        heads[form] = heads[_likeliest(holders, sexes, form)] if holders else form
    members: dict[str, list[str]] = defaultdict(list)
    for form, head in heads.items():
        members[head].append(form)
    names = []
    for group in members.values():
        offsets = sorted(o for f in group for o in forms[f])
        best = max(group, key=lambda f: (len(forms[f]) * len(f.split()), -len(f)))
        names.append(Name(best, frozenset(group), tuple(offsets)))
    return names


def _leans(
    text: str, forms: Mapping[str, list[int]], ends: Mapping[int, int], titles: set[str]
) -> dict[str, float]:
    """How far the text speaks of each form as "he" (towards 1) or "she" (towards -1): of a
    titled form, as of every name with its title ("Miss Bingley" as of all the "Miss")."""
    counts = {f: Counter(_sex(text, ends[o]) for o in offsets) for f, offsets in forms.items()}
    pooled: dict[str, Counter[int]] = defaultdict(Counter)
    for f, c in counts.items():
        pooled[f.split()[0] if f.split()[0] in titles else f] += c
    leans = {k: (c[1] - c[-1]) / (c[1] + c[-1] + MIN_SEXED) for k, c in pooled.items()}
    return {f: leans[f.split()[0] if f.split()[0] in titles else f] for f in forms}


def _sex(text: str, end: int) -> int:
    """1 when the first pronoun after a mention, in its sentence, is "he" ("his"), -1 when it
    is "she", else 0 ("him" and "her" are more often someone else)."""
    m = _SEXED.search(text, end, min(len(text), end + SEX_REACH))
    return 0 if m is None or m.group(1) else (1 if m.group(2) else -1)


def _likeliest(holders: Sequence[str], leans: Mapping[str, float], form: str) -> str:
    """The most mentioned of the forms holding ``form``, unless the text speaks of ``form``
    clearly as "he" or "she" and of that one far apart (``_leans``): then the one spoken of
    most alike."""
    if abs(leans[form]) < MIN_LEAN or abs(leans[holders[0]] - leans[form]) <= MAX_APART:
        return holders[0]
    return min(holders, key=lambda h: abs(leans[h] - leans[form]))


def _holds(longer: str, form: str, titles: set[str]) -> bool:
    """``longer`` (more words, or as many and more letters) holds ``form`` word for word, a
    word of ``form`` being the same word or the start of one ("Miss Eliza Bennet" in "Miss
    Elizabeth Bennet"); a titled form only in a form with the same title ("Miss Bingley" is
    not "Mr Bingley")."""
    outer, inner = longer.split(), form.split()
    if (len(outer), len(longer)) <= (len(inner), len(form)):
        return False
    if inner[0] in titles and outer[0] != inner[0]:
        return False
    return any(
        all(a == b or _begins(b, a) for a, b in zip(inner, outer[i : i + len(inner)], strict=True))
        for i in range(len(outer) - len(inner) + 1)
    )


def _begins(longer: str, form: str) -> bool:
    """``form`` is a short form of ``longer`` ("Eliza", "Elizabeth"), not the same word with an
    ending ("Bennet", "Bennets"; "Europe", "European")."""
    short = len(form) >= PREFIX_LETTERS and len(longer) >= len(form) + MIN_DROPPED
    return short and longer.startswith(form)
