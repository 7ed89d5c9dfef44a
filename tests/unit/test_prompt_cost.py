"""What a model reads each call: only the tools that can work, short schemas, a short system prompt
that keeps its rules, and a prefix that stays byte-identical from turn to turn (prompt cache)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.adapters.storage.memory.highlights import InMemoryHighlightStore
from folio.agent.prompt_builder import conversation_system_prompt
from folio.agent.tools import ToolContext, default_registry
from folio.domain.books import Book
from folio.domain.highlights import Highlight, HighlightKind
from folio.domain.llm import PromptMessage, ToolDefinition
from folio.domain.passages import (
    LIST_CHAPTERS,
    PEOPLE,
    READ_PASSAGE,
    RECAP,
    SEARCH_BOOK,
    SEARCH_HIGHLIGHTS,
)
from folio.domain.users import LOCAL_USER_ID
from tests.unit.test_book_tools import make_story
from tests.unit.test_chat import World

EVERY_TOOL = [SEARCH_BOOK, READ_PASSAGE, LIST_CHAPTERS, RECAP, PEOPLE, SEARCH_HIGHLIGHTS]
DESCRIPTION_CHARS = 160  # one line a model reads on every call
SCHEMAS_CHARS = 1600  # every tool's name, description and parameters, as JSON


def _offered(book: Book, **services: Any) -> list[str]:
    story = make_story()
    ctx = ToolContext(book=book, user=LOCAL_USER_ID)
    defs = default_registry().definitions(ctx, replace(story.services(), **services))
    return [d.name for d in defs]


def _highlight(book: Book, start: int, end: int) -> Highlight:
    return Highlight(f"h{start}", book.id, LOCAL_USER_ID, HighlightKind.HIGHLIGHT, "text", None,
                     None, None, start, end, None, "test", f"k{start}")  # fmt: skip


# --- tools offered only when they can work -------------------------------------------------------
def test_before_anything_is_read_only_search_book_is_offered():
    book = make_story().book
    assert _offered(book.with_position(book.position_at_percent(0))) == [SEARCH_BOOK]


def test_the_highlights_tool_is_offered_only_with_a_highlight_inside_the_reading_window():
    book = make_story().book  # read to page 4: chapter 3 (pages 5-6) is unread
    store = InMemoryHighlightStore()
    assert SEARCH_HIGHLIGHTS not in _offered(book, highlights=store)
    assert SEARCH_HIGHLIGHTS not in _offered(book, highlights=None)

    past = book.pages[4]
    store.add([_highlight(book, past.char_start, past.char_start + 10)])
    assert SEARCH_HIGHLIGHTS not in _offered(book, highlights=store), "only one past the position"

    read = book.pages[1]
    store.add([_highlight(book, read.char_start, read.char_start + 10)])
    assert _offered(book, highlights=store) == EVERY_TOOL


def test_a_book_without_chapters_is_not_offered_the_chapter_list_or_the_recap():
    book = make_story().book
    flat = replace(book, chapters=())
    assert _offered(flat) == [SEARCH_BOOK, READ_PASSAGE, PEOPLE]
    assert _offered(book) == [SEARCH_BOOK, READ_PASSAGE, LIST_CHAPTERS, RECAP, PEOPLE]


def test_the_recap_is_offered_exactly_when_the_window_holds_a_story_chapter_read():
    from folio.agent.tools.offered import story_chapter_reached

    story = make_story()
    for percent in (0, 0.5, 1, 5, 20, 50, 99, 100):
        book = story.book.with_position(story.book.position_at_percent(percent))
        ctx = ToolContext(book=book)
        assert story_chapter_reached(ctx, story.services()) == bool(ctx.window.story_read())
        assert (RECAP in _offered(book)) == bool(ctx.window.story_read()), percent


def test_a_tool_not_offered_still_runs_when_called_by_name():
    story = make_story()
    book = story.book.with_position(story.book.position_at_percent(0))
    result = default_registry().execute(PEOPLE, ToolContext(book=book), story.services())
    assert result.success and result.data.people == ()


# --- schemas and system prompt: short, with their rules ------------------------------------------
def test_tool_descriptions_and_schemas_stay_under_their_bounds():
    defs = default_registry().definitions()
    assert [d.name for d in defs] == EVERY_TOOL
    for d in defs:
        assert len(d.description) <= DESCRIPTION_CHARS, d.name
        described = [p for p in d.parameters["properties"].values() if "description" in p]
        assert all(len(p["description"]) <= 80 for p in described), d.name
    as_json = json.dumps([[d.name, d.description, dict(d.parameters)] for d in defs])
    assert len(as_json) <= SCHEMAS_CHARS, len(as_json)


def test_the_system_prompt_is_short_and_keeps_the_rules_that_matter():
    book = make_story().book
    prompt = " ".join(conversation_system_prompt(book).split())
    assert len(prompt) <= 1100, len(prompt)
    assert '"(Chapter X, p. N)"' in prompt  # citations
    assert 'everything after the end of "Chapter 2" is unread' in prompt  # the spoiler gate
    assert "nothing past it may be revealed, guessed or hinted at, even if asked" in prompt
    assert "Search only for text you do not have yet" in prompt  # when to search
    assert "self-contained" in prompt and 'never "he"' in prompt  # how to search
    assert "No outside knowledge" in prompt


# --- the prompt cache: each request starts with the one before --------------------------------
_ANSWER = "Victor studied chemistry (Chapter 2, p. 3)."


def _answering(messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition] | None) -> Any:
    if messages[-1].role.value == "user":
        return tool_call(SEARCH_BOOK, {"query": messages[-1].content})
    return _ANSWER


def _request(call: Any) -> list[str]:
    return [repr(m) for m in call.messages]


def test_each_turns_request_starts_with_the_previous_turns_request_byte_for_byte():
    world = World()
    provider = ScriptedChatProvider([_answering] * 12)
    chat = world.chat(provider)
    for n in range(6):
        chat.execute("c1", f"What did Victor study, question {n}?")

    calls = provider.calls
    assert len(calls) == 12
    assert all(c.tools == calls[0].tools for c in calls), "the tools offered never flip"
    assert [t.name for t in calls[0].tools or ()] == [SEARCH_BOOK, READ_PASSAGE, LIST_CHAPTERS,
                                                       RECAP, PEOPLE]  # fmt: skip
    for n in range(5):
        question, with_results, next_question = calls[2 * n : 2 * n + 3]
        # the search's call and results follow the question: the turn's second call reads the
        # first from the cache; the next turn's question follows this turn's question and answer
        assert _request(with_results)[: len(_request(question))] == _request(question)
        assert _request(next_question)[: len(_request(question))] == _request(question)
        assert next_question.messages[len(question.messages)].content == _ANSWER


def test_the_tools_offered_change_when_the_reader_moves_on():
    world = World()
    world.story.at(world.story.book.position_at_percent(0))
    provider = ScriptedChatProvider([_answering] * 4)
    chat = world.chat(provider)
    chat.execute("c1", "What did Victor study?")
    world.story.at(world.story.book.position_at_page("4"))
    chat.execute("c1", "And then?")

    offered = [[t.name for t in c.tools or ()] for c in provider.calls]
    assert offered[0] == offered[1] == [SEARCH_BOOK]
    assert offered[2] == offered[3] == [SEARCH_BOOK, READ_PASSAGE, LIST_CHAPTERS, RECAP, PEOPLE]
