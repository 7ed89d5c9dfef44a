"""Reader tools beyond search, bounded by the reading position: the story so far (a recap per
chapter read) and the people met so far.

With a model (``services.recaps``), each chapter read to its end is recapped by the model once
and kept (``folio.agent.recaps``). Otherwise, and offline, they are extractive (offline mode
quotes them): the recap takes, from each chapter read, the sentences that carry most of the
chapter's own frequent words and names; the people are the names of the lexicon of the text read
(``folio.domain.lexicon``: people told from places, each with the other forms the text read
gives them), with how often they come up and the sentence they first appear in.

In a series, the story so far and the people met run across the earlier volumes (read in full)
and this one up to the position.

Invariant: only text inside the reading window (``ctx.window``) is read, so nothing past the
position, no unread front or back matter and no later volume is ever summarised, counted or
quoted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from folio.agent.tools.base import BaseTool, ToolCategory, ToolContext, ToolResult, ToolServices
from folio.domain.books import Book, Chapter
from folio.domain.errors import ToolErrorCode
from folio.domain.lexicon import Lexicon
from folio.domain.passages import PEOPLE, RECAP, Passage, PeopleList, Person, Recap
from folio.domain.search import STOPWORDS
from folio.domain.sentences import sentence_spans

MAX_CHAPTERS = 12  # a recap of a long reading: the latest chapters, one sentence each
SENTENCES_PER_CHAPTER = 1
SENTENCES_FOR_ONE_CHAPTER = 3
MAX_PEOPLE = 12
MIN_WORDS, MAX_WORDS = 8, 60
AROUND = 1500  # characters read on each side of a first mention to find its sentence
_WORD = re.compile(r"[A-Za-z][a-z'’]+")


def _passage(
    book: Book, chapter: str | None, start: int, end: int, text: str, *, volume: Book | None = None
) -> Passage:
    """A passage of ``book``; ``volume``: the book of the conversation, when ``book`` is an
    earlier volume of its series (the passage then names it)."""
    other = volume is not None and volume.id != book.id
    first, last = book.page_label(start), book.page_label(max(start, end - 1))
    return Passage(None, chapter, first, last, start, end, " ".join(text.split()),
                   book_id=book.id if other else None,
                   volume=book.title if other else None)  # fmt: skip


def _sentences(text: str, base: int) -> list[tuple[int, int, str]]:
    return [(base + s, base + e, text[s:e]) for s, e in sentence_spans(text)]


Read = tuple[Book, Chapter, int, int]


def _read_chapters(ctx: ToolContext) -> list[Read]:
    """The story chapters the reader has reached, each with its volume and its read
    ``[start, end)``: the earlier volumes of the series first, in order."""
    window = ctx.window
    return [(v, c, a, b) for v in window.volumes for c, a, b in window.story_read(v.id)]


def key_sentences(text: str, base: int, n: int) -> list[tuple[int, int, str]]:
    """The ``n`` sentences of ``text`` that carry most of its frequent content words, in order."""
    sentences = [s for s in _sentences(text, base) if MIN_WORDS <= len(s[2].split()) <= MAX_WORDS]
    if not sentences:
        return []
    freq = Counter(
        w for _, _, s in sentences for w in {w.lower() for w in _WORD.findall(s)}
        if w.lower() not in STOPWORDS
    )  # fmt: skip

    def weight(item: tuple[int, int, str]) -> float:
        words = {w.lower() for w in _WORD.findall(item[2])} - STOPWORDS
        return sum(math.log(freq[w]) for w in words if freq[w] > 1) / math.sqrt(len(words) or 1)

    best = sorted(sentences, key=weight, reverse=True)[:n]
    return sorted(best)


class RecapTool(BaseTool):
    name = RECAP
    description = "Recap of the story so far, by chapter, or of one chapter ('Chapter 3')."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"chapter": {"type": "string"}},
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self, ctx: ToolContext, services: ToolServices, *, chapter: str | None = None
    ) -> ToolResult:
        book = ctx.book
        read = _read_chapters(ctx)
        where = book.describe_position()
        if chapter is not None:
            wanted = {c.index for c in book.find_chapters(chapter)}
            if not wanted:
                return ToolResult.fail(f"The book has no chapter {chapter!r}.", "NOT_FOUND")
            chosen = [r for r in read if r[0].id == book.id and r[1].index in wanted]
            if not chosen:
                return ToolResult.fail(
                    f"{chapter} lies past the reader's position ({where}): it cannot be "
                    "summarised.",
                    ToolErrorCode.NOT_ALLOWED,
                )
            per, note = SENTENCES_FOR_ONE_CHAPTER, None
        else:
            chosen = read[-MAX_CHAPTERS:]
            per = SENTENCES_PER_CHAPTER
            skipped = len(read) - len(chosen)
            note = f"{skipped} earlier chapter(s) left out." if skipped else None
        generated = _generated(book, chosen, services, per)
        if generated is not None:
            recaps, partial = generated
            if partial:
                partial = f"{partial} is read only in part: quoted from the book, not recapped."
            note = " ".join(n for n in (note, partial) if n) or None
            summary = f"{len(recaps)} chapter recap(s) by a model"
            return ToolResult.ok(Recap(recaps, where, note, generated=True), summary=summary)
        passages = []
        for v, c, start, end in chosen:
            text = services.books.get_text(v.id, start, end)
            for s_start, s_end, sentence in key_sentences(text, start, per):
                passages.append(_passage(v, c.title, s_start, s_end, sentence, volume=book))
        if not read:
            note = "The reader has not reached the first chapter yet."
        data = Recap(tuple(passages), where, note)
        return ToolResult.ok(data, summary=f"{len(passages)} sentence(s), {len(chosen)} chapter(s)")


def _generated(
    book: Book, chosen: Sequence[Read], services: ToolServices, per: int
) -> tuple[tuple[Passage, ...], str | None] | None:
    """A model's recap of each chosen chapter read to its end (kept once written), and the
    title of a chapter read only in part, whose key sentences are quoted instead: a chapter
    read halfway is never sent to a model. None without a model or when it fails: the recap is
    then extractive."""
    if services.recaps is None or not chosen:
        return None
    out: list[Passage] = []
    partial = None
    for v, c, start, end in chosen:
        if end < v.chapter_end(c) or start > c.char_start:
            text = services.books.get_text(v.id, start, end)
            out += [
                _passage(v, c.title, a, b, s, volume=book)
                for a, b, s in key_sentences(text, start, per)
            ]
            partial = c.title
            continue
        recap = services.recaps.recap(v, c)
        if recap is None:
            return None
        out.append(_passage(v, c.title, start, end, recap, volume=book))
    return tuple(out), partial


class PeopleTool(BaseTool):
    name = PEOPLE
    description = (
        "People met so far, most mentioned first, each with where they first appear; with "
        "`name`: that one, and the other names the book gives them."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "additionalProperties": False,
    }
    category = ToolCategory.QUERY

    def execute(
        self, ctx: ToolContext, services: ToolServices, *, name: str | None = None
    ) -> ToolResult:
        if name is not None:
            return _one_name(ctx, services, name.strip())
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
        # built from the text read only: no alias or kind learned past the position
        for known, mentions, offset in Lexicon.of(text).people(0, len(text), MAX_PEOPLE):
            i = max(j for j, base in enumerate(bases) if base <= offset)
            volume, start, _ = pieces[i]
            sentence = _sentence_at(texts[i], start, start + offset - bases[i])
            chapter = volume.chapter_at(sentence[0])
            title = chapter.title if chapter else None
            first = _passage(volume, title, *sentence, volume=book)
            others = tuple(sorted(a for a in known.aliases if a != known.name))
            people.append(Person(known.name, mentions, first, others))
        data = PeopleList(tuple(people), book.describe_position())
        return ToolResult.ok(data, summary=f"{len(people)} people")


def _one_name(ctx: ToolContext, services: ToolServices, name: str) -> ToolResult:
    """``name`` as this book's lexicon knows it (``folio.domain.lexicon``, stored with the
    book), counted in the text read of this book only; else a full-text count of it (any case)
    over that text."""
    book, where = ctx.book, ctx.book.describe_position()
    spans = ctx.window.spans(book.id)
    lexicon = services.lexicons.get(book, services.books)
    known = lexicon.find(name) if name else None
    if known is not None:
        firsts = [f for a, b in spans if (f := known.first(a, b)) is not None]
        if firsts:
            count = sum(known.mentions(a, b) for a, b in spans)
            person = _person(ctx, services, known.name, count, min(firsts), known.aliases)
            return ToolResult.ok(PeopleList((person,), where), summary=f"1 name: {known.name}")
    words = r"\.?\s+".join(re.escape(w) for w in name.split())  # "Mrs Pendyce", "Mrs. Pendyce"
    pattern = re.compile(rf"\b{words}\b", re.IGNORECASE)
    found = [
        a + m.start()
        for a, b in (spans if name else ())
        for m in pattern.finditer(services.books.get_text(book.id, a, b))
    ]
    if not found:
        note = f"Nothing read so far ({where}) mentions {name}."
        return ToolResult.ok(PeopleList((), where, note), summary="0 names")
    person = _person(ctx, services, name, len(found), found[0], frozenset())
    return ToolResult.ok(PeopleList((person,), where), summary=f"1 name: {name}")


def _person(
    ctx: ToolContext,
    services: ToolServices,
    name: str,
    mentions: int,
    offset: int,
    aliases: frozenset[str],
) -> Person:
    """``name`` with the sentence it is first met in (text read only)."""
    book = ctx.book
    span = next((a, b) for a, b in ctx.window.spans(book.id) if a <= offset < b)
    lo, hi = max(span[0], offset - AROUND), min(span[1], offset + AROUND)
    text = services.books.get_text(book.id, lo, hi)
    chapter = book.chapter_at(offset)
    title = chapter.title if chapter else None
    others = tuple(sorted(a for a in aliases if a != name))
    return Person(name, mentions, _passage(book, title, *_sentence_at(text, lo, offset)), others)


def _sentence_at(text: str, base: int, offset: int) -> tuple[int, int, str]:
    for s_start, s_end, sentence in _sentences(text, base):
        if s_start <= offset < s_end:
            words = sentence.split()
            short = sentence if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS]) + " …"
            return s_start, s_end, short
    return offset, offset + 1, text[offset - base : offset - base + 1]


def reader_tools() -> Sequence[BaseTool]:
    return [RecapTool(), PeopleTool()]
