"""The extractive answer: the sentences of the passages found that the embedder puts closest to the
question, each read with its neighbours, quoted and numbered as their sources.

- a sentence is ranked by its closeness to the question; the few best are read again in their
  place (the sentence with a bounded window of the sentences before and after it) and ranked by
  both: "Henry Clerval was the son of a merchant of Geneva." answers a question about a friend
  from Geneva because the sentence before it speaks of the closest friendship; the better its
  passage's rank in the search, the more it gains (the search read the conversation);
- a sentence that says little leads with less: a question ("What must have been his feelings?"),
  or one with few words of content (an address, "My dear Victor,"; a dialogue tag; "Poor
  Clerval!") is ranked lower, and must come closer to count at all;
- a question that names a person the reader has met and asks nothing else of them ("Who is
  Charlotte Lucas?") leads with their introduction: the sentence of narration nearest to where
  the people tool found them first (in a passage found that holds that place, else that sentence
  alone), that says something (a speech there only when it names them); then the sentences
  closest to the question, those naming them first;
- a question that names a person only as someone's ("Who is Victor's friend?") is not about that
  person: it gets no introduction and may quote anyone;
- asked who someone is, a sentence whose subject (its first name) is another person is never
  quoted ("Who is Miss Bingley?" quotes no sentence about Mr Bingley or Mr Darcy); asked what
  they did or why, what others did may answer;
- a play's passage is read as its speeches (``folio.domain.sentences.speeches``): no sentence
  runs from one speech into the next, each is quoted after its speaker's prefix, and a stage
  direction ("Enter the three Witches.") comes after every speech;
- no sentence twice, and at most ``MAX_QUOTES``; the embedder reads at most ``SHORTLIST``
  sentences (twice as many when the question asks only who someone is: its one word, the name,
  cannot tell the sentences naming them apart) and ``WINDOWED`` windows a turn, in two calls;
- when no sentence comes close enough, the answer says so: "Nothing up to Chapter 5 answers
  this."

Invariant: every quote is a sentence of a passage a tool returned (white space collapsed), and
the n-th quote is the answer's n-th source (the entry points print its number ``[n]`` after it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from folio.agent.citations import listed_quotes
from folio.domain.lexicon import MID_NAME, NAME_WORD, RUN, describing, normal_form, runs
from folio.domain.passages import Passage, Person
from folio.domain.ports import Embedder
from folio.domain.search import STOPWORDS, phrase_key, query_terms, stems, window_start
from folio.domain.sentences import (
    Speech,
    in_heading,
    is_direction,
    is_prose,
    speeches,
    split_sentences,
)

OFFLINE_NOTE = "(Offline mode: these are passages extracted from the book, not a generated answer.)"
MAX_QUOTES = 3
MAX_QUOTE_WORDS = 70
# sentences the embedder compares with the question. 20 quoted the answer a little more often on
# the CoQA dev set (any quote 0.463 -> 0.475) but let more unrelated ones pass the floor (the
# demo's "Who is murdered?" at Chapter 5 quoted one instead of saying nothing answers it)
SHORTLIST = 10
EMBEDDED_WORDS = 40  # of each, enough for its subject and gist
WINDOW_WORDS = 10  # of the sentences before and after it, read with its first words
WINDOWED = 4  # of them, the best, read again in their window
# of the window's closeness in a sentence's score. A sentence counts when its own score or the
# mixed one passes the floor: on 400 CoQA dev turns that keeps 53.2% of the sentences holding the
# answer (own alone: 48.5%) and 3.5% of unrelated ones (2.2%); the window's own would keep 57.8%
# and 6.8%.
CONTEXT_WEIGHT = 0.5
QUESTION_PENALTY = 0.25  # a sentence that asks answers less than one that tells...
EXCLAMATION_PENALTY = 0.1  # ...and so does one that exclaims ("Sweet and beloved Elizabeth!")
CONTENT_WORDS = 4  # words of content under which a sentence says little...
FRAGMENT_PENALTY = 0.2  # ...and is ranked lower by up to this much (none: the whole of it)
NAME_BONUS = 0.05  # a sentence naming the person asked about tells more about them
# a sentence of the passage the search ranked n-th (from 0) that shares a word with the question
# gains RANK_BONUS / (n + 1): the search read the conversation and both the words and the
# meaning, the sentence's own score only the question (a sentence sharing no word of it carries
# nothing of that rank: "The rain fell on the old forum" is not about Brutus, wherever it lies).
# On the CoQA dev set (benchmarks/quote_evidence.py, 773 turns) the first quote holds the answer
# in 0.329 of the turns (0.301 without), any quote in 0.461 (0.455); for every sentence alike
# 0.321 / 0.466, and 0.05 / 0.2 / 0.3 gave 0.310 / 0.318 / 0.316 first
RANK_BONUS = 0.1
# a sentence holding the question's own words of content but its names gains OVERLAP_WEIGHT x
# the share of them it holds (the meaning alone misses the words a reader takes from the text:
# "rope", "poison"; the names already found the passages, and a sentence merely naming the people
# asked about, or the title line, says nothing of what is asked). Only the order changes: the
# relevance floor is the embedder's alone. CoQA dev (quote_evidence, 773 turns): first quote
# 0.329 -> 0.358, any 0.459 -> 0.476 (names counted too: 0.352 / 0.466; at SHORTLIST 20 with
# names, 0.15 / 0.3 / 0.5 gave 0.345 / 0.349 / 0.352 first)
# Words are compared by their stems (``search.stems``: "created" shares "create"'s), in the
# shortlist, the rank bonus and the share: CoQA dev any quote 0.480 -> 0.498, first 0.369 ->
# 0.380 (0.490 / 0.375 with the shortlist's alone)
OVERLAP_WEIGHT = 0.3
FOLLOW_WORDS = 8  # of an earlier quote, looked for in the text read around it
INTRO_REACH = 2  # sentences either side of a person's first mention that may introduce them
SUBJECT_WORDS = 3  # "Mr. Lacey was", "Poor Miss Lacey sneered"
_THROUGH = re.compile(r"^through (?P<where>.+?)(?: \(.*\))?$")
_NAMING = re.compile(rf"(?<=\S ){NAME_WORD}")  # a question's capitalised words but its first
_WORD = re.compile(r"[A-Za-z]+")
_ALNUM = re.compile(r"[^\W_]+")  # a word or a number
_QUOTE_MARKS = "\"“”‘’'()_*[] "
# a speech ending the sentence but for a dialogue tag of a few words: its own mark is the end, so
# '"Have you never heard a ventriloquist?" asked Father Brown.' asks (CoQA dev first quote 0.351
# -> 0.352: kept for what the reader reads first, not for the number)
_TAGGED = re.compile(r"([?!])[”\"’']\s+(?:\S+\s+){0,3}\S+[.!]$")
_OPENING_QUOTES = "\"“‘'"
_SPEECH = re.compile('["“‘]')  # a sentence holding speech (not an apostrophe)


@dataclass(frozen=True, slots=True)
class Quote:
    sentence: str
    passage: Passage
    score: float
    cut: bool = False  # the sentence goes on past the words quoted (``MAX_QUOTE_WORDS``)
    speaker: str | None = None  # who speaks it, in a play, as its prefix names them ("Macb")
    late: bool = False  # the sentence starts before the words quoted: its part the question is of

    @property
    def location(self) -> str:
        """Where the quoted words are: their own pages (``Passage.place``, as their citation
        names them), not the whole passage's."""
        span = self.passage.span_of(self.sentence)
        return (self.passage if span is None else self.passage.place(*span)).location


@dataclass(frozen=True, slots=True, eq=False)  # one per sentence: told apart by identity
class _Candidate:
    """A sentence that may be quoted, in its place: its passage, the passage's rank among those
    found, and the sentences around it there."""

    sentence: str
    passage: Passage
    rank: int
    index: int
    before: str
    after: str
    speaker: str | None = None  # a play's speech: its prefix ("Macb")
    staged: bool = False  # a play's stage direction: says less than any speech

    @property
    def text(self) -> str:
        return " ".join(self.sentence.split()[:EMBEDDED_WORDS])

    @property
    def window(self) -> str:
        before = self.before.split()[-WINDOW_WORDS:] if self.before else []
        after = self.after.split()[:WINDOW_WORDS]
        middle = self.sentence.split()[: EMBEDDED_WORDS - 2 * WINDOW_WORDS]
        return " ".join([*before, *middle, *after])  # no longer than a sentence read alone


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
    *,
    said: str = "",
    around: Sequence[Passage] = (),
    who: bool = False,
) -> list[Quote]:
    """The sentences that answer ``question`` best, first the one that answers (see the module
    docstring), above the embedder's relevance floor, none whose subject is someone else when
    asked who someone is.
    ``about``: the person the question names (their first appearance among the passages);
    ``said``: the answer before, whose quotes come after new ones (a follow-up wants more
    than the same sentences again), except the sentence that answers best; ``around``: text
    read around the first passage, whose sentences rank as that passage's; ``who``: the
    question asks who ``about`` is in other words than their names alone ("tell me about
    Marianne", ``MessageKinds.asks_who``)."""
    subject = None if about is None or _possessive(question, about) else about
    own = [p for p in (about.first, about.told, about.described) if p is not None] if about else []
    pool = [*passages, *around, *own]
    ranks = [*range(len(passages)), *(0 for _ in around), *(len(passages) for _ in own)]
    named = {w for p in pool for w in MID_NAME.findall(p.text) if w.lower() not in STOPWORDS}
    # only a question asking who someone is keeps out the sentences about someone else: one
    # asking what they did or why may be answered by what others did (CoQA dev first quote
    # 0.358 -> 0.370 against keeping them out for every question naming a person)
    # (asked what a place is, none: what people do there tells of it)
    asks_who = subject is not None and (who or _only_names(question, subject))
    alone = subject if subject is not None and asks_who and not subject.place else None
    candidates = _candidates(pool, alone, named, ranks)
    if not candidates:
        return []
    intro = _introduction(candidates, subject if asks_who else None)
    shortlist = _shortlist(question, candidates, intro, 2 * SHORTLIST if asks_who else SHORTLIST)
    scores, gates = _scores(embedder, question, shortlist)
    asked = stems(question)
    scores.update(
        {
            c: scores[c] + RANK_BONUS / (c.rank + 1)
            for c in shortlist
            if c.rank < len(passages) and asked & stems(c.sentence)
        }
    )
    told = asked - stems(" ".join(_NAMING.findall(question)))  # what it asks of them
    scores.update(
        {c: scores[c] + OVERLAP_WEIGHT * _share(told, c.sentence) for c in shortlist if told}
    )
    floor = embedder.relevance_floor
    kept = [c for c in shortlist if gates[c] > floor or c is intro]
    if subject is not None:  # the most telling about them: the sentences that name them first
        scores.update(
            {c: scores[c] + NAME_BONUS for c in kept if _about(c.sentence, subject, named)}
        )
    before = " ".join(said.split())
    # sentences quoted before come after the new ones, but the one that answers best leads
    # again: a follow-up on the same sentence ("Where?" after "What did he find?") needs it
    best = max(kept, key=lambda c: scores[c], default=None)
    stale = {c for c in kept if c is not best and " ".join(c.sentence.split()) in before}
    # a play's stage direction comes after every speech: "Enter the three Witches." is closest
    # to "Who are the witches?" and tells nothing of them
    ranked = sorted(kept, key=lambda c: (c is not intro, c.staged, c in stale, -scores[c]))
    return [_quote(c, scores[c], question) for c in ranked[:MAX_QUOTES]]


def _scores(
    embedder: Embedder, question: str, shortlist: Sequence[_Candidate]
) -> tuple[dict[_Candidate, float], dict[_Candidate, float]]:
    """Each shortlisted sentence's score (its closeness to the question less its penalty; for
    the ``WINDOWED`` best, mixed with that of its window) and its gate (the better of its own
    score and the mixed one: the floor is the embedder's for a sentence). Two calls to the
    embedder."""
    own = closeness(embedder, question, [c.text for c in shortlist])
    scores = {c: o - _said(c) for c, o in zip(shortlist, own, strict=True)}
    leading = sorted(shortlist, key=lambda c: -scores[c])[:WINDOWED]
    place = closeness(embedder, question, [c.window for c in leading])
    gates = dict(scores)
    for c, w in zip(leading, place, strict=True):  # the best few, in place
        scores[c] = (1 - CONTEXT_WEIGHT) * scores[c] + CONTEXT_WEIGHT * (w - _said(c))
        gates[c] = max(gates[c], scores[c])
    return scores, gates


def compose(quotes: Sequence[Quote], where: str) -> str:
    """The quotes in the order of their sources, with the offline note; or the honest nothing.
    A play's speech follows its speaker's prefix as the book prints it: Macb. "So foule and
    faire a day I haue not seene" (the book's abbreviation, not a guess at the name)."""
    if not quotes:
        return f"Nothing {where} answers this. Try other words, or a name from the story."
    lines = [
        f"- {f'{q.speaker}. ' if q.speaker else ''}{'… ' if q.late else ''}{in_quotes(q.sentence)}"
        f"{' …' if q.cut else ''} ({q.location})"
        for q in quotes
    ]
    # the whole book open (no position): "From the book:", not "From the book, in the book:"
    head = "From the book:" if where == "in the book" else f"From the book, {where}:"
    return f"{head}\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE


_LEAD = re.compile(
    r"^From the book(?:, [^\n]*)?:\n- [^\n]*\((?P<where>[^()\n]+)\)(?: \[\d+\])?$", re.M
)


def lead_location(answer: str) -> str | None:
    """Where the first quote of an answer ``compose`` wrote lies ("Chapter III, p. 22"), or None
    (an answer quoting nothing, or not one of these)."""
    m = _LEAD.search(answer)
    return m.group("where") if m else None


def lead_quote(answer: str) -> str | None:
    """The sentence an answer ``compose`` wrote quotes first (``citations.listed_quotes``: no
    speaker's prefix, no "…"), or None (an answer quoting nothing, or not one of these)."""
    m = _LEAD.search(answer)
    quotes = listed_quotes(answer[m.start() :]) if m else []
    return quotes[0] if quotes else None


def quote_head(quote: str) -> str:
    """The first ``FOLLOW_WORDS`` words of ``quote`` as ``search.phrase_key`` reads them: what is
    searched as a phrase to find it in the book, and looked for to find it in a passage read."""
    return " ".join(phrase_key(quote).split()[:FOLLOW_WORDS])


def following(passage: Passage, quote: str) -> Quote | None:
    """The first sentence of ``passage`` after the one holding ``quote``'s first words
    (``quote_head``: a quote of an earlier answer, the part of a long sentence it quoted) and
    that says something: not a heading line,
    a question, an exclamation, words leading into what follows (a colon, a comma) or a fragment
    of few words (``_penalty``). None when ``passage`` does not hold that sentence or nothing
    after it says something."""
    head = f" {quote_head(quote)} "
    sentences = split_sentences(passage.text)
    keys = [f" {phrase_key(x)} " for x in sentences]
    opening = (i for i, k in enumerate(keys) if k.lstrip().startswith(head.lstrip()))
    at = next(opening, next((i for i, k in enumerate(keys) if head in k), None))
    if at is None:
        return None
    after = sentences[at + 1 :]
    told = (x for x in after if is_prose(x, passage.headings) and _penalty(x) == 0)
    sentence = next(told, None)
    return None if sentence is None else _quote_of(sentence, passage)


_OWN_MARKS = (("“", "”"), ('"', '"'))


def in_quotes(sentence: str) -> str:
    """``sentence`` in quotation marks, unless it stands in its own already (dialogue that opens
    and closes it: “…” or "…"): a quote is never wrapped in quotes a second time."""
    if len(sentence) > 1 and any(sentence[0] == a and sentence[-1] == b for a, b in _OWN_MARKS):
        return sentence
    return f'"{sentence}"'


def _candidates(
    pool: Sequence[Passage], subject: Person | None, named: set[str], ranks: Sequence[int]
) -> list[_Candidate]:
    """The sentences of ``pool`` that may be quoted, each once (the first copy, even when a later
    one was cut short): prose, and not about someone else than ``subject`` (but for the sentence
    they are first met in: it names them, and its opening name may be theirs cut short, "And Mr.
    Lucian" of "And Mr. Lucian Gregory, the red-haired poet, was..."). ``named``: the words the
    passages write capitalised mid-sentence (names); ``ranks``: each passage's rank."""
    out: list[_Candidate] = []
    seen: set[str] = set()
    held = (subject.first, subject.told, subject.described) if subject else ()
    own = {_key(p.text) for p in held if p}
    opens = [_opens(p) for p in pool]
    cut = [speeches(p.text, opening=o) for p, o in zip(pool, opens, strict=True)]
    # a sentence alone (where someone is first met) is read as its own
    play = any(len(parts) > 1 for parts in cut)
    for rank, passage, speeches_of, heads in zip(ranks, pool, cut, opens, strict=True):
        parts = [
            (s, part)
            for part in speeches_of
            for piece, opening in _chapter_pieces(passage, part, opens=heads)
            for s in split_sentences(piece, opening=opening)
        ]
        sentences = [s for s, _ in parts]
        for i, (sentence, part) in enumerate(parts):
            key = _key(sentence)
            if key in seen or not is_prose(sentence, passage.headings):
                continue
            seen.add(key)
            if key in own or not _someone_else(sentence, subject, named):
                before = sentences[i - 1] if i else ""
                after = sentences[i + 1] if i + 1 < len(sentences) else ""
                staged = part.staged or (play and is_direction(sentence))
                out.append(
                    _Candidate(sentence, passage, rank, i, before, after, part.speaker, staged)
                )
    return out


def _chapter_pieces(passage: Passage, part: Speech, *, opens: bool) -> list[tuple[str, bool]]:
    """The text of ``part`` of ``passage`` cut where a chapter starts, each piece with whether
    it opens a chapter (its first line is then the heading, never part of the story's first
    sentence: a PDF's text has no blank line after it, "Chapter 1\nI am by birth...")."""
    cuts = [o - passage.char_start for o, _ in passage.chapters] if passage.is_slice else []
    starts = [c for c in cuts if part.start < c < part.end]
    return [
        (passage.text[a:b], a in starts or (opens and a == 0))
        for a, b in pairwise([part.start, *starts, part.end])
    ]


def _opens(passage: Passage) -> bool:
    """Does ``passage`` open with its chapter's heading (a scene's: "Scena Tertia." of "Actus
    Primus, Scena Tertia")?"""
    line = next((x for x in passage.text.splitlines() if x.strip()), "")
    return in_heading(line, passage.headings)


def _key(sentence: str) -> str:
    """A sentence as told apart from others: its first words, in lower case, without the marks
    around them (two passages may cut the same speech apart: "'You see, there are seven
    members..." and "You see, there are seven members...")."""
    return " ".join(_ALNUM.findall(sentence.lower())[:12])


def _introduction(candidates: Sequence[_Candidate], subject: Person | None) -> _Candidate | None:
    """The sentence introducing ``subject``, whom the question asks who they are (None: it
    does not ask that): of the sentences within ``INTRO_REACH`` of their first mention, in a
    passage found that holds it (else that sentence alone), the nearest that says something,
    narration before dialogue; a speech only when it names them (one beside the mention may be
    anyone's: "Well, sir, I want to see what whaling is." before Captain Ahab is first named).
    When no narration there says something and they were first met in a speech, the first
    sentence the story tells of them in its own voice (``Person.told``: "The third mate was
    Flask, a native of Tisbury", not Captain Bildad's "Luck to ye, Mr. Flask"); of someone who
    tells the story (``Person.narrates``), always: their own first words of it. Otherwise,
    unless that sentence says who they are itself ("by Mr. Elton, a young man living alone"),
    the first the story says it in (``Person.described``: "Sir John Middleton was a good looking
    man about forty.", not "She instantly wrote Sir John Middleton her acknowledgment")."""
    if subject is None:
        return None
    first = subject.first
    head = " ".join(first.text.split()[:8])
    near: list[_Candidate] = []
    holders = {id(c.passage): c.passage for c in candidates if _holds(c.passage, first)}
    for holder in holders.values():  # its sentences as the candidates count them (a heading
        # opening the passage is one sentence of its own)
        of_holder = [c for c in candidates if c.passage is holder]
        at = next((c.index for c in of_holder if c.sentence.startswith(head)), None)
        if at is not None:
            near = [c for c in candidates
                    if c.passage is holder and abs(c.index - at) <= INTRO_REACH]  # fmt: skip
            near.sort(key=lambda c: (abs(c.index - at), c.index))
            break
    else:
        near = [c for c in candidates if c.passage is first]
    names = {f.split()[-1] for f in (subject.name, *subject.aliases)}
    naming = {id(c) for c in near if names & set(_WORD.findall(c.sentence))}
    # of a place, only the sentence naming it there: narration beside it tells of people
    telling = [
        c
        for c in near
        if _said(c) == 0 and (id(c) in naming or not (subject.place or _SPEECH.search(c.sentence)))
    ]
    if subject.place:
        return next(iter(telling), None)
    told = _key(subject.told.text) if subject.told else None
    voiced = [c for c in candidates if _key(c.sentence) == told and _said(c) == 0]
    if voiced and subject.narrates:
        return voiced[0]  # their own first words of the story
    nearest = (
        voiced[0]  # first met in a speech: the story's own first words about them
        if voiced and all(_SPEECH.search(c.sentence) for c in telling)
        else min(telling, key=lambda c: _dialogue(c.sentence), default=None)
    )
    said = _key(subject.described.text) if subject.described else None
    described = [c for c in candidates if _key(c.sentence) == said]
    forms = describing(subject.name, *subject.aliases)
    if described and (nearest is None or not forms.search(nearest.sentence)):
        return described[0]  # where the story says who they are ("Stubb was the second mate.")
    return nearest


def _shortlist(
    question: str, candidates: Sequence[_Candidate], intro: _Candidate | None, size: int
) -> list[_Candidate]:
    """The introduction, then the candidates sharing most words with the question (then with
    their window, then from the best passages), ``size`` in all: the embedder reads a few
    sentences a turn, not every one found."""
    terms = stems(question)

    def overlap(c: _Candidate) -> tuple[int, int, int]:
        own = len(terms & stems(c.sentence))
        around = len(terms & stems(f"{c.before} {c.after}"))
        return (-own, -around, c.rank)

    rest = sorted((c for c in candidates if c is not intro), key=overlap)
    return [*([intro] if intro else []), *rest][:size]


def closeness(embedder: Embedder, query: str, texts: Sequence[str]) -> list[float]:
    """Cosine of ``query`` with each text: one call to the embedder (none without texts)."""
    if not texts:
        return []
    vectors = np.asarray(embedder.embed([query, *texts]), dtype=np.float32)
    return [float(x) for x in vectors[1:] @ vectors[0]]


def _share(asked: frozenset[str], sentence: str) -> float:
    """The share of the question's words of content (``asked``, stems) that ``sentence`` holds."""
    return len(asked & stems(sentence)) / len(asked)


def _said(c: _Candidate) -> float:
    """How much less a candidate counts for saying little (``_penalty``); a stage direction as
    much as a question."""
    return _penalty(c.sentence) + QUESTION_PENALTY * c.staged


def _penalty(sentence: str) -> float:
    """How much less ``sentence`` counts for saying little: a question (a speech asking, before
    its dialogue tag, too), words leading into what follows (a colon, a comma), an exclamation,
    or few distinct words of content (an address, a dialogue tag)."""
    words = {w for w in _WORD.findall(sentence.lower()) if len(w) > 1 and w not in STOPWORDS}
    missing = max(0, CONTENT_WORDS - len(words)) / CONTENT_WORDS
    tagged = _TAGGED.search(sentence)  # '"Have you never heard a ventriloquist?" asked he.'
    end = tagged.group(1) if tagged else sentence.rstrip(_QUOTE_MARKS)[-1:]
    return (
        QUESTION_PENALTY * (end in ("?", ":", ","))  # a colon or comma leads into what follows
        + EXCLAMATION_PENALTY * (end == "!")
        + FRAGMENT_PENALTY * missing
    )


def _dialogue(sentence: str) -> bool:
    return sentence.startswith(tuple(_OPENING_QUOTES))


def _forms(person: Person) -> list[set[str]]:
    return [set(normal_form(f).split()) for f in (person.name, *person.aliases)]


def _about(sentence: str, person: Person, named: set[str]) -> bool:
    """The first name ``sentence`` uses is ``person``'s, by one of their forms whole ("Miss
    Lucas" is not "Lucas"): "We stayed with Justine, and Elizabeth wept" is not about Elizabeth."""
    first = next((r for r in runs(sentence) if any(w in named for w in r.split())), None)
    return first is not None and any(f <= set(first.split()) for f in _forms(person))


def _mentions(question: str, person: Person) -> list[re.Match[str]]:
    """The runs of capitalised words of ``question`` that share a word with ``person``'s forms
    ("Professor Waldman" for M. Waldman)."""
    words = {w for f in _forms(person) for w in f}
    return [m for m in RUN.finditer(question) if set(normal_form(m.group()).split()) & words]


def _only_names(question: str, person: Person) -> bool:
    """The question's words of content are all in its names of ``person`` ("Who is Professor
    Waldman?" asks nothing else of M. Waldman; "Why does Elizabeth dislike Darcy?" does)."""
    mentions = _mentions(question, person)
    named = {w.lower() for m in mentions for w in re.findall(r"\w+", m.group())}
    return bool(mentions) and all(w in named for w in query_terms(question))


def _possessive(question: str, person: Person) -> bool:
    """``person`` is named only as someone's ("Victor's friend"): the question is about another."""
    mentions = _mentions(question, person)
    return bool(mentions) and all(re.match(r"[’']s\b", question[m.end() :]) for m in mentions)


def _holds(passage: Passage, first: Passage) -> bool:
    return (
        passage.book_id == first.book_id
        and passage.char_start <= first.char_start < passage.char_end
    )


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
    words = set(subject.split())  # "Henry Clerval" is Clerval, "Clerval" is Henry Clerval
    return not (any(words <= form for form in forms) or set(about.name.split()) <= words)


def _quote(c: _Candidate, score: float, question: str) -> Quote:
    return _quote_of(c.sentence, c.passage, score, c.speaker, question)


def _quote_of(
    sentence: str,
    passage: Passage,
    score: float = 0.0,
    speaker: str | None = None,
    question: str = "",
) -> Quote:
    """``sentence`` quoted, at most ``MAX_QUOTE_WORDS`` of it: of a longer one, the words that
    hold most of the question's ("... and that M. Waldman, a fellow-professor, would lecture
    upon chemistry" of a sentence of 90 words, asked who M. Waldman is), else its first."""
    words = sentence.split()
    if len(words) <= MAX_QUOTE_WORDS:
        return Quote(sentence, passage, score, speaker=speaker)
    start = window_start(sentence, question, words=MAX_QUOTE_WORDS, head=True) if question else 0
    shown = " ".join(words[start : start + MAX_QUOTE_WORDS])
    cut = start + MAX_QUOTE_WORDS < len(words)
    return Quote(shown, passage, score, cut, speaker, late=start > 0)
