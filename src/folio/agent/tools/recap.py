"""The story so far, bounded by the reading position: a recap of every chapter read.

With a model (``services.recaps``), each of the latest chapters read to its end is recapped by the
model once and kept (``folio.agent.recaps``). Otherwise, and offline, the recap is extractive
(offline mode quotes it): each chapter read gives its most central sentences (LexRank,
``folio.domain.summary``: narration, not dialogue, questions or fragments), ranked once at import
and kept with the book (``services.summaries``); the chapter being read is ranked from its read
part. A chapter that gives several sentences leads with its opening (where it sets its scene,
``folio.domain.summary.opening``), then its most central ones. The longer the reading, the fewer
sentences per chapter (a few long chapters, as four stories of a collection, give up to the six
each keeps at import), so that the recap stays within ``MAX_SENTENCES``: every chapter keeps one,
and past that many chapters, the first chapter keeps its best and each run of neighbouring
chapters after it (``MAX_SENTENCES - 1`` runs, as even as can be) gives its most central sentence.

In a series, the story so far runs across the earlier volumes (read in full) and this one up to
the position.

Invariant: only text inside the reading window (``ctx.window``) is read, so nothing past the
position, no unread front or back matter and no later volume is ever summarised or quoted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from folio.agent.tools.base import (
    BaseTool,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolServices,
    passage_of,
)
from folio.domain.books import Book, Chapter
from folio.domain.chapter_labels import parse_reference
from folio.domain.errors import ToolErrorCode
from folio.domain.passages import RECAP, Passage, Recap
from folio.domain.summary import KEEP, Ranked, opening

MAX_CHAPTERS = 12  # a model recaps the latest chapters only (a model call per chapter, once)
MAX_SENTENCES = 24  # the extractive story so far, however long the reading
MOST_PER_CHAPTER = KEEP  # a few long chapters read tell more each: what each keeps at import
SENTENCES_FOR_ONE_CHAPTER = 4

Read = tuple[Book, Chapter, int, int]


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
            # "part 2": every chapter of it, not only its last (where a position ends)
            found = book.find_chapters(chapter, whole=True)
            major = parse_reference(chapter).major
            wanted = {c.index for c in found}
            mine = [r for r in read if r[0].id == book.id]
            if not found:
                return ToolResult.fail(_none_such(book, chapter, mine), ToolErrorCode.NOT_FOUND)
            read = [r for r in mine if r[1].index in wanted]
            # several read ("chapter 2" of a book in parts, each part's read; Emma's "chapter
            # 10", read in its first volume only, is that one): asked back, naming only those
            if len(read) > 1 and not major:
                which = _which(book, chapter, [r[1] for r in read])
                return ToolResult.fail(which, ToolErrorCode.AMBIGUOUS)
            if not read:
                return ToolResult.fail(
                    f"{chapter} lies past the reader's position ({where}): it cannot be "
                    "summarised.",
                    ToolErrorCode.NOT_ALLOWED,
                )
        if services.recaps is not None and read:
            generated = _by_model(book, read, services, one=chapter is not None)
            if generated is not None:
                return generated
        if not read:
            first = "The reader has not reached the first chapter yet."
            return ToolResult.ok(Recap((), where, first), summary="0 sentence(s), 0 chapter(s)")
        budget = SENTENCES_FOR_ONE_CHAPTER if chapter is not None else MAX_SENTENCES
        passages, note = _extractive(book, read, services, budget)
        data = Recap(tuple(passages), where, note)
        return ToolResult.ok(data, summary=f"{len(passages)} sentence(s), {len(read)} chapter(s)")


def _none_such(book: Book, chapter: str, read: Sequence[Read]) -> str:
    """No chapter of ``book`` is what the reader named: said with the chapters they have read."""
    told = f"{book.name!r} has no chapter {chapter!r}"
    if not read:
        return f"{told}."
    first, last = read[0][1].title, read[-1][1].title
    return f"{told}: the chapters you have read run from {first} to {last}."


def _which(book: Book, chapter: str, chapters: list[Chapter]) -> str:
    """Several chapters read are what the reader named ("chapter 2" of a book in parts)."""
    names = "; ".join(f"{c.title} (p. {book.page_label(c.char_start)})" for c in chapters)
    example = book.reference_example(chapters)
    how = f", or with its part ({example!r})" if example else ""
    return (
        f"{chapter!r} matches several chapters you have read: {names}. Name the one you mean "
        f"by more of its title{how}."
    )


def _read_chapters(ctx: ToolContext) -> list[Read]:
    """The story chapters the reader has reached, each with its volume and its read
    ``[start, end)``: the earlier volumes of the series first, in order."""
    window = ctx.window
    return [(v, c, a, b) for v in window.volumes for c, a, b in window.story_read(v.id)]


def _ranked(read: Sequence[Read], services: ToolServices) -> list[list[Ranked]]:
    """Each chapter read's best sentences inside its read part, volume by volume."""
    out: list[list[Ranked]] = []
    i = 0
    while i < len(read):
        volume = read[i][0]
        j = i
        while j < len(read) and read[j][0].id == volume.id:
            j += 1
        reads = [(c, a, b) for _, c, a, b in read[i:j]]
        out += services.summaries.ranked(volume, reads, services.books)
        i = j
    return out


def per_chapter(chapters: int, budget: int) -> int:
    """Sentences each chapter gives when there are no more chapters than ``budget``."""
    return budget if chapters == 1 else max(1, min(MOST_PER_CHAPTER, budget // max(1, chapters)))


def choose(
    ranked: Sequence[Sequence[Ranked]],
    budget: int,
    openings: Sequence[Ranked | None] = (),
) -> list[tuple[int, Ranked]]:
    """``(chapter, sentence)`` pairs to quote, in reading order: each chapter's best
    ``budget // chapters`` (1 to ``MOST_PER_CHAPTER``, all of them for one chapter), the first
    of them its opening (``openings``, by chapter) when it gives more than one; with more
    chapters than ``budget``, the first chapter's best, then the best sentence of each run of
    neighbouring chapters."""
    n = len(ranked)
    if n == 0:
        return []
    if n <= budget:
        per = per_chapter(n, budget)
        picked = []
        for i, rs in enumerate(ranked):
            lead = openings[i] if per > 1 and i < len(openings) else None
            if lead is None:
                picked += [(i, r) for r in rs[:per]]
                continue
            rest = [r for r in rs if (r.start, r.end) != (lead.start, lead.end)]
            picked += [(i, lead), *((i, r) for r in rest[: per - 1])]
    else:
        picked = [(0, ranked[0][0])] if ranked[0] else []
        for run in runs(n, budget):
            firsts = [(i, ranked[i][0]) for i in run if ranked[i]]
            if firsts:
                picked.append(max(firsts, key=lambda p: (p[1].weight, -p[0])))
    return sorted(picked, key=lambda p: (p[0], p[1].start))


def runs(chapters: int, budget: int) -> list[range]:
    """The runs of neighbouring chapters that give one sentence each, the first chapter apart:
    the other chapters cut into ``budget - 1`` runs as even as can be (25 chapters: 23 runs of
    one or two, so that the recap tells 24 sentences, not 13)."""
    count = max(1, min(budget - 1, chapters - 1))
    size, extra = divmod(chapters - 1, count)
    out, start = [], 1
    for k in range(count):
        end = start + size + (1 if k < extra else 0)
        out.append(range(start, end))
        start = end
    return out


def _extractive(
    book: Book, read: Sequence[Read], services: ToolServices, budget: int
) -> tuple[list[Passage], str | None]:
    ranked = _ranked(read, services)
    texts: dict[int, str] = {}

    def text_of(i: int) -> str:  # each chapter read once, for its opening and its sentences
        if i not in texts:
            volume, _, start, end = read[i]
            texts[i] = services.books.get_text(volume.id, start, end)
        return texts[i]

    openings: list[Ranked | None] = []
    if len(read) <= budget and per_chapter(len(read), budget) > 1:
        for i, (_, _, start, _) in enumerate(read):  # opening() splits its first lines only
            at = opening(text_of(i), 0, len(text_of(i)))
            openings.append(None if at is None else Ranked(at.start + start, at.end + start, 0.0))
    picked = choose(ranked, budget, openings)
    passages = []
    for i, r in picked:
        volume, chapter, start, _ = read[i]
        text = text_of(i)[r.start - start : r.end - start]
        passages.append(passage_of(volume, chapter.title, r.start, r.end, text, volume=book))
    note = None
    if len(read) > budget:
        sizes = sorted({len(r) for r in runs(len(read), budget)})
        every = " or ".join(str(k) for k in sizes)
        note = f"{len(read)} chapters read: one sentence for every {every} chapters."
    return passages, note


def _by_model(
    book: Book, read: Sequence[Read], services: ToolServices, *, one: bool
) -> ToolResult | None:
    """A model's recap of each of the latest chapters read to its end (kept once written); a
    chapter read only in part is quoted instead (its best sentences of the read part): a chapter
    read halfway is never sent to a model. None when the model fails: the recap is then
    extractive."""
    assert services.recaps is not None
    chosen = read if one else read[-MAX_CHAPTERS:]
    skipped = len(read) - len(chosen)
    per = SENTENCES_FOR_ONE_CHAPTER if one else 1
    out: list[Passage] = []
    partial = None
    for v, c, start, end in chosen:
        if end < v.chapter_end(c) or start > c.char_start:
            [ranked] = services.summaries.ranked(v, [(c, start, end)], services.books)
            for r in sorted(ranked[:per], key=lambda r: r.start):
                text = services.books.get_text(v.id, r.start, r.end)
                out.append(passage_of(v, c.title, r.start, r.end, text, volume=book))
            partial = c.title
            continue
        recap = services.recaps.recap(v, c)
        if recap is None:
            return None
        out.append(passage_of(v, c.title, start, end, recap, volume=book))
    notes = [f"{skipped} earlier chapter(s) left out." if skipped else None]
    if partial:
        notes.append(f"{partial} is read only in part: quoted from the book, not recapped.")
    note = " ".join(n for n in notes if n) or None
    data = Recap(tuple(out), book.describe_position(), note, generated=True)
    return ToolResult.ok(data, summary=f"{len(out)} chapter recap(s) by a model")
