"""Shell completion of books and conversations (click's completion, enabled per shell with
``eval "$(_FOLIO_COMPLETE=bash_source folio)"``; see the README).

A BOOK completes to the short id of each book whose id starts with, or whose title or author has a
word starting with, what was typed ("fra" -> "8e3bf1e9", described as "Frankenstein; ..."); a
CONVERSATION to the short id of each conversation matching by id or title, newest first (only the
book's when the command names a book before it). Ids, not
titles, are inserted: they never need quoting and every command takes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

BOOK_PARAMS = frozenset({"book", "books"})
CONVERSATION_PARAMS = frozenset({"conversation", "conversation_ref"})
_MAX_ITEMS = 50


def _container(ctx: click.Context) -> Any:
    import os

    from folio.bootstrap import Container
    from folio.config import load_settings

    env = dict(os.environ)
    home = ctx.find_root().params.get("home")
    if isinstance(home, Path):
        env["FOLIO_HOME"] = str(home)
    settings = load_settings(env=env)
    if not settings.database_url and not settings.database_path.is_file():
        raise LookupError("no library yet: nothing to complete, and nothing to create")
    return Container(settings)


def _matches(incomplete: str, *texts: str | None) -> bool:
    typed = incomplete.casefold()
    if not typed:
        return True
    return any(word.startswith(typed) for text in texts if text for word in text.casefold().split())


def complete_book(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    try:
        books = _container(ctx).library.list_books()
    except Exception:  # a shell completing must never print a traceback
        return []
    items = []
    for book in books:
        if book.id.startswith(incomplete.lower()) or _matches(incomplete, book.title, book.author):
            items.append(CompletionItem(book.id[:8], help=book.title))
    return items[:_MAX_ITEMS]


def complete_conversation(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    try:
        container = _container(ctx)
        # `folio chat BOOK --conversation <TAB>`: that book's. While an option waits for its
        # value, click leaves the arguments before it unparsed, in ``ctx.args``.
        book = ctx.params.get("book") or (ctx.args[0] if ctx.args else None)
        book_id = container.library.resolve(book).id if isinstance(book, str) else None
        summaries = container.conversations.summaries(book_id)
    except Exception:  # a shell completing must never print a traceback
        return []
    items = []
    for s in summaries:
        c = s.conversation
        if c.id.startswith(incomplete.lower()) or _matches(incomplete, c.title):
            items.append(CompletionItem(c.id[:8], help=f"{c.title} ({s.book_title or '?'})"))
    return items[:_MAX_ITEMS]


def add_completion(command: click.Command) -> None:
    """Give every BOOK and CONVERSATION parameter of ``command`` (and of its subcommands, for a
    group) its completion, so a command added later gets it without repeating it."""
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            add_completion(subcommand)
    for param in command.params:
        if param.name in BOOK_PARAMS:
            param._custom_shell_complete = complete_book
        elif param.name in CONVERSATION_PARAMS:
            param._custom_shell_complete = complete_conversation
