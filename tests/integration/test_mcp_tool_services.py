"""The MCP server's book tools get their services where a chat turn gets them (the composition
root): with a model configured its recap is the model's chapter recaps, and the lexicons it reads
are the process's, read once. Real SQLite, the scripted model, the MCP tool call itself
(``folio.entrypoints.mcp.server.call``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from folio.adapters.llm.scripted import ScriptedChatProvider
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.passages import PEOPLE, RECAP
from folio.entrypoints.mcp.server import call

STORY = (
    "The Lighthouse\n\nChapter 1\n\n" + "Mara kept the lamp on the northern rock. " * 60
    + "\n\nChapter 2\n\n" + "A ship broke on the reef and Mara rowed out alone. " * 60
    + "\n\nChapter 3\n\n" + "The drowned captain was her brother all along. " * 60 + "\n"
)  # fmt: skip


def _library(tmp_path: Path) -> tuple[Container, Book]:
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env, conversation_store="sqlite"))
    path = tmp_path / "lighthouse.txt"
    path.write_text(STORY, encoding="utf-8")
    book = container.ingest.execute(path).book
    return container, container.library.set_position(book.id, chapter="2")


def _mcp(container: Container, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = call(container.for_user(None), container, tool, arguments)
    assert not result.is_error, result.content
    return dict(result.structured_content or json.loads(result.content[0].text))


def test_with_a_model_the_mcp_recap_is_the_models_chapter_recaps(tmp_path: Path) -> None:
    container, book = _library(tmp_path)
    provider = ScriptedChatProvider(["Mara keeps the lamp.", "Mara rows out to the wreck."])
    with_model = container.overridden(provider=provider)

    recap = json.dumps(_mcp(with_model, RECAP, book=book.id))
    assert "Mara keeps the lamp." in recap and "Mara rows out to the wreck." in recap
    assert len(provider.calls) == 2  # one call per chapter read to its end
    assert not any("brother" in c.messages[-1].content for c in provider.calls)  # unread

    offline = json.dumps(_mcp(container, RECAP, book=book.id))  # no model: kept recaps or quotes
    assert "brother" not in offline


class _NoStore:
    """A book repository that must not be asked: what the lexicons hold is read already."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the lexicon was read again ({name})")


def test_the_mcp_people_tool_reads_the_processs_lexicons(tmp_path: Path) -> None:
    container, book = _library(tmp_path)
    first = _mcp(container, PEOPLE, book=book.id, name="Mara")
    assert "Mara" in json.dumps(first)
    book = container.library.get(book.id)
    window = container.library.window(book)
    assert window.spans(book.id) != ((0, book.char_count),)  # read to Chapter 2, not the whole
    # the lexicon the MCP call read (of the text the window shows) is the one every chat turn of
    # this process reads at that window
    assert container.lexicons.read(window, book, _NoStore()) is not None  # type: ignore[arg-type]
    assert _mcp(container, PEOPLE, book=book.id, name="Mara") == first

    # where the window shows the whole book, the process's whole-book lexicon is the one read
    book = container.library.set_position(book.id, percent=100)
    assert container.library.window(book).spans(book.id) == ((0, book.char_count),)
    whole = _mcp(container, PEOPLE, book=book.id, name="Mara")
    assert whole["reading_limit"] == "the whole book" and "Mara" in json.dumps(whole["people"])
    assert container.lexicons.get(book, _NoStore()) is not None  # type: ignore[arg-type]
