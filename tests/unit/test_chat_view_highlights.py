"""The terminal shows the reader's own highlights under the sources they lie in, by the source's
number, with their notes (a long highlight cut short)."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from folio.domain.conversations import Source, SourceHighlight
from folio.entrypoints.cli.chat_view import TurnView, highlight_lines

WRETCH = SourceHighlight("h1", "highlight", "the wretch", "he flees his creature", 10, 20)


def source(page: str, *marks: SourceHighlight) -> Source:
    return Source("c", "Chapter 5", page, page, 0, 100, quote="q", highlights=marks)


def test_each_highlight_is_named_by_its_sources_number_with_its_note() -> None:
    long = SourceHighlight("h2", "highlight", " ".join(f"w{i}" for i in range(20)), None, 0, 5)
    note = SourceHighlight("h3", "note", "", "a note alone", 0, 1)
    lines = highlight_lines([source("1"), source("2", WRETCH, long), source("3", note)])
    assert lines == [
        '[2] your highlight: "the wretch" (your note: he flees his creature)',
        '[2] your highlight: "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11..."',
        "[3] your note: a note alone",
    ]


def test_a_finished_turn_prints_them_after_its_sources() -> None:
    console = Console(record=True, width=200)
    result = SimpleNamespace(answer="It fled (p. 2).", citations=[source("1"), source("2", WRETCH)])
    TurnView(console, verbose=False, live=False).finish(result)
    out = console.export_text()
    assert out.index("Sources: [1]") < out.index('[2] your highlight: "the wretch"'), out


def test_sources_without_highlights_print_nothing_more() -> None:
    assert highlight_lines([source("1"), source("2")]) == []
