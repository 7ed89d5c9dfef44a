"""Prompt building: templates shipped as package files, composed by a small immutable builder.

Templates live in ``folio/agent/prompts/*.md`` and are read with ``importlib.resources`` (so they
work from a wheel or a zip). Placeholders are ``$name`` (``string.Template``); a missing value is an
error, never a silently empty hole in a prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from string import Template

from folio.domain.books import Book, PositionKind
from folio.domain.passages import Passage

SYSTEM_PROMPT = "conversation_system_prompt.md"


@lru_cache(maxsize=16)
def load_template(name: str) -> str:
    """The text of ``prompts/<name>``."""
    return (resources.files("folio.agent") / "prompts" / name).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class PromptBuilder:
    """``PromptBuilder(base).with_passages(...).with_question(q).build()``; each ``with_*``
    returns a new builder, so a partly built prompt can be shared."""

    base: str = ""
    parts: tuple[str, ...] = ()

    @classmethod
    def from_template(cls, name: str, **values: str) -> PromptBuilder:
        """Start from template ``name`` with its ``$placeholders`` filled (KeyError if one is
        missing)."""
        return cls(Template(load_template(name)).substitute(values).strip())

    def with_section(self, heading: str, body: str) -> PromptBuilder:
        return self._add(f"{heading}:\n{body.strip()}" if body.strip() else "")

    def with_passages(self, passages: Sequence[Passage]) -> PromptBuilder:
        """Passages as ``search_book`` returns them (what a model is sent of each: its
        ``sent_text``, as the stored tool result holds it), each under its place in the book."""
        if not passages:
            return self.with_note("The search found no passage before the reader's position.")
        blocks = [f"[{i}] {p.location}\n{p.sent_text.strip()}" for i, p in enumerate(passages, 1)]
        return self.with_section("Passages from the book", "\n\n".join(blocks))

    def with_question(self, question: str, *, label: str = "Question") -> PromptBuilder:
        return self._add(f"{label}: {question.strip()}")

    def with_note(self, note: str) -> PromptBuilder:
        return self._add(f"Note: {note.strip()}")

    def build(self) -> str:
        return "\n\n".join(part for part in (self.base, *self.parts) if part)

    def _add(self, part: str) -> PromptBuilder:
        return PromptBuilder(self.base, (*self.parts, part)) if part else self


def conversation_system_prompt(book: Book, earlier: Sequence[Book] = ()) -> str:
    """The system prompt of a conversation about ``book`` at its reading position: the last
    chapter read is named by its own title, and everything after it is declared unread (never a
    bare index the model could read as a different chapter). ``earlier``: the volumes of its
    series before it (the reading window's), read in full and searched too."""
    author = f" by {book.author}" if book.author else ""
    return PromptBuilder.from_template(
        SYSTEM_PROMPT,
        title=book.title,
        author_line=author,
        reading_position=reading_position_rule(book) + series_rule(book, earlier),
        limit=position_limit(book),
    ).build()


def series_rule(book: Book, earlier: Sequence[Book]) -> str:
    """The prompt's sentence about the earlier volumes of the series ("" outside a series)."""
    if not earlier:
        return ""
    titles = "; ".join(f'"{b.title}"' for b in earlier)
    return (
        f" It is a volume of {book.series}: the reader has read the earlier volumes ({titles}) in"
        " full, and search_book searches them too (their passages name the volume). No later"
        " volume exists for you."
    )


def reading_position_rule(book: Book) -> str:
    """The prompt's sentence about how far the reader is."""
    if book.position.is_unlimited:
        return "The reader has finished the book: they may ask about all of it."
    chapter = book.position_chapter
    where = book.describe_position()
    if chapter is None:
        return (
            f"The reader is at {where}. Everything in the book is unread: treat all of it as "
            "unknown to them."
        )
    return (
        f'The reader has read {where}. The last chapter they have read is "{chapter.title}"; '
        f'everything after the end of "{chapter.title}" is unread and unknown to them.'
    )


def position_limit(book: Book) -> str:
    """What the prompt's rules call the limit: "the end of "Chapter 5"", "the end of the book"."""
    if book.position.is_unlimited:
        return "the end of the book"
    chapter = book.position_chapter
    if chapter is None:
        return "the beginning of the book"
    if book.position.kind is PositionKind.CHAPTER:
        return f'the end of "{chapter.title}"'
    return f'where they stopped, in "{chapter.title}"'  # the prompt has just said where that is
