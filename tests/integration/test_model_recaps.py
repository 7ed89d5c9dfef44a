"""A model's chapter recaps through the composition root: real SQLite, the real chat turn, the
scripted model. Each chapter is recapped once; a later conversation reads the kept recap."""

from __future__ import annotations

from pathlib import Path

from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
from folio.bootstrap import Container
from folio.config import load_settings

STORY = (
    "The Lighthouse\n\nChapter 1\n\n" + "Mara kept the lamp on the northern rock. " * 60
    + "\n\nChapter 2\n\n" + "A ship broke on the reef and Mara rowed out alone. " * 60
    + "\n\nChapter 3\n\n" + "The drowned captain was her brother all along. " * 60 + "\n"
)  # fmt: skip


def test_chapter_recaps_are_written_once_by_the_model_and_kept(tmp_path: Path) -> None:
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    path = tmp_path / "lighthouse.txt"
    path.write_text(STORY, encoding="utf-8")
    book = container.ingest.execute(path).book
    book = container.library.set_position(book.id, chapter="2")

    provider = ScriptedChatProvider(
        [tool_call("recap_story"), "Mara keeps the lamp.", "Mara rows out.", "So far: ..."]
    )
    chat = container.overridden(provider=provider).chat()
    first = chat.execute(container.conversations.create(book.id, "one").id, "What happened?")
    assert first.answer == "So far: ..."
    (result,) = first.tool_calls
    assert result.success and "2 chapter recap(s) by a model" in result.summary
    prompts = [c.messages[-1].content for c in provider.calls[1:3]]
    assert "Chapter 1" in prompts[0] and "Mara rowed out" in prompts[1]
    assert not any("brother" in p for p in prompts)  # chapter 3 is unread

    again = ScriptedChatProvider([tool_call("recap_story"), "Still: ..."])
    chat = container.overridden(provider=again).chat()
    conversation = container.conversations.create(book.id, "two")
    second = chat.execute(conversation.id, "Remind me what Mara did so far")
    assert second.answer == "Still: ..." and len(again.calls) == 2  # no recap call: kept
    assert any("Mara rows out." in m.content for m in again.calls[-1].messages)
