"""A reading position carried from one edition of a book's text to the next (its file changed in
Calibre, say: a corrected edition, another format).

Invariant: the carried position never shows more of the story than the reader had read, except
what a new edition added inside the chapters they had finished. It is placed, in this order:
through the chapter of the same title (a position set as "through Chapter 5"); right after the
text that came just before it in the old edition, found once in the new one; at the start of the
chapter of the same title that held it; else at the start of the page at the same fraction of
the book. The last two can only move the reader back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from folio.domain.books import Book, Chapter, PositionKind, ReadingPosition

ANCHOR_CHARS = (400, 160, 60)  # the text before the position looked for, longest first


class Carried(StrEnum):
    UNCHANGED = "unchanged"  # no limit, or nothing read yet
    CHAPTER = "chapter"  # through the chapter of the same title
    TEXT = "text"  # right after the same text
    CHAPTER_START = "chapter start"  # back to the start of the chapter it was in
    FRACTION = "fraction"  # back to the start of the page at the same fraction


@dataclass(frozen=True, slots=True)
class CarriedPosition:
    position: ReadingPosition
    how: Carried


def carry_position(old: Book, old_text: str, new: Book, new_text: str) -> CarriedPosition:
    """``old``'s reading position placed in ``new``, the same book's new edition (see the module
    docstring); what the reader set (chapter, page, percentage), the front-matter choice and a
    device's source are kept."""
    pos = old.position
    offset = pos.char_offset
    if offset is None or offset <= 0:
        return CarriedPosition(pos, Carried.UNCHANGED)
    if pos.kind is PositionKind.PERCENT and offset >= len(old_text):
        return CarriedPosition(replace(pos, char_offset=len(new_text)), Carried.UNCHANGED)
    if pos.kind is PositionKind.CHAPTER and (same := _same_chapter(old, offset, new)) is not None:
        return CarriedPosition(_restated(pos, new, new.chapter_end(same)), Carried.CHAPTER)
    found = _after_same_text(old_text, offset, new_text)
    if found is not None:
        return CarriedPosition(_restated(pos, new, found), Carried.TEXT)
    same = _same_chapter(old, offset, new)
    if same is not None:
        return CarriedPosition(_restated(pos, new, same.char_start), Carried.CHAPTER_START)
    guess = min(len(new_text), offset * len(new_text) // max(1, len(old_text)))
    start = new.page_at(guess).char_start if new.pages else guess
    return CarriedPosition(_restated(pos, new, start), Carried.FRACTION)


def _same_chapter(old: Book, offset: int, new: Book) -> Chapter | None:
    """The one chapter of ``new`` titled as the chapter of ``old`` holding the last character
    read."""
    chapter = old.chapter_at(offset - 1)
    if chapter is None:
        return None
    wanted = " ".join(chapter.title.split()).casefold()
    found = [c for c in new.chapters if " ".join(c.title.split()).casefold() == wanted]
    return found[0] if len(found) == 1 else None


def _after_same_text(old_text: str, offset: int, new_text: str) -> int | None:
    """Where the text just before ``offset`` ends in ``new_text``, when it is found there once."""
    for size in ANCHOR_CHARS:
        anchor = old_text[max(0, offset - size) : offset]
        if len(anchor.strip()) < min(size, 20):
            continue
        at = new_text.find(anchor)
        if at < 0:
            continue
        if new_text.find(anchor, at + 1) >= 0:
            return None  # the text repeats: no telling which one the reader reached
        return at + len(anchor)
    return None


def _restated(pos: ReadingPosition, new: Book, offset: int) -> ReadingPosition:
    """``pos`` at ``offset`` of ``new``, still in the reader's terms where they still fit."""
    if pos.kind is PositionKind.CHAPTER:
        chapter = new.chapter_at(offset - 1) if offset > 0 else None
        if chapter is not None and new.chapter_end(chapter) == offset:
            return replace(pos, char_offset=offset, value=float(chapter.index))
    elif pos.kind is PositionKind.PAGE and new.pages and offset > 0:
        return replace(pos, char_offset=offset, value=float(new.page_at(offset - 1).number))
    percent = round(100 * offset / max(1, new.char_count), 2)
    return replace(pos, char_offset=offset, kind=PositionKind.PERCENT, value=percent)
