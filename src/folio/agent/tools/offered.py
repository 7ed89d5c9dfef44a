"""Which tools a model is offered in a turn: only those that can work for the book as it stands.

Every schema offered costs input tokens on every call of a conversation, so a tool that could
only answer "nothing here" is not offered: ``read_passage`` and the people tool once something has
been read, the recap once a story chapter has been reached, ``list_chapters`` once the reading
window holds a chapter, ``search_highlights`` once the reader has a highlight inside the window.
``search_book`` is always offered (the system prompt names it, and "nothing read answers this" is
an answer).

Invariant: the rules read only the book's state (the reading window: position, chapters, series,
unread matter) and the reader's highlights, never the conversation. So the tools offered stay the
same, in the registry's order, from call to call and turn to turn of a conversation until that
state changes, and the prompt's cached prefix (tools, system, earlier turns) stays byte-identical.
A tool not offered still runs when called by name (the offline policy calls the registry
directly).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from folio.agent.tools.base import BaseTool, ToolContext, ToolServices
from folio.domain.highlights import within
from folio.domain.passages import LIST_CHAPTERS, PEOPLE, READ_PASSAGE, RECAP, SEARCH_HIGHLIGHTS
from folio.domain.users import LOCAL_USER_ID

Rule = Callable[[ToolContext, ToolServices], bool]


def something_read(ctx: ToolContext, services: ToolServices) -> bool:
    """Any text of the window's volumes is readable."""
    window = ctx.window
    return any(window.spans(v.id) for v in window.volumes)


def story_chapter_reached(ctx: ToolContext, services: ToolServices) -> bool:
    """A chapter of the story (of the book or an earlier volume) has been reached: what
    ``window.story_read`` lists, stopping at the first (every call of a turn asks)."""
    window = ctx.window
    return any(
        c.is_story and window.clip(v.id, c.char_start, v.chapter_end(c)) is not None
        for v in window.volumes
        for c in window.chapters(v.id)
    )


def chapters_reached(ctx: ToolContext, services: ToolServices) -> bool:
    """The book has chapters, and the window holds one."""
    return bool(ctx.window.chapters())


def highlights_read(ctx: ToolContext, services: ToolServices) -> bool:
    """The reader has a highlight inside the window (of the book or an earlier volume)."""
    if services.highlights is None:
        return False
    window, user = ctx.window, ctx.user or LOCAL_USER_ID
    return any(within(window, services.highlights.of_book(v.id, user)) for v in window.volumes)


OFFERED_WHEN: Mapping[str, Rule] = {
    READ_PASSAGE: something_read,
    LIST_CHAPTERS: chapters_reached,
    RECAP: story_chapter_reached,
    PEOPLE: something_read,
    SEARCH_HIGHLIGHTS: highlights_read,
}


def can_work(tool: BaseTool, ctx: ToolContext, services: ToolServices) -> bool:
    """Whether ``tool`` can return anything for this book now (a tool without a rule: always)."""
    rule = OFFERED_WHEN.get(tool.name)
    return rule is None or rule(ctx, services)
