"""How a chat turn looks in the terminal: the streamed Markdown answer, its citations, and (with
``--verbose``) each tool call and its result."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.status import Status
from rich.text import Text

from folio.domain.books import no_position_notice, numbered_places
from folio.domain.passages import LIST_CHAPTERS, READ_PASSAGE, SEARCH_BOOK
from folio.entrypoints.citation_marks import numbered_answer as numbered_answer
from folio.entrypoints.cli.output import clean


def format_arguments(arguments: Any) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return str(arguments)


def citation_line(citations: Any) -> str:
    """``[1] Chapter 6, p. 49; [2] Chapter 7, p. 55``: one numbered place per source."""
    return numbered_places(citations)


def highlight_lines(citations: Any, *, words: int = 12) -> list[str]:
    """``[2] your highlight: "the wretch" (your note: he flees his creature)``: the reader's own
    highlights inside each source, by the source's number (a long one cut at ``words`` words)."""
    lines = []
    for n, source in enumerate(citations, 1):
        for mark in getattr(source, "highlights", ()):
            cut = mark.text.split()
            text = " ".join(cut[:words]) + ("..." if len(cut) > words else "")
            note = f" (your note: {mark.note})" if mark.note else ""
            if text:
                lines.append(f'[{n}] your highlight: "{text}"{note}')
            elif mark.note:
                lines.append(f"[{n}] your note: {mark.note}")
    return lines


# What the status line says while a tool runs (by tool name); other tools: "NAME...".
_ACTIVITY = {
    SEARCH_BOOK: "searching the book...",
    READ_PASSAGE: "reading the passage...",
    LIST_CHAPTERS: "looking at the chapters...",
}


class TurnView:
    """Receives the chat's turn events and renders them as they come."""

    def __init__(
        self,
        console: Console,
        *,
        verbose: bool,
        live: bool,
        book: Any = None,
        in_repl: bool = False,
    ) -> None:
        self._book = book
        self._in_repl = in_repl
        self._console = console
        self._verbose = verbose
        self._live_enabled = live
        self._live: Live | None = None
        self._status: Status | None = None
        self._text = ""

    def start(self) -> None:
        """On a terminal, a status line ("thinking...", "searching the book...") until the first
        token of the answer arrives: nothing is silent between Enter and the answer."""
        if self._live_enabled:
            self._status = self._console.status("thinking...", spinner="dots")
            self._status.start()

    def _set_status(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "ToolCallStarted":
            self._set_status(_ACTIVITY.get(event.name, f"{event.name}..."))
        elif kind == "ToolCallFinished":
            self._set_status("thinking...")
        if kind == "ToolCallStarted" and self._verbose:
            self._stop_status()
            self._stop_live()
            self._console.print(
                Text(clean(f"  → {event.name}({format_arguments(event.arguments)})"), style="cyan")
            )
        elif kind == "ToolCallFinished" and self._verbose:
            style = "green" if event.success else "red"
            self._console.print(Text(clean(f"  ← {event.summary}"), style=style))
        elif kind == "AnswerDelta":
            self._stop_status()
            self._text += event.text
            if self._live_enabled:
                if self._live is None:
                    self._live = Live(
                        Markdown(clean(self._text)),
                        console=self._console,
                        refresh_per_second=12,
                        vertical_overflow="visible",
                    )
                    self._live.start()
                self._live.update(Markdown(clean(self._text)))

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._text = ""

    def finish(self, result: Any) -> None:
        """Print the final answer (unless it was streamed) and its citations."""
        self._stop_status()
        streamed = self._live is not None
        answer = numbered_answer(result.answer, result.citations)
        if streamed and self._live is not None:
            self._live.update(Markdown(clean(answer)))
            self._live.stop()
            self._live = None
        if not streamed:
            self._print_answer(answer)
        line = citation_line(result.citations)
        if line:
            self._console.print(Text(clean(f"Sources: {line}"), style="dim"))
        for mine in highlight_lines(result.citations):
            self._console.print(Text(clean(mine), style="yellow"))
        if not getattr(result, "position_set", True) and self._book is not None:
            self._console.print(Text(clean(self._no_position_line()), style="yellow"))

    def _no_position_line(self) -> str:
        how = (
            "/position --chapter 5 (or /next as you read)"
            if self._in_repl
            else f"folio position {self._book.id[:8]} --chapter 5"
        )
        return no_position_notice(self._book.name, f"with {how}")

    def _print_answer(self, answer: str) -> None:
        # Markdown is rendered for a terminal; piped output keeps the answer's own text, unwrapped.
        if self._console.is_terminal:
            self._console.print(Markdown(clean(answer)))
        else:
            self._console.print(Text(clean(answer)), soft_wrap=True)

    def abort(self) -> None:
        """The turn failed or was cancelled: text already shown is marked as not an answer."""
        self._stop_status()
        shown = self._live is not None and bool(self._text.strip())
        self._stop_live()
        if shown:
            self._console.print(
                Text("[the text above is incomplete: this answer failed and was not saved]"),
                style="bold red",
            )


def turn_json(result: Any) -> dict[str, Any]:
    return {
        "conversation_id": result.conversation_id,
        "turn_number": result.turn_number,
        "answer": result.answer,
        "citations": [
            {
                "chapter": c.chapter,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "quote": c.quote,
                "book_id": c.book_id,  # an earlier volume of the series (None: the book)
                "volume": c.volume,  # that volume's title
            }
            for c in result.citations
        ],
        "searches": list(result.searches),
        "llm_calls": result.llm_calls,
        "provider": result.provider,
        "model": result.model,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cache_read_tokens": result.cache_read_tokens,
        "cache_write_tokens": result.cache_write_tokens,
    }
