"""The ``folio`` command: a thin shell over the use cases built by ``folio.bootstrap``."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from folio.entrypoints.cli.completion import add_completion
from folio.entrypoints.cli.errors import EXIT_ERROR, debug_enabled, handle_errors, set_debug
from folio.entrypoints.cli.lazy import LazyCommands, LazyGroup

if TYPE_CHECKING:
    from folio.bootstrap import Container

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(
    cls=LazyGroup, context_settings=CONTEXT_SETTINGS, lazy_commands={}, on_load=add_completion
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="FOLIO_HOME",
    help="Data directory (default: $FOLIO_HOME, else the platform's user data folder).",
)
@click.option(
    "--debug",
    is_flag=True,
    envvar="FOLIO_DEBUG",
    help="Show tracebacks and debug logs (also FOLIO_DEBUG=1).",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _, value: _print_version(ctx) if value else None,
    help="Show the version and exit.",
)
@click.pass_context
def cli(ctx: click.Context, home: Path | None, debug: bool) -> None:
    """folio: a reading companion you talk to.

    Add books (EPUB, PDF, text, Markdown, HTML), set how far you have read, search them, and chat
    with them. Answers cite pages and never reveal anything past your reading position.

    Start with `folio demo`, or `folio add FILE` then `folio chat BOOK`.
    """
    if debug:
        set_debug(True)
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from click.core import ParameterSource

    from_flag = ctx.get_parameter_source("home") is ParameterSource.COMMANDLINE
    ctx.obj = _LazyContainer(home, from_flag=from_flag)


def _print_version(ctx: click.Context) -> None:
    from folio import __version__  # the package's metadata: read only when asked

    click.echo(f"folio, version {__version__}")
    ctx.exit()


class _LazyContainer:
    """Builds the container (and reads settings) only when a command needs it. ``home``: the
    data directory given with ``--home`` (its config file is read from there)."""

    def __init__(self, home: Path | None = None, *, from_flag: bool = False) -> None:
        self._home = home
        self._from_flag = from_flag  # --home (not FOLIO_HOME): `folio config` says so
        self._container: Container | None = None

    def get(self) -> Container:
        if self._container is None:
            import os

            from folio.bootstrap import Container
            from folio.config import load_settings

            env = dict(os.environ)
            if self._home is not None:
                env["FOLIO_HOME"] = str(self._home)
            flag = {"home": self._home} if self._from_flag else {}
            self._container = Container(load_settings(env=env, **flag))
        return self._container


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def config_cmd(lazy: _LazyContainer, as_json: bool) -> None:
    """Print the effective settings (API keys and database passwords masked) and where each
    comes from: default, config file, or environment variable."""
    settings = lazy.get().settings
    data = settings.masked()
    sources = {key: settings.source_of(key) for key in data if key in type(settings).model_fields}
    if as_json:
        click.echo(json.dumps({**data, "sources": sources}, indent=2))
        return
    from rich.table import Table

    from folio.entrypoints.cli.output import console, escape

    table = Table("setting", "value", "from", box=None, pad_edge=False)
    for key, value in data.items():
        shown = "(not set)" if value is None else str(value)
        origin = sources.get(key, "derived")
        table.add_row(key, escape(shown), origin if origin != "default" else "[dim]default[/]")
    console.print(table)
    if settings.config_file is None:
        console.print(
            "[dim]No config file: put settings in "
            f"{escape(str(settings.home / 'config.toml'))} (or FOLIO_CONFIG).[/]"
        )


_BOOKS = "folio.entrypoints.cli.books"
# Every command but `config`, imported when it runs (see lazy.py); the summaries are checked
# against the commands' docstrings by tests/unit/test_cli_lazy.py.
COMMANDS: LazyCommands = {
    "add": (
        f"{_BOOKS}:add_cmd",
        "Add books (EPUB, PDF, TXT, MD, HTML) to the library: files, or directories (every file"
        " of a supported type inside, in subdirectories too; hidden ones skipped).",
    ),
    "books": (f"{_BOOKS}:books_cmd", "List the books in the library."),
    "show": (f"{_BOOKS}:show_cmd", "Show a book: metadata, chapters, pages and reading position."),
    "rm": (f"{_BOOKS}:rm_cmd", "Remove a book with its passages and conversations."),
    "position": (
        f"{_BOOKS}:position_cmd",
        "Set how far you have read; nothing past it is ever searched or shown.",
    ),
    "edit": (
        f"{_BOOKS}:edit_cmd",
        "Change the title, author or series of BOOK (what the file said may be wrong or missing).",
    ),
    "search": (f"{_BOOKS}:search_cmd", "Search a book (up to your reading position) for QUERY."),
    "read": (
        "folio.entrypoints.cli.read:read_cmd",
        "Read BOOK's own text: a page (a citation's \"p.",
    ),
    "chat": (
        "folio.entrypoints.cli.chat:chat_cmd",
        "Chat with BOOK (id, id prefix or part of the title).",
    ),
    "demo": (
        "folio.entrypoints.cli.demo:demo_cmd",
        "Import the bundled demo book and chat with it (no model or network needed).",
    ),
    "serve": (
        "folio.entrypoints.cli.serve:serve_cmd",
        "Serve the HTTP API (OpenAPI docs at /docs, routes under /api/v1, Prometheus metrics at"
        " /metrics).",
    ),
    "mcp": (
        "folio.entrypoints.cli.mcp:mcp_cmd",
        "Serve your books to an MCP client over stdin/stdout (read-only, never past your"
        " position).",
    ),
    "conversations": (
        "folio.entrypoints.cli.conversations:conversations_group",
        "List and manage conversations.",
    ),
    "users": ("folio.entrypoints.cli.users:users_group", "Users of the HTTP API."),
    "eval": (
        "folio.entrypoints.cli.eval:eval_group",
        "Evaluate folio on the shared evaluation sets (retrieval, reformulation).",
    ),
    "db": (
        "folio.entrypoints.cli.db:db_group",
        "The library's database: SQLite under FOLIO_HOME, or PostgreSQL (FOLIO_DATABASE_URL).",
    ),
    "highlights": (
        "folio.entrypoints.cli.highlights:highlights_group",
        "Your highlights and notes from KOReader or a Kindle, anchored to the book's text.",
    ),
}
cli.lazy_commands.update(COMMANDS)


def main() -> None:
    """The console script. Errors folio raises on purpose are handled by each command; anything
    else is a bug, reported in one line (``--debug`` shows its traceback)."""
    try:
        cli.main(prog_name="folio")
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:
        if debug_enabled():
            raise
        click.echo(
            f"Error: unexpected {type(e).__name__}: {e} (this is a bug in folio; "
            "run with --debug for the traceback)",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
