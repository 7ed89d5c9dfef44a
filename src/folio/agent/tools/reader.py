"""Reader tools beyond search, bounded by the reading position: the story so far (a recap per
chapter read: ``folio.agent.tools.recap``) and the people met so far.

The people are the names of the lexicon of the text read (``folio.domain.lexicon``: people told
from places, each with the other forms the text read gives them), with how often they come up and
the sentence they first appear in: the first of the story's, not a chapter's heading, the book's
title nor a note in square brackets ("The Duel of Dr Hirsch", "Frankenstein; or, the Modern
Prometheus", "[The Wisdom of Father Brown by G. K. Chesterton 1914]": ``sentences.is_prose``).

In a series, the story so far and the people met run across the earlier volumes (read in full)
and this one up to the position.

Invariant: only text inside the reading window (``ctx.window``) is read, so nothing past the
position, no unread front or back matter and no later volume is ever summarised, counted or
quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from difflib import SequenceMatcher
from functools import cache
from itertools import islice
from typing import Any

from folio.agent.tools.base import (
    BaseTool,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolServices,
    passage_of,
)
from folio.agent.tools.recap import RecapTool
from folio.domain.books import Book
from folio.domain.lexicon import (
    RUN,
    Lexicon,
    Name,
    describing,
    name_pattern,
    runs,
    singular,
    stating,
)
from folio.domain.passages import PEOPLE, Passage, PeopleList, Person
from folio.domain.sentences import is_prose, opens_with, sentence_spans

MAX_PEOPLE = 12
MAX_NAME_CHARS = 100  # of a name looked up: a name, not a passage
MAX_WORDS = 60
AROUND = 1500  # characters read on each side of a first mention to find its sentence
MAX_SKIPPED = 5  # first mentions passed over for standing in a heading, a note or a speech
MAX_TOLD = 12  # first mentions read for the first the story tells in its own voice
MAX_DESCRIBING = 40  # places read for a sentence saying who someone is
# a name asked for that no text read writes is taken for the name read this alike (difflib's
# ratio), each word at least MIN_WORD_LIKENESS alike: a misspelling ("Knightly", 0.94 to
# "Knightley"; "Victer", 0.83 to "Victor"), not another person ("Frank Churchill" is no "Mrs
# Churchill": "frank" and "mrs" are 0.25 alike; "Jade" is no "Jane", 0.75)
MIN_LIKENESS = 0.8
MIN_WORD_LIKENESS = 0.75
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_OPENING_RUN = re.compile(rf"(?:{RUN.pattern})\s*$")  # capitalised words just before a name
# a sentence opening with the book's whole title, when it has this many words, is its title page
# (a one-word title, "Emma", opens the story's sentences too)
MIN_TITLE_WORDS = 3
# about a passage (200 words): a name's share of the text read is counted in these
PASSAGE_CHARS = 1200
# a person tells the story read (``_narrates``) when at least MIN_NARRATOR_MENTIONS of their
# first MAX_NARRATOR_MENTIONS mentions, all but NARRATOR_TOLD of them, stand in someone's speech
# or in a narration that names them beside "I" or "me" somewhere, at least half of those
# addressing them, and FIRST_PERSON of the narration's words around them
# are "I", "me", "my", "myself" (Frankenstein's Victor at Chapter 5: 3 mentions, every one in a
# speech, two addressing him, 8.9%; Moby Dick's Ishmael: "Call me Ishmael.", then addressed by
# himself, "So, wherever you go, Ishmael, said I to myself", at half the book 2 of 15 mentions
# his own words of himself, "deeper than Ishmael can go", so NARRATOR_TOLD 0.1 lost him; of the
# 18 books of ../shared/data/books at 10%, 20%, 50% and all of their text, no other name passes:
# P&P's "Lizzy" is addressed but the narration around says "I" in under 0.1% of its words)
MIN_NARRATOR_MENTIONS = 3
MAX_NARRATOR_MENTIONS = 60
NARRATOR_TOLD = 0.2
FIRST_PERSON = 0.03
# a name addressed: set apart from the speech around it, after its opening mark, a comma or
# "dear" ("My dear Victor, do not waste", "Victor, he is murdered!"), before a comma, a mark
# or a dash; not "a present for my Victor—" nor "thy Adam,"
_ADDRESSED = re.compile(r"[A-Z][\w'’]*(?:\.?[ \t]+[A-Z][\w'’]*)*[ \t]*(?:[,!?;.—]|--)")
_ADDRESSING = re.compile(r"(?:[“\"‘,;—!?]|--|\bdear(?:est)?)\s*$", re.IGNORECASE)
# a speech within a paragraph, to its closing mark or the paragraph's end (a speech running on
# into the next paragraph opens it with a mark again)
_QUOTED = re.compile(r'“[^”]*(?:”|$)|"[^"]*(?:"|$)')
_SELF = frozenset({"i", "me", "my", "myself"})
# named by the narrator as themselves, before the name: "Call me Ishmael", "I, Ishmael", "It's
# I--Ishmael" (not "Believe me, Margaret," nor "he gave me Victor's letter": see _narrates)
_SELF_NAMED = re.compile(r"(?:\bme[ \t]+|\bI[ \t]*(?:,|--|—)[ \t]*)$")
_POSSESSIVE = re.compile(r"[\w.]+(?:[ \t]+[A-Z][\w]*)*['’]s\b")  # "Victor's", "Mr. Darcy's"
OPENING_SENTENCES = 3  # of a chapter, where its narrator may introduce themselves
VOICE_SAMPLES, VOICE_CHARS = 40, 3000  # stretches of the text read whose narration is weighed


def _sentences(text: str, base: int, *, opening: bool = False) -> list[tuple[int, int, str]]:
    return [(base + s, base + e, text[s:e]) for s, e in sentence_spans(text, opening=opening)]


class PeopleTool(BaseTool):
    name = PEOPLE
    description = (
        "People met so far, most mentioned first, each with where they first appear; with "
        "`name`: that one, and the other names the book gives them."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": MAX_NAME_CHARS}},
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self, ctx: ToolContext, services: ToolServices, *, name: str | None = None
    ) -> ToolResult:
        if name is not None:
            asked = name.strip()
            found = _one_name(ctx, services, asked)
            if _met(found) and _spelt(asked, found):
                return found
            one = singular(asked)  # looked up when the name as written is not met
            if not _met(found) and one and _met(plain := _one_name(ctx, services, one)):
                return plain  # "the Frankensteins": Frankenstein
            # not met, or met by one word with another none of theirs ("Harriet Smyth" found
            # Harriet by her given name): the name read it misspells, under that name
            near = _nearest(ctx, services, asked)
            fixed = _one_name(ctx, services, near) if near else found
            if near and _met(fixed) and isinstance(fixed.data, PeopleList):
                person = fixed.data.people[0]
                aliases = tuple(sorted({person.name, *person.aliases} - {near}))
                note = f"Nothing read so far mentions {asked}; the nearest name read is {near}."
                data = replace(
                    fixed.data,
                    people=(replace(person, name=near, aliases=aliases),),
                    note=note,
                    misspelt=asked,
                )
                return ToolResult.ok(data, summary=f"1 name: {near} (for {asked})")
            return found
        book = ctx.book
        window = ctx.window
        pieces = [(v, a, b) for v in window.volumes for a, b in window.spans(v.id)]
        if not pieces:
            data = PeopleList((), book.describe_position(), "Nothing has been read yet.")
            return ToolResult.ok(data, summary="0 people")
        # one text of everything read, each piece placed at a base offset in it
        texts = [services.books.get_text(v.id, a, b) for v, a, b in pieces]
        bases, at = [], 0
        for t in texts:
            bases.append(at)
            at += len(t) + 2
        text = "\n\n".join(texts)
        people = []

        def met_at(offset: int) -> Met:
            i = max(j for j, base in enumerate(bases) if base <= offset)
            volume, start, _ = pieces[i]
            return _mention(volume, texts[i], start, offset - bases[i])

        # built from the text read only: no alias or kind learned past the position
        lexicon = Lexicon.of(text)
        read = services.lexicons.people(lexicon, 0, len(text), MAX_PEOPLE)
        # whoever tells the story comes first, however seldom others name them (Victor: 3
        # mentions at Frankenstein's Chapter 5, every one in a speech to him)
        listed = {known.name for known, _, _ in read}
        told = [
            (n, c, f)
            for n, c, f in lexicon.people(0, len(text), len(lexicon.names))
            if n.name not in listed
            and c >= MIN_NARRATOR_MENTIONS
            and _narrates([(0, text)], n.offsets)
            and not services.lexicons.is_place(lexicon, n)
        ]
        for known, mentions, offset in [*told, *read][:MAX_PEOPLE]:
            later = known.within(offset, len(text), MAX_SKIPPED)
            volume, title, sentence = _told(later, met_at)
            first = passage_of(volume, title, *sentence, volume=book)
            others = tuple(sorted(a for a in known.aliases if a != known.name))
            narrates = (known, mentions, offset) in told or _narrates([(0, text)], known.offsets)
            people.append(Person(known.name, mentions, first, others, narrates=narrates))
        people.sort(key=lambda p: not p.narrates)  # the narrator first, the rest as they were
        data = PeopleList(tuple(people), book.describe_position(), first_person=_voice(text))
        return ToolResult.ok(data, summary=f"{len(people)} people")


def _one_name(ctx: ToolContext, services: ToolServices, name: str) -> ToolResult:
    """``name`` across the reading window: the earlier volumes of a series (read in full), then
    this book up to the position. In each volume, as the lexicon of the text the window shows
    knows it (``Lexicons.read``: nothing learned past the position), else a full-text count of
    it (any case);
    the mentions add up, and the first is where the reader met it. Only the other names the text
    read uses are given (a form the book takes up later is not)."""
    where = ctx.book.describe_position()
    # volume, its text read, name, mentions, first offsets
    met: list[tuple[Book, Texts, str, int, list[int]]] = []
    known_first: tuple[Lexicon, Name] | None = None  # as the first volume met knows the name
    aliases: set[str] = set()
    held: set[tuple[str, int]] = set()  # passage-lengths of text read holding a mention
    read = 0  # and passage-lengths read in all
    place = False  # as the lexicon of the first volume met tells the name
    narrates = False  # in the first volume met
    for volume in ctx.window.volumes if name else ():
        spans = ctx.window.spans(volume.id)
        texts = [(a, services.books.get_text(volume.id, a, b)) for a, b in spans]
        lexicon = services.lexicons.read(ctx.window, volume, services.books)
        known = lexicon.find(name)
        firsts = [f for a, b in spans if (f := known.first(a, b)) is not None] if known else []
        if known is not None and firsts:
            count = sum(known.mentions(a, b) for a, b in spans)
            place = place or (not met and services.lexicons.is_place(lexicon, known))
            # the text may use the name before the lexicon's first mention of this person (a
            # fuller form it counted apart: "Henry Clerval" before "Clerval")
            said = [a + m.start() for a, t in texts for m in name_pattern(name).finditer(t)]
            forms = {f for f in known.aliases | {known.name} if any(_said(f, t) for _, t in texts)}
            # the book's usual name for them only if the text read uses it: else the reader's
            label = known.name if known.name in forms else name
            early = (o for a, b in spans for o in known.within(a, b, MAX_TOLD))
            firsts = sorted({*said[:MAX_TOLD], *early})[:MAX_TOLD]
            known_first = known_first or (None if met else (lexicon, known))
            met.append((volume, texts, label, count, firsts))
            aliases |= forms
            every = [o for a, b in spans for o in known.within(a, b, known.mentions(a, b))]
            narrates = narrates or (len(met) == 1 and _narrates(texts, every))
        else:
            every = [
                a + m.start()
                for a, t in texts
                for m in name_pattern(name, flags=re.IGNORECASE).finditer(t)
            ]
            if every:
                met.append((volume, texts, name, len(every), every[:MAX_TOLD]))
        held |= {(volume.id, o // PASSAGE_CHARS) for o in every}
        read += sum(max(1, (b - a) // PASSAGE_CHARS) for a, b in spans)
    if not met:
        note = f"Nothing read so far ({where}) mentions {name}."
        return ToolResult.ok(PeopleList((), where, note), summary="0 names")
    volume, shown, label, _, firsts = met[0]
    first, told = _first_met(volume, shown, firsts, ctx.book)
    if narrates and told is None:  # the story's own first words about them are their own
        told = _opening(volume, shown, firsts[0], ctx.book)
    described = _described(volume, shown, *known_first, ctx.book) if known_first else None
    person = Person(
        label,
        sum(m[3] for m in met),
        first,
        tuple(sorted(a for a in aliases if a != label)),
        share=min(1.0, len(held) / max(1, read)),
        told=told,
        place=place,
        narrates=narrates and not place,
        described=None if place else described,
    )
    return ToolResult.ok(PeopleList((person,), where), summary=f"1 name: {label}")


def _described(
    volume: Book, texts: Texts, lexicon: Lexicon, known: Name, book: Book
) -> Passage | None:
    """The first sentence of the story's own voice in ``volume``'s text read (``texts``) that
    says who ``known`` is (``lexicon.describing``: "Stubb was the second mate.", "Sir John
    Middleton was a good looking man about forty.") and is about them: no one else is named in
    it before (not "...brought the Westons and Mr. Knightley; and by Mr. Elton, a young man").
    When the story's voice never says it, the first speech that states it in so many words
    (``lexicon.stating``, not a question: "Captain Ahab is the Captain of this ship.", Captain
    Peleg's, of someone met through what others say of them; not "Ahab, the boat is ready!").
    Of the first ``MAX_DESCRIBING`` places the pattern finds; None when none."""
    pattern = describing(known.name, *known.aliases)
    stated = stating(known.name, *known.aliases)
    places = ((a, t, m.start()) for a, t in texts for m in pattern.finditer(t))
    heard: Passage | None = None
    for start, text, local in islice(places, MAX_DESCRIBING):
        spoken = _spoken(text[max(0, local - AROUND) : local])
        if spoken and (heard is not None or not stated.match(text, local)):
            continue
        mention = _mention(volume, text, start, local)
        _, chapter, (first, last, sentence) = mention
        if not _of_story(mention) or (spoken and "?" in sentence):
            continue
        # the sentence up to the name found, and the words its run opens with ("Mr. Lucian"
        # of "Mr. Lucian Gregory, the red-haired poet", a form the lexicon may hold apart)
        opening = _OPENING_RUN.sub("", text[first - start : local])
        others = {n.name for r in runs(opening) if (n := lexicon.find(r)) is not None}
        if others <= {known.name}:
            found = passage_of(volume, chapter, first, last, sentence, volume=book)
            if not spoken:
                return found
            heard = found
    return heard


def _narrates(texts: Texts, offsets: Sequence[int]) -> bool:
    """Does the person mentioned at ``offsets`` (in ``texts``, the text read of one volume) tell
    the story read? Others speak of them and to them, the story never names them in its own
    voice but beside "I" (``_SELF_NAMED``: "Call me Ishmael.") and to call them, and it speaks
    as "I" (see ``MIN_NARRATOR_MENTIONS``): a first-person narrator ("My dear Victor," cried
    he), not someone only talked about (Justine in Elizabeth's letter: never addressed) nor a
    name only speech uses in a story told in the third person ("Lizzy"). Reads at most
    ``MAX_NARRATOR_MENTIONS`` mentions and ``AROUND`` characters either side."""
    offsets = offsets[:MAX_NARRATOR_MENTIONS]
    if len(offsets) < MIN_NARRATOR_MENTIONS:
        return False
    read = []  # each mention: its text, where, in a speech, addressed, named by "I" or "me"
    told = 0
    for offset in offsets:
        start, text = next(((a, t) for a, t in texts if a <= offset < a + len(t)), (0, ""))
        local = offset - start
        before = text[max(0, local - AROUND) : local]
        called = bool(_ADDRESSED.match(text, local) and _ADDRESSING.search(before[-14:]))
        own = bool(_SELF_NAMED.search(before)) and not _POSSESSIVE.match(text, local)
        mention = (text, local, _spoken(before), called, own)
        told += not any(mention[2:])  # named in the story's own voice
        if told > NARRATOR_TOLD * len(offsets):  # no need to read on
            return False
        read.append(mention)
    # the narration may call them by name only when they name themselves there ("Call me
    # Ishmael."; "So, wherever you go, Ishmael, said I to myself"): else an invocation ("Sing,
    # Heav'nly Muse,") would be taken for the narrator
    own = any(named for *_, named in read)
    pointed = [(t, at, called) for t, at, spoken, called, named in read
               if t and (spoken or named or (own and called))]  # fmt: skip
    if len(pointed) < (1 - NARRATOR_TOLD) * len(offsets):  # the story names them in its voice
        return False
    if 2 * sum(called for *_, called in pointed) < len(pointed):
        return False
    # the whole paragraphs around, each without its speeches
    share = _first_person([t[max(0, at - AROUND) : at + AROUND] for t, at, _ in pointed])
    return share is not None and share >= FIRST_PERSON


def _opening(volume: Book, texts: Texts, offset: int, book: Book) -> Passage | None:
    """Where a narrator introduces themselves: of the first ``OPENING_SENTENCES`` sentences of
    the story in the chapter holding ``offset`` (their first mention, in ``volume``'s ``texts``
    read), the first told in the first person ("I am by birth a Genevese, and my family is one of
    the most distinguished of that republic."). None when none is."""
    chapter = volume.chapter_at(offset)
    if chapter is None:
        return None
    start, text = next(((a, t) for a, t in texts if a <= chapter.char_start < a + len(t)), (0, ""))
    local = chapter.char_start - start
    text = text[: volume.chapter_end(chapter) - start]  # not into the next chapter
    told = [
        (a, b, sentence)
        for a, b, sentence in _sentences(
            text[local : local + AROUND], chapter.char_start, opening=True
        )
        if is_prose(sentence, [chapter.title, volume.title])
    ][:OPENING_SENTENCES]
    for a, b, sentence in told:
        if _SELF & set(_narration_words(sentence)):
            return passage_of(volume, chapter.title, a, b, _cut(sentence), volume=book)
    return None


def _voice(text: str) -> float | None:
    """The share of the narration of ``text`` that says "I", "me", "my" or "myself": of the whole
    paragraphs of ``VOICE_SAMPLES`` stretches of ``VOICE_CHARS`` spread evenly over it, each
    without its speeches (a bounded read of any book: at most 120,000 characters, a few ms).
    None when no narration is read."""
    room = max(0, len(text) - VOICE_CHARS)
    starts = (room * i // (VOICE_SAMPLES - 1) for i in range(VOICE_SAMPLES))
    return _first_person([text[start : start + VOICE_CHARS] for start in starts])


def _first_person(stretches: Sequence[str]) -> float | None:
    """The share of "I", "me", "my", "myself" among the words of the whole paragraphs of
    ``stretches`` (each cut anywhere: its first and last paragraphs are left out), their
    speeches left out; None when they hold no narration."""
    words = [
        w
        for stretch in stretches
        for paragraph in _BLANK_LINE.split(stretch)[1:-1]
        for w in _narration_words(paragraph)
    ]
    return sum(w in _SELF for w in words) / len(words) if words else None


def _cut(sentence: str) -> str:
    """``sentence``, or its first ``MAX_WORDS`` words and "…" when it is longer."""
    words = sentence.split()
    return sentence if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS]) + " …"


def _narration_words(paragraph: str) -> list[str]:
    """The words of ``paragraph`` outside its speeches, in lower case."""
    return re.findall(r"[a-z]+", _QUOTED.sub(" ", paragraph).lower())


def _met(result: ToolResult) -> bool:
    return isinstance(result.data, PeopleList) and bool(result.data.people)


def _spelt(name: str, result: ToolResult) -> bool:
    """Is every word of ``name`` one of the words the person ``result`` found goes by (found by
    one word of it, another may be misspelt)?"""
    assert isinstance(result.data, PeopleList)
    person = result.data.people[0]
    words = {w for form in (person.name, *person.aliases) for w in form.lower().split()}
    return all(w in words for w in name.lower().split())


def _nearest(ctx: ToolContext, services: ToolServices, name: str) -> str | None:
    """The name read so far that ``name`` misspells ("Mr Knightly": "Mr Knightley", "Harriet
    Smyth": "Harriet Smith"), if one is alike enough: as many words, each at least
    ``MIN_WORD_LIKENESS`` alike and the whole ``MIN_LIKENESS`` (difflib's ratio, in lower case).
    Only the names of the lexicon of the text read are compared: none learned past the
    position."""
    words = name.lower().split()
    forms = {
        form
        for volume in ctx.window.volumes
        for known in services.lexicons.read(ctx.window, volume, services.books).names
        for form in known.aliases
        if len(form.split()) == len(words)
    }

    def likeness(form: str) -> float:
        pairs = zip(words, form.lower().split(), strict=True)
        if any(SequenceMatcher(None, a, b).ratio() < MIN_WORD_LIKENESS for a, b in pairs):
            return 0.0
        return SequenceMatcher(None, name.lower(), form.lower()).ratio()

    best = max(sorted(forms), key=likeness, default=None)
    return best if best is not None and likeness(best) >= MIN_LIKENESS else None


def _said(form: str, text: str) -> bool:
    """Does ``text`` use ``form`` (as the lexicon writes it: "Mr Darcy" for "Mr. Darcy")?"""
    return name_pattern(form).search(text) is not None


def _first_met(
    volume: Book, texts: Texts, offsets: Sequence[int], book: Book
) -> tuple[Passage, Passage | None]:
    """The sentence a person is first met in, of the first ``MAX_SKIPPED`` of their mentions at
    ``offsets`` in ``volume`` (its ``texts`` read: ``(start, text)``), and, when that is in
    someone's speech, the first sentence the story names them in its own voice ("The third mate
    was Flask, a native of Tisbury", after Captain Bildad's "Luck to ye, Mr. Flask")."""

    @cache
    def at(offset: int) -> tuple[Met, bool]:  # a mention, and whether it stands in a speech
        start, text = next((a, t) for a, t in texts if a <= offset < a + len(t))
        local = offset - start
        return _mention(volume, text, start, local), _spoken(text[max(0, local - AROUND) : local])

    first = _told(offsets[:MAX_SKIPPED], lambda o: at(o)[0])
    spoken = next(s for m, s in map(at, offsets) if m is first)
    voiced = (m for m, s in map(at, offsets) if not s and _of_story(m))
    told = next(voiced, None) if spoken else None
    return (
        passage_of(volume, first[1], *first[2], volume=book),
        passage_of(volume, told[1], *told[2], volume=book) if told else None,
    )


def _mention(volume: Book, text: str, start: int, local: int) -> Met:
    """The mention at ``local`` in ``text`` (the text read of ``volume`` from ``start``): its
    sentence, found near it rather than in the whole text, and the chapter it stands in. No
    sentence runs over a chapter's start: a PDF's "Letter 1\n_To Mrs. Saville, England._" has
    no blank line after the contents before it, nor after its heading."""
    chapter = volume.chapter_at(start + local)
    begins = chapter.char_start if chapter else 0
    ends = (
        volume.chapter_end(chapter)
        if chapter
        else next((c.char_start for c in volume.chapters), volume.char_count)
    )
    lo = max(0, local - AROUND, begins - start)
    hi = min(local + AROUND, ends - start)
    opening = chapter is not None and lo == begins - start
    sentence = _sentence_at(text[lo:hi], start + lo, start + local, opening=opening)
    return volume, chapter.title if chapter else None, sentence


def _spoken(before: str) -> bool:
    """Is the text after ``before`` inside a speech: does its paragraph (from the last blank line
    of ``before``) leave a quotation open (an odd number of straight double quotes, or more
    “ than ”)?"""
    paragraph = _BLANK_LINE.split(before)[-1]
    straight = paragraph.count('"') % 2 == 1
    return straight or paragraph.count("“") > paragraph.count("”")


Met = tuple[Book, str | None, tuple[int, int, str]]  # a mention's volume, chapter title, sentence
Texts = Sequence[tuple[int, str]]  # a volume's text read: (start, text) of each span


def _told(offsets: Sequence[int], met_at: Callable[[int], Met]) -> Met:
    """Of the mentions at ``offsets`` (read in order by ``met_at``, until one is found), the first
    in a sentence of the story (``is_prose``), else the very first: where the reader met them."""
    mentions = map(met_at, offsets)
    first = next(mentions)
    if _of_story(first):
        return first
    return next((m for m in mentions if _of_story(m)), first)


def _of_story(met: Met) -> bool:
    """Is a mention's sentence one of the story's: not its chapter's heading, nor the book's
    title on its title page (an EPUB's "Frankenstein; or, the Modern Prometheus"; a PDF's runs on
    into its contents: a sentence opening with a title of ``MIN_TITLE_WORDS`` or more), nor a
    note in square brackets (``is_prose``)?"""
    volume, chapter, (_, _, sentence) = met
    title_page = opens_with(sentence, volume.title, min_words=MIN_TITLE_WORDS)
    return not title_page and is_prose(sentence, [chapter, volume.title])


def _sentence_at(
    text: str, base: int, offset: int, *, opening: bool = False
) -> tuple[int, int, str]:
    for s_start, s_end, sentence in _sentences(text, base, opening=opening):
        if s_start <= offset < s_end:
            return s_start, s_end, _cut(sentence)
    return offset, offset + 1, text[offset - base : offset - base + 1]


def reader_tools() -> Sequence[BaseTool]:
    return [RecapTool(), PeopleTool()]
