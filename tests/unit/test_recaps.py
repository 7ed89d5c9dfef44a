"""A model's recap of each chapter read: written once per chapter and kept, never of a chapter
read in part; the extractive recap when there is no model or it fails. Scripted provider."""

from __future__ import annotations

from dataclasses import replace

from folio.adapters.llm.scripted import ScriptedChatProvider
from folio.agent.recaps import ModelChapterRecaps
from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext, ToolServices
from folio.domain.errors import LLMError, LLMErrorCode
from folio.domain.passages import RECAP, Recap, decode_payload, encode_payload
from tests.unit.test_book_tools import SECRET_WORDS, StoryLibrary, make_story

CHAPTER_1 = "Victor grows up in Geneva with Elizabeth; Clerval is his friend."
CHAPTER_2 = "Victor studies chemistry at Ingolstadt and works to animate dead matter."


def recap(story: StoryLibrary, provider: ScriptedChatProvider) -> Recap:
    recaps = ModelChapterRecaps(provider, story.library)
    services = ToolServices(story.searcher, story.library, story.library, recaps=recaps)
    book = story.library.get(story.book.id)
    result = default_registry().execute(RECAP, ToolContext(book=book), services, {})
    assert result.success and isinstance(result.data, Recap)
    return result.data


def test_each_chapter_read_is_recapped_by_the_model_once_and_kept() -> None:
    story = make_story()
    provider = ScriptedChatProvider([CHAPTER_1, CHAPTER_2])
    first = recap(story, provider)
    assert first.generated and [p.text for p in first.passages] == [CHAPTER_1, CHAPTER_2]
    assert [p.chapter for p in first.passages] == ["Chapter 1", "Chapter 2"]
    prompts = [call.messages[-1].content for call in provider.calls]
    assert len(prompts) == 2 and "Victor Frankenstein grew up in Geneva" in prompts[0]
    assert not any(word in p for p in prompts for word in SECRET_WORDS)  # nothing past
    again = recap(story, provider)  # the script is spent: a model call would fail
    assert again == first and len(provider.calls) == 2


def test_a_chapter_read_in_part_is_quoted_never_sent_to_the_model() -> None:
    story = make_story()
    story.at(story.book.position_at_page("3"))  # in the middle of chapter 2
    provider = ScriptedChatProvider([CHAPTER_1])
    data = recap(story, provider)
    assert len(provider.calls) == 1 and data.passages[0].text == CHAPTER_1
    assert data.passages[1].chapter == "Chapter 2" and "Ingolstadt" in data.passages[1].text
    assert "Chapter 2 is read only in part" in (data.note or "")


def test_without_an_answer_from_the_model_the_recap_is_extractive_and_nothing_is_kept() -> None:
    story = make_story()
    failing = ScriptedChatProvider([LLMError("down", code=LLMErrorCode.UNAVAILABLE)])
    data = recap(story, failing)
    assert not data.generated and "Geneva" in data.passages[0].text
    assert story.library.chapter_recap(story.book.id, 1) is None


def test_the_codec_keeps_that_a_recap_was_written_by_a_model() -> None:
    data = recap(make_story(), ScriptedChatProvider([CHAPTER_1, CHAPTER_2]))
    # a passage's page breaks stay in the process, never in the JSON (Passage.breaks): the rest
    # of each passage, and that a model wrote it, come back
    assert all(p.breaks for p in data.passages)
    unbroken = tuple(replace(p, breaks=()) for p in data.passages)
    assert decode_payload(encode_payload(data)) == replace(data, passages=unbroken)
    assert encode_payload(data)["generated"] is True
