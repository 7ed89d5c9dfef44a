"""What Tab offers in ``folio chat`` without a book: every command the REPL runs, from /help's
own lines, and /read's chapter targets written so that /read takes them back as typed."""

from __future__ import annotations

import shlex

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from folio.entrypoints.cli.chat import HELP
from folio.entrypoints.cli.repl_completion import (
    ChatCompleter,
    _quoted,
    chapter_label,
    slash_commands,
)

RUN_BY_THE_REPL = {"/new", "/rename", "/position", "/next", "/read", "/history", "/help",
                   "/clear", "/quit", "/exit"}  # fmt: skip


def test_every_command_the_repl_runs_is_offered_once_with_what_it_does() -> None:
    offered = slash_commands(HELP)
    assert {c for c, _ in offered} == RUN_BY_THE_REPL
    assert len(offered) == len(RUN_BY_THE_REPL) and all(meaning for _, meaning in offered)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("/re", ["/rename", "/read"]), ("/H", ["/history", "/help"]), ("/x", [])],
)
def test_a_slash_completes_to_the_commands_starting_so(typed: str, expected: list[str]) -> None:
    completer = ChatCompleter(session=None, commands=slash_commands(HELP))
    found = list(completer.get_completions(Document(typed), CompleteEvent()))
    assert [c.text for c in found] == expected
    assert all(c.start_position == -len(typed) for c in found)


def test_a_failure_offers_nothing() -> None:  # no session: /read and names fail inside
    completer = ChatCompleter(session=None, commands=[])
    assert list(completer.get_completions(Document("/read "), CompleteEvent())) == []
    assert list(completer.get_completions(Document("Who is Cle"), CompleteEvent())) == []


@pytest.mark.parametrize(
    ("title", "label"),
    [("Letter 4. To Mrs. Saville, England", "Letter 4"), ("Chapter 5", "Chapter 5"),
     ("The Giant's Causeway", "The Giant's Causeway"), ("VII: The Storm", "VII")],
)  # fmt: skip
def test_a_chapter_is_offered_by_its_label_as_read_splits_it(title: str, label: str) -> None:
    assert chapter_label(title) == label
    assert " ".join(shlex.split(_quoted(label))) == label  # as /read joins its words
