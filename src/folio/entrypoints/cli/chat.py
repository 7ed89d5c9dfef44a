"""``folio chat``: the conversation REPL (seed 000) and one-shot turns for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click
from rich.table import Table

from folio.domain.errors import FolioError
from folio.entrypoints.cli.books import embedding_note
from folio.entrypoints.cli.chat_view import TurnView, turn_json
from folio.entrypoints.cli.errors import debug_enabled, handle_errors
from folio.entrypoints.cli.output import console, escape

HELP = """Commands:
  /new               start a new conversation about this book
  /rename TITLE      rename this conversation
  /position          show how far you have read (set it with `folio position`)
  /history           show this conversation so far
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

    @property
    def conversations(self) -> Any:
        return self.container.conversations

    def ask(self, message: str, *, live: bool) -> Any:
        view = TurnView(console, verbose=self.verbose, live=live)
        try:
            result = self.chat.execute(self.conversation_id, message, on_event=view)
        except BaseException:
            view.abort()
            raise
        view.finish(result)
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
    "--conversation", "-c", "conversation_ref", help="Resume this conversation (id or prefix)."
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

    Without --conversation or --new, lists the book's conversations to resume or offers a new one.
    The agent searches the book when it needs to, cites pages, and never goes past your reading
    position. In the chat, /help lists the commands (/new, /rename, /position, /history); quit,
    exit or Ctrl-D leave. With stdin not a terminal, each line read is a message (a scripted
    session).

    \b
    Examples:
      folio chat frankenstein                 pick a conversation, or start one
      folio chat frankenstein --new           start a new conversation
      folio chat frankenstein -m "Who is Clerval?" --json
      folio chat frankenstein -c 3f2a -m "What happens to him?"
    """
    if as_json and not message:
        raise click.UsageError("--json needs --message")
    container = lazy.get()
    found = container.library.resolve(book)
    embedding_note(container, found)
    chat = container.chat(provider=provider, model=model)
    interactive = message is None and sys.stdin.isatty()
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


PICKER_SIZE = 15


def _choose(book: Any, existing: list[Any]) -> str | None:
    """Ask which conversation to resume; ``None`` for a new one."""
    shown = existing[:PICKER_SIZE]
    table = Table(
        "#", "title", "turns", "last activity", title=f"Conversations about {escape(book.title)}"
    )
    for i, summary in enumerate(shown, 1):
        c = summary.conversation
        table.add_row(
            str(i),
            escape(c.title),
            str(summary.turn_count),
            c.updated_at.astimezone().strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)
    while True:
        choice = click.prompt(
            "Resume which one? (Enter for a new conversation)", default="", show_default=False
        ).strip()
        if not choice:
            return None
        if choice.isdigit() and 1 <= int(choice) <= len(shown):
            return str(shown[int(choice) - 1].conversation.id)
        console.print(f"Type a number from 1 to {len(shown)}, or press Enter.", highlight=False)


def _one_turn(session: ChatSession, message: str, as_json: bool) -> None:
    try:
        if as_json:
            result = session.chat.execute(session.conversation_id, message)
            click.echo(json.dumps(turn_json(result), indent=2, ensure_ascii=False))
            return
        session.ask(message, live=False)
    except BaseException:
        session.discard_if_empty()  # a failed first turn leaves no empty conversation behind
        raise
    click.echo(f"conversation: {session.conversation_id}", err=True)


def _repl(session: ChatSession, *, interactive: bool) -> None:
    read = _line_reader(session, interactive)
    console.print(
        f"[bold]{escape(session.book.title)}[/] — read to "
        f"{session.book.position.describe()}. Type /help for commands, quit to leave."
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
        f"Saved. Resume with: folio chat {session.book.id[:8]} -c {session.conversation_id[:8]}",
        highlight=False,
    )


def _repl_turn(session: ChatSession, text: str, *, live: bool) -> None:
    try:
        session.ask(text, live=live)
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
    from prompt_toolkit.history import FileHistory

    home = session.container.settings.home
    home.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(history=FileHistory(str(home / "chat_history")))
    return lambda: prompt.prompt("you> ")


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
        book = session.container.library.resolve(session.book.id)
        session.book = book
        console.print(
            f"Read to {book.position.describe()} "
            f"(change it with: folio position {book.id[:8]} --page N)",
            highlight=False,
        )
    elif command == "/history":
        _print_history(session)
    elif command == "/help":
        console.print(HELP, highlight=False)
    else:
        console.print(f"Unknown command {escape(command)}. /help lists them.", highlight=False)


def _guarded(action: Callable[[], object]) -> bool:
    """Run ``action``; on a folio error print it and return False."""
    try:
        action()
    except FolioError as e:
        console.print(f"[red]Error:[/] {escape(e.message)}")
        return False
    return True


def _print_history(session: ChatSession) -> None:
    detail = session.conversations.get(session.conversation_id)
    if not detail.messages:
        console.print("Nothing asked yet in this conversation.")
    for m in detail.messages:
        if m.role.value == "user":
            console.print(f"[bold]you>[/] {escape(m.content)}", highlight=False)
        elif m.role.value == "assistant" and m.content.strip():
            console.print(escape(m.content), highlight=False)
