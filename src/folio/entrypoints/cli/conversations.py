"""``folio conversations``: list, create, show, rename, delete, export and import conversations.

``folio conversations [BOOK]`` lists; the subcommands manage one conversation, named by its id or
a unique id prefix. Every command takes ``--json`` for scripts. Thin: each command resolves its
arguments, calls one use case of ``folio.app.conversations.Conversations`` and renders the result.
"""

from __future__ import annotations

import json
import stat
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markdown import Markdown
from rich.table import Column
from rich.text import Text

from folio.domain.books import numbered_places
from folio.domain.conversations import ChatMessage, Conversation
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import PromptRole
from folio.entrypoints.cli.chat_view import numbered_answer
from folio.entrypoints.cli.errors import handle_errors
from folio.entrypoints.cli.output import (
    clean,
    console,
    escape,
    list_table,
    paged,
    print_table,
    squeezed,
)

if TYPE_CHECKING:  # the use cases load only when a command runs: `folio --help` stays fast
    from folio.domain.conversations import ConversationDetail

SUMMARY_CHARS = 100


class _ListUnlessSubcommand(click.Group):
    """A group whose first argument is either a subcommand or the ``list`` command's BOOK.

    click would take any first argument for a subcommand name, so ``parse_args`` sends anything
    that is not one (``folio conversations moby``, ``folio conversations --json``) to ``list``.
    """

    default_command = "list"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if first is None or (first not in self.commands and first not in ctx.help_option_names):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[BOOK] [--json] | COMMAND [ARGS]...")


@click.group("conversations", cls=_ListUnlessSubcommand)
def conversations_group() -> None:
    """List and manage conversations.

    \b
    folio conversations [BOOK]          list conversations (of one book)
    folio conversations new BOOK        start a conversation
    folio conversations show ID         print a conversation
    folio conversations rename ID TITLE
    folio conversations rm ID
    folio conversations export ID [--format md|json] [-o FILE]
    folio conversations import FILE
    folio conversations search TEXT [--book BOOK]   find a question or an answer

    ID is a conversation id or a unique prefix of one. BOOK is a book id, id prefix or title.
    """


def _json_out(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _conversation_dict(c: Conversation, **extra: Any) -> dict[str, Any]:
    return {
        "conversation_id": c.id,
        "book_id": c.book_id,
        "title": c.title,
        "created_at": c.created_at.isoformat(),
        "updated_at": c.updated_at.isoformat(),
        **extra,
    }


@conversations_group.command("list")
@click.argument("book", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def list_cmd(lazy: Any, book: str | None, as_json: bool) -> None:
    """List conversations, most recent activity first (only BOOK's when given)."""
    container = lazy.get()
    book_id = container.library.resolve(book).id if book else None
    summaries = container.conversations.summaries(book_id)
    if as_json:
        _json_out([
            _conversation_dict(s.conversation, book_title=s.book_title, turns=s.turn_count)
            for s in summaries
        ])  # fmt: skip
        return
    if not summaries:
        console.print("No conversations yet. Start one with [bold]folio chat BOOK[/].")
        return
    table = list_table(
        Column("id", no_wrap=True),
        squeezed("book", ratio=2),
        squeezed("title", ratio=3, min_width=10),
        Column("turns", justify="right", no_wrap=True),
        Column("last activity", no_wrap=True),
    )
    names = {b.id: b.name for b in container.library.list_books()}  # "Frankenstein (EPUB)"
    for s in summaries:
        c = s.conversation
        book_name = names.get(c.book_id, s.book_title or "?")
        table.add_row(c.id[:8], escape(book_name), escape(c.title), str(s.turn_count),
                      _when(c.updated_at))  # fmt: skip
    print_table(table, to=console)


@conversations_group.command("search")
@click.argument("text", nargs=-1, required=True)
@click.option("--book", help="Only this book's conversations (id, id prefix or title).")
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(1, 1000), help="At most N."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def search_cmd(
    lazy: Any, text: tuple[str, ...], book: str | None, limit: int, as_json: bool
) -> None:
    """Find your questions and folio's answers containing every word of TEXT, across all
    conversations (case-insensitive); newest conversation first.

    \b
    folio conversations search Clerval
    folio conversations search "the monster" --book frank
    """
    container = lazy.get()
    book_id = container.library.resolve(book).id if book else None
    found = container.conversations.search(" ".join(text), book_id=book_id, limit=limit + 1)
    matches, cut = found[:limit], len(found) > limit
    if as_json:
        _json_out([
            {
                **_conversation_dict(m.conversation, book_title=m.book_title),
                "turn_number": m.turn_number,
                "role": m.role.value,
                "snippet": m.snippet,
                "spans": [list(span) for span in m.spans],
            }
            for m in matches
        ])  # fmt: skip
        return
    if not matches:
        click.echo(f"No question or answer contains {' '.join(text)!r}.")
        return
    shown = len({m.conversation.id for m in matches})
    more = f" (the first {limit}; --limit shows more)" if cut else ""
    console.print(f"{len(matches)} match(es) in {shown} conversation(s){more}:")
    current = None
    for m in matches:
        if m.conversation.id != current:
            current = m.conversation.id
            console.print(
                f"\n[bold]{escape(m.conversation.title)}[/]  [dim]{m.conversation.id[:8]} ·"
                f" {escape(m.book_title or '?')} · {_when(m.conversation.updated_at)}[/]"
            )
        who = "you" if m.role is PromptRole.USER else "folio"
        console.print(f"  turn {m.turn_number}, {who}: {_highlighted(m.snippet, m.spans)}")
    console.print(
        "\n[dim]Open one: folio conversations show ID, or folio chat BOOK --conversation ID[/]"
    )


def _highlighted(snippet: str, spans: tuple[tuple[int, int], ...]) -> str:
    """``snippet`` as rich markup, the matched words in bold (book text is escaped)."""
    out, at = [], 0
    for start, end in spans:
        if start < at:
            continue
        out += [
            escape(clean(snippet[at:start])),
            f"[bold yellow]{escape(clean(snippet[start:end]))}[/]",
        ]
        at = end
    out.append(escape(clean(snippet[at:])))
    return "".join(out)


@conversations_group.command("new")
@click.argument("book")
@click.option("--title", help="Title (default: taken from your first message).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def new_cmd(lazy: Any, book: str, title: str | None, as_json: bool) -> None:
    """Start a new conversation about BOOK and print its id."""
    container = lazy.get()
    found = container.library.resolve(book)
    created = container.conversations.create(found.id, title=title)
    if as_json:
        _json_out(_conversation_dict(created, book_title=found.title))
    else:
        click.echo(created.id)


@conversations_group.command("show")
@click.argument("conversation")
@click.option("--verbose", "-v", is_flag=True, help="Also show tool calls and their results.")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON (the export).")
@click.pass_obj
@handle_errors
def show_cmd(lazy: Any, conversation: str, verbose: bool, as_json: bool) -> None:
    """Print a conversation: your questions and the answers with their sources."""
    convs = lazy.get().conversations
    found = convs.resolve(conversation)
    if as_json:
        _json_out(convs.export_json(found.id))
        return
    with paged(console):
        print_detail(convs.get(found.id), verbose=verbose)


def print_detail(detail: ConversationDetail, *, verbose: bool = False) -> None:
    """A conversation for a person: title, book, dates, then each turn, the answers rendered as
    Markdown on a terminal (as they were shown in the chat), with their numbered sources."""
    c = detail.conversation
    console.print(f"[bold]{escape(c.title)}[/] [dim]({c.id})[/]")
    console.print(f"{escape(detail.book_title or '?')} · started {_when(c.created_at)} · "
                  f"last activity {_when(c.updated_at)}")  # fmt: skip
    if not detail.messages:
        console.print("[dim]No messages yet.[/]")
    sources = {t.turn_number: t.sources for t in detail.turns}
    by_turn: dict[int, list[ChatMessage]] = {}
    for m in detail.messages:  # one pass: a long conversation prints in linear time
        by_turn.setdefault(m.turn_number, []).append(m)
    for number in sorted(by_turn):
        console.print()
        for m in by_turn[number]:
            _print_message(m, verbose=verbose, sources=sources.get(number, ()))
        cited = numbered_places(sources.get(number, ()))
        if cited:
            console.print(f"  [dim]Sources: {escape(cited)}[/]", highlight=False)


def _print_message(m: ChatMessage, *, verbose: bool, sources: Any = ()) -> None:
    if m.role is PromptRole.USER:
        console.print(f"[bold cyan]You:[/] {escape(m.content)}")
    elif m.role is PromptRole.ASSISTANT:
        if m.content.strip():
            _print_answer(numbered_answer(m.content, sources))
        if verbose:
            for call in m.tool_invocations:
                args = json.dumps(dict(call.arguments), ensure_ascii=False)
                console.print(f"  [yellow]→ {escape(call.tool_name)}[/] {escape(args)}")
    elif verbose:
        style = "red" if m.is_error else "yellow"
        name = m.tool_name or "tool"
        console.print(f"  [{style}]← {escape(name)}[/] {escape(result_summary(m))}")


def _print_answer(answer: str) -> None:
    if console.is_terminal:
        console.print("[bold green]folio:[/]")
        console.print(Markdown(clean(answer)))
    else:  # piped: the answer's own text, unwrapped
        console.print(Text("folio: ") + Text(clean(answer)), soft_wrap=True)


def result_summary(message: ChatMessage) -> str:
    """One short line about a tool result: its error, or how many items it returned."""
    try:
        data = json.loads(message.content)
    except ValueError:
        return _short(message.content)
    if isinstance(data, dict):
        if data.get("success") is False or message.is_error:
            return f"error: {_short(str(data.get('error', data)))}"
        payload = data.get("data", data)
        if isinstance(payload, dict):
            for key, value in payload.items():
                if isinstance(value, list):
                    return f"{len(value)} {key}"
        if isinstance(payload, list):
            return f"{len(payload)} items"
    return _short(message.content)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"


@conversations_group.command("rename")
@click.argument("conversation")
@click.argument("title")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def rename_cmd(lazy: Any, conversation: str, title: str, as_json: bool) -> None:
    """Give a conversation a new TITLE."""
    convs = lazy.get().conversations
    renamed = convs.rename(convs.resolve(conversation).id, title)
    if as_json:
        _json_out(_conversation_dict(renamed))
    else:
        console.print(f"Renamed to “{escape(renamed.title)}”.")


@conversations_group.command("rm")
@click.argument("conversation")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def rm_cmd(lazy: Any, conversation: str, yes: bool, as_json: bool) -> None:
    """Delete a conversation with all its messages."""
    convs = lazy.get().conversations
    found = convs.resolve(conversation)
    if not yes and not click.confirm(f"Delete {found.title!r} and all its messages?"):
        click.echo("Nothing deleted.")
        return
    convs.delete(found.id)
    if as_json:
        _json_out({"conversation_id": found.id, "deleted": True})
    else:
        console.print(f"Deleted “{escape(found.title)}”.")


@conversations_group.command("export")
@click.argument("conversation")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json"]),
    default="md",
    show_default=True,
    help="md: for reading; json: everything, re-importable.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.pass_obj
@handle_errors
def export_cmd(lazy: Any, conversation: str, fmt: str, output: Path | None, as_json: bool) -> None:
    """Export a conversation as Markdown (questions, answers, citations) or JSON (all of it)."""
    convs = lazy.get().conversations
    found = convs.resolve(conversation)
    if as_json or fmt == "json":
        text = json.dumps(convs.export_json(found.id), indent=2, ensure_ascii=False) + "\n"
    else:
        text = convs.export_markdown(found.id)
    if output is None:
        # On a terminal, book and model text must not carry control sequences; a pipe or a file
        # gets the export as it is.
        click.echo(clean(text) if sys.stdout.isatty() else text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {output}", err=True)


@conversations_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def import_cmd(lazy: Any, file: Path, as_json: bool) -> None:
    """Import a conversation exported with ``export --format json``; prints its new id.

    The book must be in the library (matched by id, else by its content)."""
    container = lazy.get()
    data = _read_json_file(file, max_mb=container.settings.max_import_mb)
    imported = container.conversations.import_json(data)
    if as_json:
        _json_out(_conversation_dict(imported))
    else:
        click.echo(imported.id)


def _read_json_file(file: Path, *, max_mb: float) -> Any:
    """The JSON in ``file``: a regular file of at most ``max_mb`` MB, not nested absurdly deep."""
    try:
        info = file.stat()
    except OSError as e:
        raise ConversationError(
            f"{file} cannot be read: {e.strerror or e}", code=ConversationErrorCode.INVALID_INPUT
        ) from e
    if not stat.S_ISREG(info.st_mode):
        raise ConversationError(
            f"{file} is not a regular file", code=ConversationErrorCode.INVALID_INPUT
        )
    if info.st_size > max_mb * 1024 * 1024:
        raise ConversationError(
            f"{file} is {info.st_size:,} bytes; an import may be at most {max_mb:g} MB"
            " (setting max_import_mb, FOLIO_MAX_IMPORT_MB)",
            code=ConversationErrorCode.INVALID_INPUT,
        )
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except RecursionError as e:
        raise ConversationError(
            f"{file} is nested too deeply to be a conversation export",
            code=ConversationErrorCode.INVALID_INPUT,
        ) from e
    except (ValueError, UnicodeDecodeError) as e:
        raise ConversationError(
            f"{file} is not a JSON file ({e})", code=ConversationErrorCode.INVALID_INPUT
        ) from e


COMMANDS = [conversations_group]
