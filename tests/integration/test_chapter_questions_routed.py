"""A question naming a chapter, told apart by the shipped embedder: "What happened in Chapter 5?"
(capitalised, as a reader writes it) and a chapter named in a book's own divisions ("Part II,
Chapter IV", "Act 1, Scene 2") get that chapter's recap; "What happens in chapter 8?" is not
taken for a question about what comes next: the recap tool says whether chapter 8 was read."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_dir
from folio.adapters.llm.offline import OfflineChatProvider
from folio.agent.offline.strategy import LATER_REPLY, OfflineStrategy
from folio.domain.llm import PromptMessage, ToolDefinition
from folio.domain.passages import (
    LIST_CHAPTERS,
    PEOPLE,
    RECAP,
    SEARCH_BOOK,
    Passage,
    Recap,
    ToolOutcome,
)
from tests.unit.test_offline_agent import WHERE, Runner, found, met

NAMES = (SEARCH_BOOK, PEOPLE, RECAP, LIST_CHAPTERS)
TOOLS = [ToolDefinition(n, n, {"type": "object"}) for n in NAMES]


@pytest.fixture(scope="module")
def strategy(tmp_path_factory: pytest.TempPathFactory) -> OfflineStrategy:
    cache: Path = tmp_path_factory.mktemp("chapters")
    return OfflineStrategy(OnnxEmbedder(packaged_model_dir(), cache, recent_vectors=0))


def ask(strategy: OfflineStrategy, question: str) -> tuple[str, Runner]:
    told = Passage("c1", "Chapter 5", "40", "40", 0, 30, "It was on a dreary night.")
    runner = Runner(**{SEARCH_BOOK: found(), PEOPLE: met(),
                       RECAP: ToolOutcome(True, payload=Recap((told,), WHERE))})  # fmt: skip
    messages = [PromptMessage.system("s"), PromptMessage.user(question)]
    result = strategy.execute(OfflineChatProvider(), messages, TOOLS, runner)
    return result.answer, runner


@pytest.mark.parametrize(
    ("question", "chapter"),
    [
        ("What happened in Chapter 5?", "Chapter 5"),
        ("What happened in chapter 5?", "chapter 5"),
        ("What happened in Part II, Chapter IV?", "Part II, Chapter IV"),
        ("What happened in part 2 chapter 4?", "part 2 chapter 4"),
        ("What happened in Part I?", "Part I"),
        ("What happens in Act 1, Scene 2?", "Act 1, Scene 2"),
        ("What happens in chapter 8?", "chapter 8"),
        ("Can you recap Chapter 7?", "Chapter 7"),
    ],
)
def test_a_chapter_named_gets_its_recap(strategy: OfflineStrategy, question: str, chapter: str):
    answer, runner = ask(strategy, question)
    recaps = [c for c in runner.calls if c.tool_name == RECAP]
    assert [c.arguments for c in recaps] == [{"chapter": chapter}]
    assert "dreary night" in answer


@pytest.mark.parametrize(
    "question",
    [
        "What happens in the next chapter?",
        "What happens after chapter 4?",
        "What happens in the chapter after chapter 5?",
    ],
)
def test_what_comes_next_is_still_not_told(strategy: OfflineStrategy, question: str) -> None:
    answer, runner = ask(strategy, question)
    assert not any(c.tool_name == RECAP for c in runner.calls)
    assert answer == LATER_REPLY.format(where="up to Chapter 5")
