"""What the book tools return, as typed values, and their ONE JSON codec.

A ``Passage`` is a piece of the book a tool handed to the model: where it is (chunk, chapter, pages,
character offsets) and its text. The tool results (``SearchResults``, ``PassageText``,
``ChapterList``) stay typed from the tool to the citation; they become JSON only where they cross
to a model or to storage (``encode_payload``), and come back through ``decode_payload``. Nothing
else in folio reads or writes a tool result's JSON.

The JSON shape is the one models have always seen (``{"query", "reading_limit", "results": [...]}``
for a search, ``{"pages", "chapter", "text", ...}`` for a read, ``{"chapters": [...]}`` for the
table of contents), so stored conversations decode unchanged. A passage's ``text`` there is what
the model was sent of it (``Passage.sent_text``: the whole text, or the parts a model's search
showed of it), so a stored tool result is what the model read.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from folio.domain.books import Book, cite_location

SEARCH_BOOK = "search_book"
READ_PASSAGE = "read_passage"
LIST_CHAPTERS = "list_chapters"
RECAP = "recap_story"
PEOPLE = "people_so_far"
SEARCH_HIGHLIGHTS = "search_highlights"


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of the book: ``chunk_id`` is None for text read by page range. ``book_id`` and
    ``volume`` (its title) name the earlier volume of the series it comes from (None: the
    conversation's own book). ``breaks``: each page it runs over, as (the first offset of the
    passage on it, its label), from its own volume's page table (empty: not known; a part of it
    is then on all its pages). They never go to a model: ``place`` uses them, so that an
    answer's quote and its citation name the same page. ``shown``: the parts of its text a model
    is sent, as offsets in the book, in order (None: all of it; ``folio.agent.excerpts``); its
    place stays the whole passage's."""

    chunk_id: str | None
    chapter: str | None
    page_start: str  # page labels as the reader sees them
    page_end: str
    char_start: int
    char_end: int
    text: str
    score: float = 0.0
    book_id: str | None = None
    volume: str | None = None
    breaks: tuple[tuple[int, str], ...] = ()
    shown: tuple[tuple[int, int], ...] | None = None
    # the chapters it runs into after its first, as (where each begins, its title): a passage
    # across a chapter's end names the next one where its quote lies ("Chapter 3, p. 34"), and
    # the next one's heading line is not a sentence of the story (``sentences.is_prose``)
    chapters: tuple[tuple[int, str], ...] = ()

    @property
    def pages(self) -> str:
        a, b = self.page_start, self.page_end
        return a if a == b else f"{a}-{b}"

    @property
    def location(self) -> str:
        """ "Chapter 5, p. 41" / "pp. 41-42" / "The Two Towers, Chapter 5, p. 41"."""
        return cite_location(self.chapter, self.page_start, self.page_end, volume=self.volume)

    @property
    def headings(self) -> tuple[str, ...]:
        """The titles of the chapters it runs over."""
        return tuple(t for t in (self.chapter, *(t for _, t in self.chapters)) if t)

    @property
    def key(self) -> tuple[str | None, str | None, int, int]:
        """Identity of the text: the same chunk cut the same way is the same passage."""
        return (self.book_id, self.chunk_id, self.char_start, self.char_end)

    @property
    def is_slice(self) -> bool:
        """Its text is the book's own characters ``[char_start, char_end)`` (offsets map)."""
        return len(self.text) == self.char_end - self.char_start

    @property
    def sent_text(self) -> str:
        """Its text as a model is sent it: the ``shown`` parts in order, each on one line of
        words, "…" where text is left out; the whole text when nothing was cut (or when its text
        is not the book's own slice, which offsets cannot cut)."""
        if self.shown is None or not self.is_slice:
            return self.text
        pieces: list[str] = []
        at = self.char_start
        for start, end in self.shown:
            if self._slice(at, start).strip():
                pieces.append("…")
            pieces.append(" ".join(self._slice(start, end).split()))
            at = end
        if self._slice(at, self.char_end).strip() or not pieces:
            pieces.append("…")
        return " ".join(pieces)

    def _slice(self, start: int, end: int) -> str:
        return self.text[max(0, start - self.char_start) : max(0, end - self.char_start)]

    def span_of(self, quote: str) -> tuple[int, int] | None:
        """Where ``quote`` lies in the book (any white space, any case), when this passage holds
        it and its text is the book's own slice; None otherwise."""
        words = quote.split()
        if not words or not self.is_slice:
            return None
        found = re.search(r"\s+".join(map(re.escape, words)), self.text, re.IGNORECASE)
        if found is None:
            return None
        return self.char_start + found.start(), self.char_start + found.end()

    def page_of(self, offset: int) -> str:
        """The label of the page holding ``offset`` (one of the passage's own characters)."""
        label = self.page_start
        for start, name in self.breaks:
            if start > offset:
                break
            label = name
        return label

    def page_spans(self) -> tuple[tuple[int, int, str], ...]:
        """Each page the passage runs over, as its ``[start, end)`` in the book and its label
        (none when its pages are not known to the character)."""
        ends = [o for o, _ in self.breaks[1:]] + [self.char_end]
        return tuple((o, end, name) for (o, name), end in zip(self.breaks, ends, strict=False))

    def place(self, start: int, end: int) -> Passage:
        """The part ``[start, end)`` of this passage, on its own pages: what a quote of it
        cites, in the answer and in its citation alike."""
        start, end = max(start, self.char_start), min(max(start + 1, end), self.char_end)
        first, last = self.page_start, self.page_end
        if self.breaks:
            first, last = self.page_of(start), self.page_of(end - 1)
        spans = self.page_spans()
        breaks = tuple((max(a, start), name) for a, b, name in spans if a < end and b > start)
        text = self.text[start - self.char_start : end - self.char_start] if self.is_slice else ""
        shown = self.shown
        if shown is not None:  # what was shown of this part
            shown = tuple((max(a, start), min(b, end)) for a, b in shown if a < end and b > start)
        chapter = next((t for at, t in reversed(self.chapters) if at <= start), self.chapter)
        return replace(
            self,
            chapter=chapter,
            char_start=start,
            char_end=end,
            page_start=first,
            page_end=last,
            text=text or self.text,
            breaks=breaks,
            shown=shown,
            chapters=tuple((at, t) for at, t in self.chapters if start < at < end),
        )


def page_breaks(book: Book, start: int, end: int) -> tuple[tuple[int, str], ...]:
    """The pages of ``book`` that ``[start, end)`` runs over: (the first offset of each in the
    range, its label), for ``Passage.breaks``."""
    if not book.pages or end <= start:
        return ()
    i = max(0, bisect.bisect_right([p.char_start for p in book.pages], start) - 1)
    out: list[tuple[int, str]] = []
    while i < len(book.pages) and (not out or book.pages[i].char_start < end):
        out.append((max(book.pages[i].char_start, start), book.pages[i].label))
        i += 1
    return tuple(out)


def chapter_breaks(book: Book, start: int, end: int) -> tuple[tuple[int, str], ...]:
    """The chapters of ``book`` that begin inside ``(start, end)``: (where, title), for
    ``Passage.chapters``."""
    return tuple((c.char_start, c.title) for c in book.chapters if start < c.char_start < end)


@dataclass(frozen=True, slots=True)
class SearchResults:
    """What ``search_book`` returned: the query, the reading limit searched up to, the passages."""

    query: str
    reading_limit: str
    passages: tuple[Passage, ...] = ()
    note: str | None = None


# passages by the query that found them, in the order a turn used them
FoundBy = tuple[tuple[str, tuple[Passage, ...]], ...]


@dataclass(frozen=True, slots=True)
class PassageText:
    """What ``read_passage`` returned: text around a passage or a page range."""

    passage: Passage
    reading_limit: str
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ChapterEntry:
    index: int
    title: str
    page: str


@dataclass(frozen=True, slots=True)
class ChapterList:
    """What ``list_chapters`` returned: the chapters the reader has reached."""

    chapters: tuple[ChapterEntry, ...]
    reading_limit: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Recap:
    """What ``recap_story`` returned: the key sentences of each chapter read, in reading order
    (one passage per chapter, or several for one chapter asked about). ``generated``: the
    passages' text is a model's recap of each whole chapter (spanning it), not the book's words."""

    passages: tuple[Passage, ...]
    reading_limit: str
    note: str | None = None
    generated: bool = False


@dataclass(frozen=True, slots=True)
class Person:
    """Someone met so far: how often they come up, and the sentence they first appear in."""

    name: str
    mentions: int
    first: Passage
    aliases: tuple[str, ...] = ()  # the other forms the book uses for them ("Lizzy", "Darcy")
    # the share of the text read that mentions them (passage-lengths holding a mention, of those
    # read; 0 when not counted): a protagonist's is high, so a passage naming them says little
    share: float = 0.0
    # the first sentence naming them that the story tells in its own voice, not inside someone's
    # speech, when that is not ``first`` (one-name lookups): where the book may introduce them
    told: Passage | None = None
    # a place or a thing, as the book uses the name (one-name lookups: "Netherfield", "Hartfield")
    place: bool = False
    # they tell the story read: its narration calls them "I", only others' speech names them
    # (one-name lookups: Frankenstein's Victor, "My dear Victor," cried he)
    narrates: bool = False
    # the first sentence of the story's own voice about them that says who they are ("Stubb was
    # the second mate.", "Mrs. Jennings, Lady Middleton's mother, was ..."; one-name lookups)
    described: Passage | None = None


@dataclass(frozen=True, slots=True)
class PeopleList:
    """What ``people_so_far`` returned: the people met up to the position, most mentioned first."""

    people: tuple[Person, ...]
    reading_limit: str
    note: str | None = None
    # the name asked for, when no name read is written so and the list holds the nearest one
    # instead (a misspelling: "Mr Knightly" for "Mr Knightley")
    misspelt: str | None = None
    # of the list of everyone: the share of the words of a sample of the narration read (its
    # speeches left out) that are "I", "me", "my", "myself" (a story told in the third person
    # says them hardly ever: Austen's under 0.3%; Frankenstein's narration 6-7%)
    first_person: float | None = None


ToolPayload = SearchResults | PassageText | ChapterList | Recap | PeopleList


def passages_in(payload: object) -> tuple[Passage, ...]:
    """The passages a tool result carries (none for a chapter list or an untyped result)."""
    if isinstance(payload, SearchResults):
        return payload.passages
    if isinstance(payload, PassageText):
        return (payload.passage,)
    if isinstance(payload, Recap):
        return payload.passages
    if isinstance(payload, PeopleList):  # where each is first met, first told of, described
        every = ((p.first, p.told, p.described) for p in payload.people)
        return tuple(q for held in every for q in held if q is not None)
    return ()


# --- the codec -----------------------------------------------------------------------------------
def _passage_json(p: Passage, *, brief: bool = False) -> dict[str, Any]:
    volume = {"volume": p.volume, "book_id": p.book_id} if p.book_id else {}
    if brief:
        return {**volume, "chapter": p.chapter, "pages": p.pages, "text": p.sent_text}
    out: dict[str, Any] = {
        **volume,
        "chunk_id": p.chunk_id,
        "chapter": p.chapter,
        "pages": p.pages,
        "page_start": p.page_start,
        "page_end": p.page_end,
        "char_start": p.char_start,
        "char_end": p.char_end,
        "score": round(p.score, 4),
        "text": p.sent_text,
    }
    if p.chunk_id is None:
        del out["chunk_id"], out["score"]
    return out


def encode_payload(payload: ToolPayload | Any, *, brief: bool = False) -> Any:
    """A tool result as JSON-ready data (untyped data passes through as it is). ``brief``: only
    what a later turn needs to read an earlier one (the query, and each passage's chapter, pages
    and text), as the conversation window sends it."""
    if isinstance(payload, SearchResults):
        if brief:
            return {
                "query": payload.query,
                "results": [_passage_json(p, brief=True) for p in payload.passages],
            }
        out: dict[str, Any] = {
            "query": payload.query,
            "reading_limit": payload.reading_limit,
            "results": [_passage_json(p) for p in payload.passages],
        }
        if payload.note:
            out["note"] = payload.note
        return out
    if isinstance(payload, PassageText):
        body = _passage_json(payload.passage, brief=brief)
        if brief:
            return body
        return {
            **body,
            "reading_limit": payload.reading_limit,
            "truncated": payload.truncated,
        }
    if isinstance(payload, Recap):
        out = {
            "recap": [_passage_json(p, brief=brief) for p in payload.passages],
            "reading_limit": payload.reading_limit,
        }
        if payload.note:
            out["note"] = payload.note
        if payload.generated:
            out["generated"] = True
        return out
    if isinstance(payload, PeopleList):
        out = {
            "people": [
                {
                    "name": p.name,
                    "mentions": p.mentions,
                    "first": _passage_json(p.first, brief=brief),
                    **({"aliases": list(p.aliases)} if p.aliases else {}),
                    **({"share": round(p.share, 2)} if p.share else {}),
                    **({"told": _passage_json(p.told, brief=brief)} if p.told else {}),
                    **({"place": True} if p.place else {}),
                    **({"narrates": True} if p.narrates else {}),
                    **(
                        {"described": _passage_json(p.described, brief=brief)}
                        if p.described
                        else {}
                    ),
                }
                for p in payload.people
            ],
            "reading_limit": payload.reading_limit,
        }
        if payload.note:
            out["note"] = payload.note
        if payload.misspelt:
            out["misspelt"] = payload.misspelt
        if payload.first_person is not None:
            out["first_person"] = round(payload.first_person, 4)
        return out
    if isinstance(payload, ChapterList):
        out = {
            "chapters": [
                {"index": c.index, "title": c.title, "page": c.page} for c in payload.chapters
            ],
            "reading_limit": payload.reading_limit,
        }
        if payload.note:
            out["note"] = payload.note
        return out
    return payload


def _str(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def decode_passage(item: Mapping[str, Any]) -> Passage | None:
    """A passage from its JSON form (older or shortened forms tolerated); None without text."""
    text = item.get("text")
    if not isinstance(text, str):
        return None
    pages = _str(item.get("pages"))
    first = _str(item.get("page_start"), pages.split("-")[0] if pages else "?")
    last = _str(item.get("page_end"), pages.split("-")[-1] if pages else first)
    chunk_id = item.get("chunk_id")
    chapter = item.get("chapter")
    book_id, volume = item.get("book_id"), item.get("volume")
    return Passage(
        book_id=str(book_id) if book_id else None,
        volume=str(volume) if volume else None,
        chunk_id=str(chunk_id) if chunk_id else None,
        chapter=str(chapter) if chapter else None,
        page_start=first,
        page_end=last,
        char_start=_int(item.get("char_start")),
        char_end=_int(item.get("char_end")),
        text=text,
        score=_float(item.get("score")),
    )


def decode_payload(data: Any) -> ToolPayload | None:
    """A tool result's typed value from its JSON data; None when it is not one of the book tools'
    results."""
    if not isinstance(data, Mapping):
        return None
    limit = _str(data.get("reading_limit"))
    note = data.get("note")
    if isinstance(data.get("recap"), list):
        recap = (decode_passage(r) for r in data["recap"] if isinstance(r, Mapping))
        return Recap(
            tuple(p for p in recap if p is not None),
            limit,
            str(note) if note else None,
            generated=data.get("generated") is True,
        )
    if isinstance(data.get("people"), list):
        people = []
        for entry in data["people"]:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("first"), Mapping):
                continue
            first = decode_passage(entry["first"])
            aliases = entry.get("aliases")
            forms = tuple(str(a) for a in aliases) if isinstance(aliases, list) else ()
            if first is not None:
                name, mentions = _str(entry.get("name")), _int(entry.get("mentions"))
                share = min(1.0, max(0.0, _float(entry.get("share"))))
                told = entry.get("told")
                told = decode_passage(told) if isinstance(told, Mapping) else None
                place, narrates = entry.get("place") is True, entry.get("narrates") is True
                described = entry.get("described")
                described = decode_passage(described) if isinstance(described, Mapping) else None
                people.append(
                    Person(name, mentions, first, forms, share, told, place, narrates, described)
                )
        misspelt, voice = data.get("misspelt"), data.get("first_person")
        return PeopleList(
            tuple(people),
            limit,
            str(note) if note else None,
            str(misspelt) if misspelt else None,
            min(1.0, max(0.0, _float(voice))) if isinstance(voice, int | float) else None,
        )
    if isinstance(data.get("results"), list):
        passages = (decode_passage(r) for r in data["results"] if isinstance(r, Mapping))
        return SearchResults(
            query=_str(data.get("query")),
            reading_limit=limit,
            passages=tuple(p for p in passages if p is not None),
            note=str(note) if note else None,
        )
    if isinstance(data.get("chapters"), list):
        chapters = tuple(
            ChapterEntry(_int(c.get("index")), _str(c.get("title")), _str(c.get("page")))
            for c in data["chapters"]
            if isinstance(c, Mapping)
        )
        return ChapterList(chapters, limit, str(note) if note else None)
    passage = decode_passage(data)
    if passage is not None:
        return PassageText(passage, limit, bool(data.get("truncated", False)))
    return None


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool result as the model receives it: success, the typed payload (or untyped data of a
    tool folio does not know), and the error message and code of a failure."""

    success: bool
    payload: ToolPayload | None = None
    data: Any = None
    error: str | None = None
    error_code: str | None = None

    def envelope(self, *, brief: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"success": self.success}
        if self.success:
            out["data"] = (
                encode_payload(self.payload, brief=brief) if self.payload is not None else self.data
            )
        if self.error is not None:
            out["error"] = self.error
        if not self.success:
            out["error_code"] = self.error_code
        return out

    def to_json(self, *, brief: bool = False) -> str:
        # compact: a model reads every byte of it, turn after turn
        return json.dumps(
            self.envelope(brief=brief), ensure_ascii=False, default=str, separators=(",", ":")
        )

    @property
    def passages(self) -> tuple[Passage, ...]:
        return passages_in(self.payload)


def decode_tool_result(content: str) -> ToolOutcome:
    """The tool result a model received, from its JSON text (a stored message, a transcript).
    Text that is not a tool envelope is a failed outcome saying so."""
    try:
        envelope = json.loads(content)
    except (TypeError, ValueError):
        return ToolOutcome(False, error="The tool returned something unreadable.")
    if not isinstance(envelope, Mapping):
        return ToolOutcome(False, error="The tool returned something unreadable.")
    if not envelope.get("success", False):
        error = envelope.get("error")
        code = envelope.get("error_code")
        return ToolOutcome(
            False,
            error=str(error) if error else "The tool failed.",
            error_code=str(code) if code else None,
        )
    data = envelope.get("data")
    return ToolOutcome(True, payload=decode_payload(data), data=data)
