"""``folio chat``: the conversation REPL (seed 000) and one-shot turns for scripts."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import click
from rich.table import Column

from folio.domain.books import percent_text
from folio.domain.errors import FolioError
from folio.entrypoints.cli.chat_view import TurnView, turn_json
from folio.entrypoints.cli.errors import debug_enabled, handle_errors
from folio.entrypoints.cli.output import (
    clean,
    console,
    escape,
    list_table,
    paged,
    print_table,
    squeezed,
)
from folio.entrypoints.cli.progress import embedding_note, prepare_embedder

HELP = """Commands:
  /new               start a new conversation about this book
  /rename TITLE      rename this conversation
  /position [OPTS]   show how far you have read; set it with the options of `folio position`
                     (/position --chapter 5, /position --page 45, /position --percent 30)
  /next              I finished the next chapter (moves your position through it)
  /read N            read source [N] of the last answer, on its page, the quote marked
  /read p. 45        read a page (also: /read chapter 5, /read --chapter 'Letter 2')
  /history           show this conversation so far
  /clear, clear      clear the screen (the conversation is kept)
  /help              this help
  quit, exit, Ctrl-D leave (the conversation is saved); Ctrl-C cancels a turn in flight"""


@dataclass
class ChatSession:
    """The state of one REPL: the book, the use cases, and the current conversation.

    ``created`` is True when this session created the current conversation: if it is left without a
    single turn, it is deleted rather than kept as an empty entry in the conversation list."""

    container: Any
    book: Any
    chat: Any
    conversation_id: str
    verbose: bool
    created: bool = False
    hinted: bool = False

    @property
    def conversations(self) -> Any:
        return self.container.conversations

    def ask(self, message: str, *, live: bool, hint: bool = False) -> Any:
        """One turn, rendered as it comes; with ``hint``, the first answer with sources says how
        to open one."""
        view = TurnView(console, verbose=self.verbose, live=live, book=self.book, in_repl=hint)
        view.start()
        try:
            result = self.chat.execute(self.conversation_id, message, on_event=view)
        except BaseException:
            view.abort()
            raise
        view.finish(result)
        if hint and result.citations and not self.hinted:
            self.hinted = True
            console.print("[dim](/read N opens source [N] on its page)[/]", highlight=False)
        return result

    def discard_if_empty(self) -> bool:
        """Delete the current conversation if this session created it and nothing was asked."""
        if not self.created or self.conversations.get(self.conversation_id).messages:
            return False
        self.conversations.delete(self.conversation_id)
        return True


@click.command("chat")
@click.argument("book")
@click.option(
    "--continue",
    "-c",
    "continue_",
    is_flag=True,
    help="Continue this book's most recent conversation (a new one if it has none).",
)
@click.option(
    "--conversation", "--cid", "conversation_ref", help="Resume this conversation (id or prefix)."
)
@click.option("--new", "new", is_flag=True, help="Start a new conversation.")
@click.option("--title", help="Title for a new conversation (default: from the first question).")
@click.option("--message", "-m", help="Ask one question non-interactively and print the answer.")
@click.option("--json", "as_json", is_flag=True, help="With --message: print the turn as JSON.")
@click.option("--verbose", "-v", is_flag=True, help="Show each tool call and its result.")
@click.option(
    "--provider", "-p", help="anthropic, openai, ollama, offline (default: from settings)."
)
@click.option("--model", help="Model name for the provider.")
@click.pass_obj
@handle_errors
def chat_cmd(
    lazy: Any,
    book: str,
    continue_: bool,
    conversation_ref: str | None,
    new: bool,
    title: str | None,
    message: str | None,
    as_json: bool,
    verbose: bool,
    provider: str | None,
    model: str | None,
) -> None:
    """Chat with BOOK (id, id prefix or part of the title).

    Without -c, --conversation or --new, a terminal session lists the book's recent conversations
    to resume (by row number, id prefix or words of the title) or starts a new one; a one-shot
    -m starts a new conversation and prints the command that continues it.
    The agent searches the book when it needs to, cites pages, and never goes past your reading
    position. In the chat, /help lists the commands (/new, /rename, /position, /history); quit,
    exit or Ctrl-D leave. With stdin not a terminal, each line read is a message (a scripted
    session).

    \b
    Examples:
      folio chat frankenstein                 pick a conversation, or start one
      folio chat frankenstein --new           start a new conversation
      folio chat frankenstein -m "Who is Clerval?" --json
      folio chat frankenstein -c -m "What happens to him?"     continue the latest
      folio chat frankenstein --conversation 3f2a -m "And then?"
    """
    if as_json and not message:
        raise click.UsageError("--json needs --message")
    if sum([continue_, conversation_ref is not None, new]) > 1:
        raise click.UsageError("give one of -c/--continue, --conversation, --new")
    container = lazy.get()
    found = container.library.resolve(book)
    embedding_note(container, found)
    if not as_json:
        prepare_embedder(container)  # said, not a silent pause before the first answer
    chat = container.chat(provider=provider, model=model)
    interactive = message is None and sys.stdin.isatty()
    if continue_:
        conversation_ref = _latest(container, found)
    conversation_id, created = _pick_conversation(
        container, found, conversation_ref, new or bool(message), title, ask=interactive
    )
    session = ChatSession(container, found, chat, conversation_id, verbose, created=created)
    if message is not None:
        _one_turn(session, message, as_json)
    else:
        _repl(session, interactive=interactive)


def _pick_conversation(
    container: Any, book: Any, ref: str | None, new: bool, title: str | None, *, ask: bool
) -> tuple[str, bool]:
    """The conversation to use and whether it was created now."""
    conversations = container.conversations
    if ref:
        conversation = conversations.resolve(ref)
        if conversation.book_id != book.id:
            raise click.UsageError(f"Conversation {conversation.id[:8]} is about another book")
        return str(conversation.id), False
    existing = [] if new else conversations.summaries(book.id)
    if existing and ask:
        chosen = _choose(book, existing)
        if chosen is not None:
            return chosen, False
    return str(conversations.create(book.id, title=title).id), True


def _latest(container: Any, book: Any) -> str | None:
    """The id of the book's most recently active conversation (``llm -c``); None if it has none."""
    summaries = container.conversations.summaries(book.id)
    if not summaries:
        click.echo(f"No conversation about {book.name} yet; starting one.", err=True)
        return None
    click.echo(resumed_line(summaries[0], datetime.now(UTC)), err=True)
    return str(summaries[0].conversation.id)


def resumed_line(summary: Any, now: datetime) -> str:
    """Which conversation ``-c`` continues: "Continuing “Who is Clerval?” (3f2a1b2c, 4 turns,
    last active 2 h ago, 2026-11-26 14:05)"."""
    from folio.domain.sync import time_ago

    c = summary.conversation
    turns = f"{summary.turn_count} turn{'' if summary.turn_count == 1 else 's'}"
    when = f"{time_ago(c.updated_at, now)}, {c.updated_at.astimezone():%Y-%m-%d %H:%M}"
    return f"Continuing “{clean(c.title)}” ({c.id[:8]}, {turns}, last active {when})"


PICKER_SIZE = 10
MIN_ID_PREFIX = 4  # shorter than this, a typed number is only ever a row number


def _choose(book: Any, existing: list[Any]) -> str | None:
    """Ask which conversation to resume; ``None`` for a new one. Rows are numbered; a number up to
    the rows shown is a row, never an id; otherwise the answer is an id prefix (4+ characters) or
    words of a title, matched against ALL the book's conversations."""
    shown = 0
    while True:
        if shown < len(existing):
            shown = _show_rows(book, existing, shown)
        more = " m for more," if shown < len(existing) else ""
        choice = click.prompt(
            f"Resume which one? (row number, id or words of the title;{more} "
            "Enter for a new conversation)",
            default="",
            show_default=False,
        ).strip()
        if not choice:
            return None
        if choice.lower() in {"m", "more"} and more:
            continue
        if choice.isdigit() and 1 <= int(choice) <= shown:
            return str(existing[int(choice) - 1].conversation.id)
        found = _match(existing, choice)
        if len(found) == 1:
            return str(found[0].conversation.id)
        if found:
            rows = ", ".join(str(existing.index(s) + 1) for s in found[:8])
            console.print(f"{len(found)} conversations match; rows {rows}.", highlight=False)
        else:
            console.print(
                f"No conversation matches “{escape(choice)}”. Type a row number from 1 to "
                f"{shown}, an id (at least {MIN_ID_PREFIX} characters) or words of a title.",
                highlight=False,
            )


def _show_rows(book: Any, existing: list[Any], start: int) -> int:
    """Print rows ``start``.. of the picker; the number of rows shown so far."""
    end = min(start + PICKER_SIZE, len(existing))
    table = list_table(
        Column("#", justify="right", no_wrap=True),
        Column("id", no_wrap=True),
        squeezed("title", min_width=12),
        Column("turns", justify="right", no_wrap=True),
        Column("last activity", no_wrap=True),
        title=f"Conversations about {escape(book.name)} ({len(existing)})" if not start else None,
    )
    for i in range(start, end):
        summary = existing[i]
        c = summary.conversation
        table.add_row(
            str(i + 1),
            c.id[:8],
            escape(c.title),
            str(summary.turn_count),
            c.updated_at.astimezone().strftime("%Y-%m-%d %H:%M"),
        )
    print_table(table)
    if end < len(existing):
        console.print(f"{len(existing) - end} older not shown (m for more).", highlight=False)
    return end


def _match(existing: list[Any], text: str) -> list[Any]:
    """Conversations whose id starts with ``text`` (4+ characters) or whose title holds every
    word of it (case-insensitive)."""
    lowered = text.lower()
    if len(lowered) >= MIN_ID_PREFIX:
        by_id = [s for s in existing if s.conversation.id.lower().startswith(lowered)]
        if by_id:
            return by_id
    words = lowered.split()
    return [s for s in existing if all(w in s.conversation.title.lower() for w in words)]


def _one_turn(session: ChatSession, message: str, as_json: bool) -> None:
    try:
        if as_json:
            result = session.chat.execute(session.conversation_id, message)
            click.echo(json.dumps(turn_json(result), indent=2, ensure_ascii=False))
            return
        result = session.ask(message, live=False)
    except BaseException:
        session.discard_if_empty()  # a failed first turn leaves no empty conversation behind
        raise
    short = session.book.id[:8]
    click.echo(f"conversation: {session.conversation_id}", err=True)
    click.echo(
        f"continue it with: folio chat {short} -c -m '...'"
        f"  (or --conversation {session.conversation_id[:8]})",
        err=True,
    )
    if result.citations:
        click.echo(f"open a source with: folio read {short} --cited N", err=True)


def _repl(session: ChatSession, *, interactive: bool) -> None:
    read = _line_reader(session, interactive)
    console.print(
        f"[bold]{escape(session.book.name)}[/] — you have read "
        f"{escape(session.book.describe_position())}. Type /help for commands, quit to leave."
    )
    while True:
        try:
            line = read()
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        text = line.strip()
        if not text:
            continue
        if text.lower() in {"quit", "exit", "/quit", "/exit"}:
            break
        if text.lower() in {"clear", "/clear"}:
            console.clear()
            continue
        if text.startswith("/"):
            _slash(session, text)
            continue
        _repl_turn(session, text, live=interactive)
    _goodbye(session)


def _goodbye(session: ChatSession) -> None:
    if session.discard_if_empty():
        console.print("Nothing was asked; no conversation was kept.")
        return
    console.print(
        f"Saved. Resume with: folio chat {session.book.id[:8]} "
        f"--conversation {session.conversation_id[:8]}",
        highlight=False,
    )


def _repl_turn(session: ChatSession, text: str, *, live: bool) -> None:
    try:
        session.ask(text, live=live, hint=True)
    except KeyboardInterrupt:
        console.print("[yellow]Cancelled; nothing of this turn was saved.[/]")
    except FolioError as e:
        if debug_enabled():
            raise
        console.print(f"[red]Error:[/] {escape(e.message)}")


def _line_reader(session: ChatSession, interactive: bool) -> Callable[[], str]:
    if not interactive:

        def read_plain() -> str:
            line = sys.stdin.readline()
            if not line:
                raise EOFError
            console.print(f"[bold]you>[/] {escape(line.rstrip())}", highlight=False)
            return line

        return read_plain
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import ThreadedCompleter
    from prompt_toolkit.history import FileHistory

    from folio.entrypoints.cli.repl_completion import ChatCompleter, slash_commands

    home = session.container.settings.home
    home.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(home / "chat_history")),
        # Tab: slash commands, /read targets, names met so far (off the prompt's thread: the
        # names are read from the book once per position)
        completer=ThreadedCompleter(ChatCompleter(session, slash_commands(HELP))),
        complete_while_typing=False,
    )
    return lambda: prompt.prompt(prompt_text(session.book))


PROMPT_TITLE_CHARS = 20
PROMPT_PLACE_CHARS = 14


def prompt_text(book: Any) -> str:
    """The REPL prompt, short enough to leave most of a line for the question: the book (its
    title before a subtitle) and where the reader is ("Frankenstein · Chapter 5 · you> ")."""
    short = re.split(r"[;:]", book.title, maxsplit=1)[0].strip() or book.title
    apart = f" ({book.format.value.upper()})" if book.display_name else ""  # beside a namesake
    title = _cut(short, PROMPT_TITLE_CHARS) + apart
    chapter = book.position_chapter
    if book.position.is_unlimited:
        place = "whole book"
    elif chapter is not None:  # its label: "Letter 4" of "Letter 4. To Mrs. Saville, England"
        place = re.split(r"[.:]\s", chapter.title, maxsplit=1)[0]
    else:
        place = percent_text(book.percent_read() or 0)
    return f"{title} · {_cut(place, PROMPT_PLACE_CHARS)} · you> "


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _slash(session: ChatSession, text: str) -> None:
    command, _, arg = text.partition(" ")
    arg = arg.strip()
    if command == "/new":
        session.discard_if_empty()
        session.conversation_id = session.conversations.create(session.book.id).id
        session.created = True
        console.print("New conversation.")
    elif command == "/rename":
        if not arg:
            console.print("Usage: /rename TITLE")
            return
        if _guarded(lambda: session.conversations.rename(session.conversation_id, arg)):
            session.created = False  # named on purpose: kept even without a turn
            console.print(f"Renamed to “{escape(arg)}”.", highlight=False)
    elif command == "/position":
        _position(session, arg)
    elif command == "/next":
        _run(session, "position", ["--next"])
    elif command == "/read":
        _read(session, arg)
    elif command == "/history":
        _print_history(session)
    elif command == "/help":
        console.print(HELP, highlight=False)
    else:
        console.print(f"Unknown command {escape(command)}. /help lists them.", highlight=False)


def _position(session: ChatSession, arg: str) -> None:
    """``/position [OPTIONS]``: ``folio position BOOK OPTIONS`` (see ``_run``)."""
    args = _split(arg)
    if args is None:
        return
    if args and not args[0].startswith("-"):
        console.print(
            f"Say what {escape(arg)} is: /position --chapter {escape(arg)}, "
            f"/position --page {escape(arg)} or /position --percent {escape(arg)}.",
            highlight=False,
        )
        return
    _run(session, "position", args)
    if not args:
        console.print(
            "(change it with: /position --chapter 'Chapter 5', --page N, --percent N or /next)",
            highlight=False,
        )


_PAGE_WORDS = {"p.", "p", "page", "pp.", "pages"}


def _read(session: ChatSession, arg: str) -> None:
    """``/read N`` (source [N] of the last answer), ``/read p. 45``, ``/read chapter 5`` or
    ``/read OPTIONS`` of ``folio read``."""
    args = _split(arg)
    if args is None:
        return
    if not args:
        console.print(
            "Usage: /read N (source [N] of the last answer), /read p. 45, /read chapter 5",
            highlight=False,
        )
        return
    if len(args) == 1 and args[0].isdigit():
        args = ["--cited", args[0], "--conversation", session.conversation_id]
    elif args[0].lower() in _PAGE_WORDS and len(args) == 2:
        args = ["--page", args[1]]
    elif not args[0].startswith("-"):
        args = ["--chapter", " ".join(args)]  # "chapter 5", "Letter 2", words of a title
    _run(session, "read", args)


def _split(arg: str) -> list[str] | None:
    import shlex

    try:
        return shlex.split(arg)
    except ValueError as e:
        console.print(f"[red]Error:[/] {escape(str(e))}")
        return None


def _run(session: ChatSession, name: str, args: list[str]) -> None:
    """Run ``folio NAME BOOK ARGS`` itself (one code path: the same options, parsing, errors and
    display as on the command line), then read the book again so that the next turn, and the
    prompt, use a position it may have moved."""
    from folio.entrypoints.cli.books import position_cmd
    from folio.entrypoints.cli.read import read_cmd

    command = {"position": position_cmd, "read": read_cmd}[name]
    try:
        command.main(
            [session.book.id, *args],
            prog_name=f"/{name}",
            standalone_mode=False,
            obj=_Built(session.container),
        )
    except click.ClickException as e:  # one line in the chat, without the usage of a command
        console.print(f"[red]Error:[/] {escape(e.format_message())}", highlight=False)
    except SystemExit:
        pass  # the command printed its one-line error
    session.book = session.container.library.resolve(session.book.id)


@dataclass(frozen=True)
class _Built:
    """A container already built, where a command expects the lazy one (``.get()``)."""

    container: Any

    def get(self) -> Any:
        return self.container


def _guarded(action: Callable[[], object]) -> bool:
    """Run ``action``; on a folio error print it and return False."""
    try:
        action()
    except FolioError as e:
        console.print(f"[red]Error:[/] {escape(e.message)}")
        return False
    return True


def _print_history(session: ChatSession) -> None:
    """``/history``: the conversation so far as ``folio conversations show`` prints it (answers
    rendered), in a pager when it is longer than the screen."""
    from folio.entrypoints.cli.conversations import print_detail

    detail = session.conversations.get(session.conversation_id)
    if not detail.messages:
        console.print("Nothing asked yet in this conversation.")
        return
    with paged(console):
        print_detail(detail)
