"""The book's own lexicon: the names it uses (people and places), with their aliases, where each is
first met and how often it comes up, learned from the text alone.

General signals only, the same for any English prose (no list of names or titles):

- a name is a capitalised word the book writes mid-sentence, hardly ever in lower case, and not a
  stopword ("Elizabeth", "Darcy", "London");
- a title is a capitalised word that stands before several different names ("Mr", "Miss",
  "Lady", "Professor") more often than it ends one ("Sir John": "John" is no title), and
  mid-sentence too ("to Mr Darcy"; a play's "Enter Macbeth." or "Poor Elinor!" only opens
  sentences): it makes a name of its own ("Miss Bingley" is not "Mr Bingley");
- a mention is a run of capitalised words holding a name ("Sir William Lucas", "Miss Bennet"),
  cut at a full stop unless the word before it is one the book abbreviates ("Mr.", not "Bill.");
  its shorter forms ("Sir William", "Lucas", "Miss Eliza", whose "Eliza" begins "Elizabeth")
  are aliases of the most mentioned longer name holding them, and a lone word of a titled name
  ("Darcy") goes to that name; unless the book speaks of the shorter form clearly as "he" (or
  "she") and of that name far less so: then to the holder spoken of most alike ("Bingley" is
  "Mr Bingley", not the more mentioned "Miss Bingley"), and never to one spoken of clearly as
  of the other sex. A titled form is spoken of as all the names with its title are. A lone word
  whose titled holders the text hardly uses goes to the full name that introduced it
  ("Clerval" is "Henry Clerval", not the twice-said "M. Clerval");
- a person is a name the book uses in the slots it uses for people: each mention's neighbouring
  words (the word before it, the one after) are weighed by how often the book puts them around
  "he", "she", "him" and around its names with a title of people (people) against around "the"
  and "the <noun>" (things and places: "at the", "at Netherfield", "the Wild"). A title is one
  of people when its names stand where pronouns stand ("Mr", not "New" of "New Bedford").

Invariant: a ``Lexicon`` only counts and quotes text in the range it is asked about, so a people
list or a name lookup bounded by the reading position learns nothing past it. What it learns
(aliases, who is a person) comes from the text it was built from: a list or a lookup bounded by
the reading window is built from the text the window shows (``Lexicon.of_pieces`` of its spans),
so no alias or kind is learned past it ("Henry", met early, is not "Henry Clerval" because the
book says so later).

A lexicon is built once, when the book is imported, and stored with it (``to_json`` /
``from_json``: one JSON document with a ``version``). ``from_json(lexicon.to_json())`` answers
every question exactly as ``lexicon`` does; a document of another version (one written by an
older way of building) reads as None, so the caller builds it again from the text.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from folio.domain.name_usage import Mention, leans, person_scores
from folio.domain.search import STOPWORDS
from folio.domain.sentences import speakers

# a capitalised word, after an abbreviation ("Mr.", "Dr.", "St.") if any; a run may wrap a line.
# A name may have capitals inside: "MacIan", "McDonald", "O'Brien", "D'Artagnan" (one word each:
# "Who is Evan MacIan?" looked up "Ian", met by no one)
NAME_WORD = r"(?:[A-Z]['’])?[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:-[A-Za-z][a-z]+)*"
_WORD = rf"(?:[A-Z][a-z]{{0,3}}\.(?:[ \t]+|[ \t]*\n[ \t]*))?{NAME_WORD}"
# a capitalised word mid-sentence: after a word, a comma, or a short word's full stop ("Mrs.
# Jennings"), not opening a sentence
MID_NAME = re.compile(
    rf"(?:(?<=[A-Za-z,;] )|(?<=\b[A-Z][a-z]\. )|(?<=\b[A-Z][a-z]{{2}}\. )){NAME_WORD}\b"
)
RUN = re.compile(rf"{_WORD}(?:(?:[ \t]+|[ \t]*\n[ \t]*){_WORD})*")
_LOWER = re.compile(r"\b[a-z]{3,}\b")
_MID_SENTENCE = re.compile(r"[a-z,;] $")
_STOPPED = re.compile(r"\b([A-Z][a-z]{0,3})\.[ \t]*\n?[ \t]*([A-Z])")
_SHORT = re.compile(r"\b[A-Z][a-z]{0,3}\b")
_TOKEN = re.compile(r"\S+")
_PLURAL = re.compile(r"(?<=[^sS])s['’]?$")
MIN_SINGULAR = 3  # letters of a name without its plural ending
MIN_LEAN = 0.3  # a form's lean this far from 0 says "he" or "she"
MAX_APART = 0.5  # leans further apart than this keep a form from the most mentioned holder
MIN_MENTIONS = 2
BOUND_SHARE = 0.8  # of a lower-case word's capitalised mid-sentence uses, before one name
MIN_TITLED = 2  # distinct names a title stands before
# share of the runs a title opens that stand mid-sentence ("to Mr Darcy"): a word that opens
# only sentences before names is no title ("Enter Macbeth and Banquo.", a play's stage direction)
MIN_MID_TITLED = 0.1
MIN_OPENING = 10  # runs a word must open for that share to tell (the titles of novels: 0.7)
PREFIX_LETTERS = 4  # "Eliza" is a form of "Elizabeth"
MIN_DROPPED = 3  # letters a short form drops: more than an ending ("Bennets", "European")
MAX_INTRODUCING = 3  # uses of a full name ("Dr Orion Hood") that introduce a shorter one
# Raise it whenever what ``Lexicon.of`` builds changes: stored lexicons of another version are
# built again from their book's text on first use.
LEXICON_VERSION = 15


@dataclass(frozen=True, slots=True)
class Name:
    """One person or place: what the book calls it most, its other forms, every mention."""

    name: str
    aliases: frozenset[str]
    offsets: tuple[int, ...] = field(repr=False)
    person: bool = True  # a place or a thing when False
    # how much its mentions stand where the book puts people (mean log odds per mention, see
    # ``name_usage.person_scores``; at least 0 for a person whose name has no title of people)
    # and how many of them are its speeches in a play (a speech prefix counted for its forms)
    standing: float = 0.0
    speeches: int = 0

    def mentions(self, start: int, end: int) -> int:
        return bisect_left(self.offsets, end) - bisect_left(self.offsets, start)

    def first(self, start: int, end: int) -> int | None:
        i = bisect_left(self.offsets, start)
        return self.offsets[i] if i < len(self.offsets) and self.offsets[i] < end else None

    def within(self, start: int, end: int, limit: int) -> tuple[int, ...]:
        """The first ``limit`` mentions in ``[start, end)``."""
        i = bisect_left(self.offsets, start)
        return self.offsets[i : min(i + limit, bisect_left(self.offsets, end))]


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

    @classmethod
    def of_pieces(cls, pieces: Sequence[tuple[int, str]]) -> Lexicon:
        """The lexicon of the pieces ``(offset, text)`` of a book alone, at the book's offsets:
        what lies between them is blank lines to it, so no name, alias or kind is learned from
        text outside them (a reading window's spans: nothing past the position, no unread
        matter), and no name runs across a gap."""
        parts, at = [], 0
        for offset, text in sorted(pieces):
            parts.append("\n" * max(0, offset - at))
            parts.append(text)
            at = max(at, offset + len(text))
        return cls.of("".join(parts))

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
                        "standing": n.standing,
                        "speeches": n.speeches,
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
            Name(
                n["name"],
                frozenset(n["aliases"]),
                tuple(n["offsets"]),
                bool(n["person"]),
                float(n["standing"]),
                int(n["speeches"]),
            )
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


def name_pattern(*names: str, flags: int = 0) -> re.Pattern[str]:
    """Any of ``names`` as a text may write it, the longest first: its words apart by white space
    and a title's stop or not ("Mrs Pendyce", "Mrs. Pendyce"), as whole words."""
    forms = sorted({n for n in names if n.strip()}, key=len, reverse=True)
    written = [r"\.?\s+".join(re.escape(w) for w in f.split()) for f in forms]
    return re.compile(rf"\b(?:{'|'.join(written)})\b" if written else r"(?!)", flags)


# Where English prose says who someone is: their name then "was"/"is" and a noun's determiner
# ("Stubb was the second mate", "Mr. Frank Churchill was one of the boasts of Highbury", an aside
# between: "Sir Walter Elliot, of Kellynch Hall, ..., was a man who"), their name then a noun
# phrase set off by a comma ("Mrs. Jennings, Lady Middleton's mother,", "Mr. Knightley, a
# sensible man"), or a role said to be theirs ("The third mate was Flask", "Next was Tashtego")
_COPULA = r"\s+(?:was|is)\s+"
_ASIDE = r"(?:,[^.;:!?\"“”\n]{1,60},)?"
# what they are, of two words at least: not "In understanding, Darcy was the superior."
_SAID_OF = r"(?:a|an|the|one|his|her|their)\s+[\w’'-]+,?\s+[\w’'-]"
_SET_OFF = r",\s+(?:a|an|the|[A-Z][\w-]*(?:\s[A-Z][\w-]*)*['’]s)\s"
_STATED = rf"{_ASIDE}{_COPULA}{_SAID_OF}"  # after a name: "was" or "is" and what they are


def describing(*names: str) -> re.Pattern[str]:
    """Where a text may say who one of ``names`` is: the name followed by what they are, or a
    role said to be theirs (the match starts at the name, or at the role). English only; whether
    the sentence is about them (its first name theirs) is the caller's to tell."""
    name = name_pattern(*names).pattern
    return re.compile(
        rf"{name}{_STATED}|{name}{_SET_OFF}"
        rf"|\b(?:[Tt]he\s+(?:[\w-]+\s+){{1,5}}?|Next\s+)(?:was|is)\s+{name}(?!['’]s\b|-)"
    )


def stating(*names: str) -> re.Pattern[str]:
    """Where a text says in so many words what one of ``names`` is: the name, then "was" or "is"
    and what they are ("Captain Ahab is the Captain of this ship"). Of ``describing``'s forms the
    one a speech can be taken at its word in: a name set off by commas there is mostly someone
    spoken to ("Ahab, the boat is ready!")."""
    return re.compile(rf"{name_pattern(*names).pattern}{_STATED}")


def normal_form(text: str) -> str:
    """ "Mr. Darcy's" -> "Mr Darcy": no full stops, no possessive, single spaces."""
    words = [w.rstrip(".").removesuffix("'s").removesuffix("’s") for w in text.split()]
    return " ".join(w for w in words if w)


def singular(name: str) -> str | None:
    """``name`` without the ending a reader puts on a family's name ("the Frankensteins", "the
    Bennets'"), when it has one (none for "Ross")."""
    bare = _PLURAL.sub("", name)
    return bare if bare != name and len(bare.split()[-1]) >= MIN_SINGULAR else None


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
    titles, openers = _titles(mentions, named)
    named -= titles | openers
    kept = titles | _bound(mentions, named | titles, capitalised)
    forms: dict[str, list[int]] = defaultdict(list)
    ends: dict[int, int] = {}
    scored: list[Mention] = []  # a run holding one name is weighed as it is written
    for mention in mentions:
        found = _pieces(text, mention, named, kept)
        for offset, end, form, _ in found:
            forms[form].append(offset)
            ends[offset] = end
        scored += [mention] if len(found) == 1 and found[0][0] == mention[0] else found
    spoken = _speeches(text, forms, ends, named)
    # a word opening sentences before names still says where people stand ("Enter Banquo")
    scores, of_people = person_scores(text, scored, titles | openers)
    grouped = _group(forms, titles, leans(text, forms, ends, titles))
    names = [_kind(n, scores, of_people, spoken) for n in grouped]
    return names, frozenset(titles)


def _speeches(
    text: str, forms: dict[str, list[int]], ends: dict[int, int], named: set[str]
) -> dict[int, str]:
    """A play's speeches are its people's mentions: each speech prefix of a play
    (``sentences.speakers``) counts for the one name it begins ("Macb." for Macbeth, who
    speaks 137 times and is named 60; "Ham." for Hamlet), at the prefix; a prefix that is a
    name written whole is already one of its mentions, and one beginning two names ("Mal.":
    Malcolme, Malice; a name and its possessive written without the apostrophe are one) or
    none counts for no one. Returns the speeches counted: each prefix's offset, with the form
    it counted for."""
    spoken: dict[int, str] = {}
    for offset, tag in speakers(text):
        if tag in forms:
            spoken[offset] = tag
            continue
        full = {w for w in named if w.startswith(tag) and w != tag and w in forms}
        full -= {w for w in full if singular(w) in full}  # "Hamlets Enemy" is Hamlet's
        if len(full) == 1:
            form = full.pop()
            forms[form].append(offset)
            ends[offset] = offset + len(tag)
            spoken[offset] = form
    for offsets in forms.values():
        offsets.sort()
    return spoken


def _pieces(text: str, mention: Mention, named: set[str], titles: set[str]) -> list[Mention]:
    """The names of one capitalised run: the run trimmed (``_trim``), cut before a title that
    follows a name word ("Miss Woodhouse Miss Taylor", a run across a line break, is two
    people). A run holding one name keeps its own start and end."""
    start, end, form, mid = mention
    parts = form.split()
    cuts = [i for i in range(1, len(parts)) if parts[i] in titles and parts[i - 1] in named]
    words = _TOKEN.finditer(text, start, end) if cuts else ()
    spans = [w.span() for w in words if normal_form(w.group())]
    if len(spans) != len(parts) or not cuts:
        kept = _trim(parts, named, titles)
        return [(start, end, " ".join(kept), mid)] if kept else []
    out = []
    for a, b in pairwise([0, *cuts, len(parts)]):
        kept = _trim(parts[a:b], named, titles)
        if kept:
            at = start if a == 0 else spans[a][0]
            out.append((at, spans[b - 1][1], " ".join(kept), mid or a > 0))
    return out


def _mentions(text: str) -> list[Mention]:
    """``(start, end, form, mid-sentence)`` of every capitalised run, cut where a full stop
    ends a sentence ("said Bill. Henry rose": "Bill", "Henry"; but "Mr. Henry")."""
    found = list(RUN.finditer(text))
    abbreviations = _abbreviations([m.group() for m in found])
    out = []
    for m in found:
        start = m.start()
        stops = _STOPPED.finditer(text, start, m.end()) if "." in m.group() else ()
        for stop in stops:
            if stop.group(1) not in abbreviations:
                out.append(_mention(text, start, stop.end(1)))
                start = stop.start(2)
        out.append(_mention(text, start, m.end()))
    return out


def _mention(text: str, start: int, end: int) -> Mention:
    mid = bool(_MID_SENTENCE.search(text[max(0, start - 2) : start]))
    return start, end, normal_form(text[start:end]), mid


def _abbreviations(found: Sequence[str]) -> set[str]:
    """The short capitalised words the runs ``found`` write with a full stop before another
    capitalised word more often than otherwise ("Mr.", "St."); after any other, a full stop
    ends a sentence."""
    stopped = Counter(m.group(1) for run in found if "." in run for m in _STOPPED.finditer(run))
    every = Counter(w for run in found for w in _SHORT.findall(run))
    return {w for w, n in stopped.items() if 2 * n > every[w]}


def _kind(
    name: Name, scores: Mapping[int, float], of_people: set[str], spoken: Mapping[int, str]
) -> Name:
    """A name is a person when one of its forms has a title of people, or when its mentions
    stand, on the whole, where people stand."""
    titled = any(a.split()[0] in of_people for a in name.aliases if " " in a)
    standing = sum(scores.get(o, 0.0) for o in name.offsets) / max(1, len(name.offsets))
    speeches = sum(1 for o in name.offsets if spoken.get(o) in name.aliases)
    person = titled or standing >= 0
    return Name(name.name, name.aliases, name.offsets, person, standing, speeches)


def _titles(mentions: Sequence[Mention], named: set[str]) -> tuple[set[str], set[str]]:
    """Words that stand before several different names, more often than they end a name
    ("Sir John": "John" is a name, not a title, though "John Dashwood" too): the titles, and
    those that only open sentences (``MIN_MID_TITLED``), which are no part of a name."""
    before: dict[str, set[str]] = defaultdict(set)
    titled: Counter[str] = Counter()
    last: Counter[str] = Counter()
    opening: Counter[str] = Counter()  # runs a word opens, and those of them mid-sentence
    inside: Counter[str] = Counter()
    for _, _, form, mid in mentions:
        parts = form.split()
        opening[parts[0]] += 1
        inside[parts[0]] += mid
        for a, b in pairwise(parts):
            if b in named:
                before[a].add(b)
                titled[a] += 1
        last[parts[-1]] += 1
    found = {t for t, after in before.items() if len(after) >= MIN_TITLED and last[t] < titled[t]}
    openers = {
        t for t in found if opening[t] >= MIN_OPENING and inside[t] < MIN_MID_TITLED * opening[t]
    }
    return found - openers, openers


def _bound(mentions: Sequence[Mention], named: set[str], written: Counter[str]) -> set[str]:
    """Words no name alone (the text writes them in lower case too: "white", "grey", "three")
    that, capitalised mid-sentence, open the same name nearly every time, a name hardly ever
    written without them (``BOUND_SHARE`` of both): words of that name, kept before it as a
    title is ("White Fang", "Grey Beaver", "Three Eagles"; not "Fang", "Beaver", "Eagles").
    Not "Nurse Rooke", also "Mrs Rooke"; nor "Mark Antony", mostly "Antony". ``written``: how
    often each word stands in a capitalised run."""
    opening: Counter[str] = Counter()  # mid-sentence runs each word opens
    pairs: Counter[tuple[str, str]] = Counter()  # of them, before each next word
    before: Counter[tuple[str, str]] = Counter()  # each word before each other, in any run
    for _, _, form, mid in mentions:
        parts = form.split()
        before.update(pairwise(parts))
        if mid:
            opening[parts[0]] += 1
            pairs.update(pairwise(parts[:2]))
    return {
        a
        for (a, b), n in pairs.items()
        if b in named
        and a not in named
        and a.lower() not in STOPWORDS
        and n >= MIN_MENTIONS
        and n >= BOUND_SHARE * opening[a]
        and before[a, b] >= BOUND_SHARE * written[b]
    }


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
        earlier = [h for h in candidates if h in heads]
        holders = [h for h in earlier if _holds(h, form, titles)]
        holders = _introducing(form, holders, forms, heads, titles, sexes) or holders
        holders = holders or _given_names_left_out(form, forms, heads, titles, sexes)
        holder = _likeliest(holders, sexes, form, titles)
        heads[form] = form if holder is None else heads[holder]
    members: dict[str, list[str]] = defaultdict(list)
    for form, head in heads.items():
        members[head].append(form)
    names = []
    for group in members.values():
        offsets = sorted(o for f in group for o in forms[f])
        best = max(group, key=lambda f: (len(forms[f]) * len(f.split()), -len(f)))
        names.append(Name(best, frozenset(group), tuple(offsets)))
    return names


def _introducing(
    form: str,
    holders: Sequence[str],
    forms: Mapping[str, Sequence[int]],
    heads: Mapping[str, str],
    titles: set[str],
    sexes: Mapping[str, float],
) -> list[str]:
    """Of the forms holding a lone ``form`` (a surname) beside titled ones the text hardly uses
    (each at most ``MAX_INTRODUCING`` times), the full name without a title that introduces it:
    written before ``form`` first is and at most ``MAX_INTRODUCING`` times, not spoken of as of
    the other sex than ``form`` (which the text speaks of clearly as "he" or "she"), and one
    person ("Henry Clerval was the son of a merchant of Geneva.", then "Clerval" throughout: not
    the "M. Clerval" a professor calls him twice). Empty when no titled form holds it, when one
    the text keeps using does ("Mr Bennet": "Bennet" is not "Elizabeth Bennet"), or when several
    people's full names fit ("Frederick Tilney" and "James Tilney")."""
    titled = [h for h in holders if h.split()[0] in titles]
    if " " in form or not titled or any(len(forms[h]) > MAX_INTRODUCING for h in titled):
        return []
    fits = [
        h
        for h in holders
        if h.split()[0] not in titles
        and forms[h][0] < forms[form][0]
        and len(forms[h]) <= MAX_INTRODUCING
        and abs(sexes[form]) >= MIN_LEAN
        and sexes[h] * sexes[form] >= 0
    ]
    return fits if len({heads[h] for h in fits}) == 1 else []


def _given_names_left_out(
    form: str,
    forms: Mapping[str, Sequence[int]],
    heads: Mapping[str, str],
    titles: set[str],
    sexes: Mapping[str, float],
) -> list[str]:
    """The longer forms that introduce ``form``: its title and last words with given names
    between them ("Dr Orion Hood" for "Dr Hood"), written before ``form`` first is and at most
    ``MAX_INTRODUCING`` times, and all one name. A full form the text keeps using ("Mr John
    Knightley" beside "Mr Knightley") or first writes later ("Miss Lucy Steele" after "Miss
    Steele", her elder sister) is someone else's; so is one whose given name the text uses on
    its own and does not speak of as of the title's sex (``_other_given``: "Mrs Charles
    Musgrove", the wife of a Charles, is not "Mrs Musgrove"; "Miss Aurora Rome" is "Miss
    Rome"), and so are
    several names that fit ("Miss Bennet": "Miss Jane Bennet" or "Miss Elizabeth Bennet")."""
    inner = form.split()
    if len(inner) < 2 or inner[0] not in titles:
        return []
    tail = inner[1:]
    fits = [
        h
        for h in heads
        if len(outer := h.split()) > len(inner)
        and outer[0] == inner[0]
        and outer[-len(tail) :] == tail
    ]
    introducing = all(
        forms[h][0] < forms[form][0]
        and len(forms[h]) <= MAX_INTRODUCING
        and not any(_other_given(w, form, forms, sexes) for w in h.split()[1 : -len(tail)])
        for h in fits
    )
    return fits if introducing and len({heads[h] for h in fits}) == 1 else []


def _other_given(
    word: str, form: str, forms: Mapping[str, Sequence[int]], sexes: Mapping[str, float]
) -> bool:
    """Is ``word``, a given name inside a titled full form, someone other than ``form``? It is
    used on its own, and not spoken of clearly as of ``form``'s sex: "Charles" ("he") of "Mrs
    Charles Musgrove" is her husband; "Harriet" ("she") of "Miss Harriet Smith" is Miss Smith."""
    if word not in forms:
        return False
    return sexes[word] * sexes[form] <= 0 or abs(sexes[word]) < MIN_LEAN


def _likeliest(
    holders: Sequence[str], leans: Mapping[str, float], form: str, titles: set[str]
) -> str | None:
    """The most mentioned of the forms holding ``form``, unless the text speaks of ``form``
    clearly as "he" or "she" (``leans``, from ``name_usage.leans``) and of that one far apart:
    then the one spoken of most alike. Never one spoken of clearly as of the other sex
    ("Middleton", spoken of as "she", is not "Sir John Middleton"), nor one whose title the
    text leans, however faintly, to the other sex and far apart ("Charles Musgrove", spoken of
    as "he", is not "Mrs Charles Musgrove", his wife: a title's lean is that of all its names)."""
    lean = leans[form]
    if abs(lean) < MIN_LEAN:
        return holders[0] if holders else None

    def other_title(h: str) -> bool:
        first = h.split()[0]
        return first in titles and first != form.split()[0] and abs(leans[h] - lean) > MAX_APART

    alike = [
        h
        for h in holders
        if lean * leans[h] >= 0 or (abs(leans[h]) < MIN_LEAN and not other_title(h))
    ]
    if not alike or abs(leans[alike[0]] - lean) <= MAX_APART:
        return alike[0] if alike else None
    return min(alike, key=lambda h: abs(leans[h] - lean))


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
