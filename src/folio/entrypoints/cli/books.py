"""Library commands: add, books, show, rm, position, edit, search."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.table import Column, Table

from folio.domain.books import percent_text
from folio.domain.errors import FolioError, IngestError, IngestErrorCode
from folio.domain.series import MAX_SERIES_INDEX, index_text
from folio.entrypoints.cli.errors import EXIT_ERROR, debug_enabled, fail, handle_errors
from folio.entrypoints.cli.output import (
    console,
    err_console,
    escape,
    list_table,
    paged,
    print_table,
    squeezed,
)
from folio.entrypoints.serialize import book_detail, book_summary, hit_dict


@click.command("add")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--title", help="Title to use instead of the file's own (one file only).")
@click.option("--author", help="Author to use instead of the file's own (one file only).")
@click.option(
    "--position",
    help="How far you have read, so nothing later is ever shown: 'Chapter 5', 'Letter 2', "
    "'p. 45', '23%', 'not started' or 'whole' (for a folder: each book). Default: asked once "
    "on a terminal, before the import; otherwise none is set.",
)
@click.option(
    "--calibre",
    "calibre",
    type=click.Path(path_type=Path),
    help="Import a Calibre library: its folder (or its metadata.db). A folder given as FILES "
    "that holds a metadata.db is one too.",
)
@click.option(
    "--search",
    default="",
    help="With a Calibre library: only the books this Calibre search matches: title:, "
    "author:, series:, tag:, identifier:isbn:..., bare words; values as text, =exact, ~regex, "
    "true or false; and, or, not, -, parentheses. E.g. 'series:Discworld or tag:classic', "
    "'series:false', 'title:~^the', '-tag:unread'.",
)
@click.option(
    "--remove-missing",
    is_flag=True,
    help="With a Calibre library: remove from folio the books imported from it that are no "
    "longer in it, with their conversations (without it they are kept and reported).",
)
@click.option(
    "--again",
    is_flag=True,
    help="Read a file already in the library again, as this folio reads it (its chapters, "
    "passages and names): its conversations, highlights, title and your place stay.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file.")
@click.pass_obj
@handle_errors
def add_cmd(
    lazy: Any,
    files: tuple[Path, ...],
    title: str | None,
    author: str | None,
    position: str | None,
    calibre: Path | None,
    search: str,
    remove_missing: bool,
    again: bool,
    as_json: bool,
) -> None:
    """Add books (EPUB, PDF, TXT, MD, HTML) to the library: files, or directories (every file of
    a supported type inside, in subdirectories too; hidden ones skipped).

    Re-adding a file that is already in the library is detected by its content and reported
    (with --again it is read again, as a newer folio reads it, keeping its conversations,
    highlights, title and your place); a book whose title is already in the library (another
    format or edition) is added with a note and a name that tells the two apart ("Frankenstein
    (EPUB)").

    On a terminal, folio asks how far you have read before the import starts (once for a
    folder); the answer is checked against the book's own chapters and pages as soon as it is
    read, and asked again only if it names no place in it. Never asked when stdin is not a
    terminal: give --position there.

    A Calibre library (--calibre PATH, or a folder holding metadata.db) brings in every book, or
    those --search matches, from its EPUB (else PDF, else another format folio reads) with
    Calibre's title, authors, series, series index and identifiers. Calibre may keep running:
    its database is read from a snapshot. Running it again adds what is new and brings the
    books imported before up to date: a book changed in Calibre since gets its new title,
    authors, series and identifiers, a book whose file changed is read again (its conversations
    stay, your place is carried over, never forward); books no longer in Calibre are reported
    and kept, or removed with --remove-missing.
    """
    from folio.adapters.calibre_library import is_calibre_library
    from folio.adapters.parsers import EXTENSIONS  # here: the CLI starts without parser imports
    from folio.entrypoints.cli.progress import RichIngestProgress, ingest_progress, prepare_embedder

    libraries = [calibre] if calibre else [f for f in files if is_calibre_library(f)]
    if libraries:
        if len(libraries) > 1 or len(files) > (0 if calibre else 1) or title or author:
            raise click.UsageError("a Calibre library is imported on its own (no other files)")
        from folio.entrypoints.cli.calibre import import_calibre

        if import_calibre(
            lazy.get(), libraries[0], search, as_json=as_json, remove_missing=remove_missing
        ):
            sys.exit(EXIT_ERROR)
        return
    if search or remove_missing:
        raise click.UsageError(
            "--search and --remove-missing apply to a Calibre library (--calibre PATH)"
        )
    if again and (title or author or position):
        raise click.UsageError(
            "--again keeps the book's title, author and your place: change them with "
            "`folio edit` and `folio position`"
        )
    if not files:
        raise click.UsageError("give book files or folders, or --calibre PATH")

    paths, skipped = book_files(files)
    if (title or author) and len(paths) > 1:
        raise click.UsageError("--title and --author apply to a single file")
    if not paths:
        fail(
            f"{', '.join(map(str, files))} is a directory with no book files in it (folio reads"
            f" {', '.join(sorted(EXTENSIONS))})"
        )
    container = lazy.get()
    ingest = container.ingest
    results: list[dict[str, Any]] = []
    failed = False
    interactive = not as_json and sys.stdin.isatty() and console.is_terminal
    if position is None and interactive:
        position = _ask_position(paths)
    if not as_json:
        prepare_embedder(container)
    with ingest_progress(enabled=not as_json) as progress:
        for path in paths:
            try:
                result = ingest.execute(
                    path,
                    title=title,
                    author=author,
                    progress=RichIngestProgress(progress, path.name),
                    position=position,
                    retry_position=_ask_again(progress) if interactive else None,
                )
            except IngestError as e:
                if debug_enabled() and e.code != IngestErrorCode.DUPLICATE:
                    raise
                duplicate = e.code == IngestErrorCode.DUPLICATE
                if duplicate and again:
                    results.append(_read_again(container, path, e.details.get("book_id"), progress))
                    failed = failed or results[-1]["status"] == "error"
                    continue
                failed = failed or not duplicate
                results.append(
                    {
                        "file": str(path),
                        "status": "duplicate" if duplicate else "error",
                        "error": e.message,
                        "book_id": e.details.get("book_id"),
                    }
                )
                continue
            results.append(
                {
                    "file": str(path),
                    "status": "completed" if result.resumed else "added",
                    "book": result.book,
                    "chunks": result.chunk_count,
                    "same_title": [],
                }
            )
    _name_apart(
        results, container.library.list_books() if any("book" in r for r in results) else []
    )
    _print_add_results(results, as_json)
    if not as_json and (len(paths) > 1 or skipped):
        _print_add_summary(results, skipped)
    if failed:
        sys.exit(EXIT_ERROR)


def _read_again(container: Any, path: Path, book_id: Any, progress: Any) -> dict[str, Any]:
    """The library's book whose file ``path`` is, read again in place (``IngestBook.reingest``):
    its result, as ``add`` reports one."""
    from folio.entrypoints.cli.progress import RichIngestProgress

    book = container.library.get(str(book_id))
    try:
        result = container.ingest.reingest(
            book, path, progress=RichIngestProgress(progress, path.name)
        )
    except IngestError as e:
        return {"file": str(path), "status": "error", "error": e.message, "book_id": book.id}
    return {
        "file": str(path),
        "status": "read again",
        "book": result.book,
        "chunks": result.chunk_count,
        "same_title": [],
    }


POSITION_QUESTION = (
    "How far have you read {what}? A chapter as the book names it ('Chapter 5', 'Letter 2'), "
    "a page ('p. 45'), a percentage ('23%') or 'not started'; Enter: the whole book"
)


def _ask_position(paths: list[Path]) -> str:
    """Asked once, before any import: a folder's books get the same answer."""
    what = paths[0].name if len(paths) == 1 else f"these {len(paths)} books (each of them)"
    answer: str = click.prompt(POSITION_QUESTION.format(what=what), default="", show_default=False)
    return answer


def _ask_again(progress: Any) -> Any:
    """Asks again when the answer names no place in a book (the error lists its chapters), with
    the progress bars paused; an empty answer sets the whole book."""

    def retry(book: Any, error: FolioError) -> str | None:
        progress.stop()
        try:
            err_console.print(f"[red]{escape(error.message)}[/]")
            answer: str = click.prompt(
                POSITION_QUESTION.format(what=book.title), default="", show_default=False
            )
            return answer
        finally:
            progress.start()

    return retry


def _name_apart(results: list[dict[str, Any]], books: list[Any]) -> None:
    """Each added book as the library now names it (told apart from a same-titled book, one
    added in the same run included) and the other books sharing its title: one listing for all."""
    by_id = {b.id: b for b in books}
    for result in results:
        if "book" in result:
            book = by_id.get(result["book"].id, result["book"])
            result["book"] = book_summary(book)
            result["same_title"] = [
                {"id": b.id, "name": b.name, "format": b.format.value, "source_name": b.source_name}
                for b in books
                if b.id != book.id and b.title.casefold() == book.title.casefold()
            ]


def book_files(given: tuple[Path, ...]) -> tuple[list[Path], list[Path]]:
    """The files to add (each file as given; a directory's files of a supported type, recursively,
    in name order, hidden files and folders left out) and the files of directories skipped as not
    being a book format."""
    from folio.adapters.parsers import EXTENSIONS

    files: list[Path] = []
    skipped: list[Path] = []
    for path in given:
        if not path.is_dir():
            files.append(path)
            continue
        for found in sorted(path.rglob("*")):
            relative = found.relative_to(path).parts
            if any(part.startswith(".") for part in relative) or not found.is_file():
                continue
            (files if found.suffix.lower() in EXTENSIONS else skipped).append(found)
    return files, skipped


def _print_add_summary(results: list[dict[str, Any]], skipped: list[Path]) -> None:
    count = {k: sum(r["status"] == k for r in results) for k in ("added", "duplicate", "error")}
    count["added"] += sum(r["status"] == "completed" for r in results)
    parts = [f"{count['added']} added", f"{count['duplicate']} already in the library"]
    if again := sum(r["status"] == "read again" for r in results):
        parts.append(f"{again} read again")
    parts.append(f"{count['error']} refused")
    if skipped:
        names = ", ".join(p.name for p in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        parts.append(f"{len(skipped)} skipped (not a book format: {names})")
    console.print(f"[bold]Summary:[/] {escape('; '.join(parts))}.", highlight=False)


def _print_add_results(results: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(results if len(results) > 1 else results[0], indent=2))
        return
    for r in results:
        if r["status"] == "added":
            b = r["book"]
            console.print(
                f"[green]Added[/] {escape(b['name'])} [dim]({b['id'][:8]})[/]: "
                f"{b['pages']} pages, {b['chapters']} chapters, {r['chunks']} passages; "
                f"you have read {escape(b['reading_position']['description'])}",
                highlight=False,
            )
            for other in r["same_title"]:
                console.print(
                    f"  [yellow]Note:[/] the library also has {escape(other['name'])}"
                    f" ({escape(other['source_name'])}, {other['id'][:8]}); both are kept and"
                    f" told apart by these names (remove one with: folio rm {other['id'][:8]})",
                    highlight=False,
                )
        elif r["status"] == "read again":
            b = r["book"]
            console.print(
                f"[green]Read again[/] {escape(b['name'])} [dim]({b['id'][:8]})[/]: "
                f"{b['pages']} pages, {b['chapters']} chapters, {r['chunks']} passages; "
                f"you have read {escape(b['reading_position']['description'])}; its "
                "conversations and highlights are kept",
                highlight=False,
            )
        elif r["status"] == "completed":
            b = r["book"]
            console.print(
                f"[green]Completed[/] {escape(b['name'])} [dim]({b['id'][:8]})[/]: an interrupted"
                f" import finished indexing {r['chunks']} passages"
            )
        elif r["status"] == "duplicate":
            console.print(
                f"[yellow]Already in the library[/]: {escape(r['error'])} (`folio add --again`"
                " reads it again as this folio does, keeping its conversations)",
                highlight=False,
            )
        else:
            # One plain line per failed file: its reason names the file.
            click.echo(f"Error: {r['error']}", err=True)


@click.command("books")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def books_cmd(lazy: Any, as_json: bool) -> None:
    """List the books in the library."""
    books = lazy.get().library.list_books()
    if as_json:
        click.echo(json.dumps([book_summary(b) for b in books], indent=2))
        return
    if not books:
        console.print("The library is empty. Add a book with [bold]folio add FILE[/].")
        return
    table = list_table(
        Column("id", no_wrap=True),
        squeezed("title", ratio=3, min_width=12),
        squeezed("author", ratio=2),
        Column("fmt", no_wrap=True),
        Column("pages", justify="right", no_wrap=True),
        Column("ch.", justify="right", no_wrap=True),
        squeezed("read", ratio=2, min_width=8),
    )
    for b in books:
        table.add_row(
            b.id[:8],
            escape(b.name),
            escape(b.author or ""),
            b.format.value,
            str(b.page_count),
            str(sum(c.is_story for c in b.chapters)),
            escape(_short_position(b)),
        )
    print_table(table)


def _short_position(book: Any) -> str:
    """``17% (Chapter 3)``: how far, then where (a narrow column cuts the less useful end)."""
    position = book_summary(book)["reading_position"]
    if position.get("char_offset") is None or position["description"] == "the whole book":
        return "whole book"
    where = position.get("chapter") or (f"p. {position['page']}" if position.get("page") else "")
    percent = book.percent_read()
    shown = "" if percent is None else percent_text(percent)  # as `folio show` rounds it
    return f"{shown} ({where})" if where and shown else shown or where


@click.command("show")
@click.argument("book")
@click.option(
    "--all-chapters",
    "reveal",
    is_flag=True,
    help="Also show the titles of chapters past your reading position (they can be spoilers).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def show_cmd(lazy: Any, book: str, reveal: bool, as_json: bool) -> None:
    """Show a book: metadata, chapters, pages and reading position.

    BOOK is an id, a unique id prefix, or a unique part of the title. Titles of chapters past the
    reading position are hidden unless --all-chapters is given.
    """
    container = lazy.get()
    found = container.library.resolve(book)
    data = book_detail(found, reveal_unread=reveal)
    data["identifiers"] = container.identifiers_of(found.id)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    with paged(console):  # a long list of chapters opens in a pager on a terminal
        _print_book(found, data)


def _print_book(found: Any, data: dict[str, Any]) -> None:
    by = f" by {escape(found.author)}" if found.author else ""
    console.print(f"[bold]{escape(found.name)}[/]{by}{escape(_series_text(found))}")
    console.print(
        f"id {found.id}  format {found.format.value}  file {escape(found.source_name)}",
        highlight=False,
    )
    if data.get("identifiers"):
        ids = ", ".join(f"{k} {v}" for k, v in data["identifiers"].items())
        console.print(f"identifiers: {escape(ids)}", highlight=False)
    console.print(
        f"{found.page_count} pages, {sum(c.is_story for c in found.chapters)} chapters; "
        f"read: {escape(found.describe_position(now=datetime.now(UTC)))}"
    )
    if found.chapters:
        table = Table("#", "chapter", "page")
        hidden = 0
        for c in data["chapters"]:
            if c["title"] is None:
                hidden += 1
                continue
            title = escape(c["title"]) + (" [dim](unread)[/]" if c["unread"] else "")
            if c["kind"] != "story":
                title += f" [dim]({c['kind'].replace('_', ' ')})[/]"
            if c["current"]:
                title += " [bold]<- you are here[/]"
            table.add_row(str(c["index"]), title, str(c["page"] or ""))
        if hidden:
            table.add_row("…", f"[dim]{hidden} unread chapters (--all-chapters shows them)[/]", "")
        console.print(table)


@click.command("rm")
@click.argument("book")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
@handle_errors
def rm_cmd(lazy: Any, book: str, yes: bool) -> None:
    """Remove a book with its passages and conversations."""
    library = lazy.get().library
    found = library.resolve(book)
    if not yes and not click.confirm(
        f"Remove {found.name!r} and all its conversations?", default=False
    ):
        click.echo("Nothing removed.")
        return
    library.remove(found.id)
    console.print(f"Removed {escape(found.name)}.")


@click.command("position")
@click.argument("book")
@click.option("--page", help="Read up to and including this page (its printed label or number).")
@click.option(
    "--chapter",
    help="Read up to and including this chapter, as the book names it: '5', 'Chapter 5', 'V', "
    "'Letter 2' or words of its title.",
)
@click.option("--percent", type=float, help="Read this percentage of the book.")
@click.option(
    "--next", "next_chapter", is_flag=True, help="I finished the next chapter: read through it."
)
@click.option(
    "--reset",
    is_flag=True,
    help="No position: the whole book is open and answers say so (--percent 100: you have read "
    "it all).",
)
@click.option(
    "--include-matter/--exclude-matter",
    default=None,
    help="Count the front and back matter before your position (an editor's introduction, "
    "a preface, notes) as read before you finish the book. They may discuss the whole story: "
    "excluded until you ask.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def position_cmd(
    lazy: Any,
    book: str,
    page: str | None,
    chapter: str | None,
    percent: float | None,
    next_chapter: bool,
    reset: bool,
    include_matter: bool | None,
    as_json: bool,
) -> None:
    """Set how far you have read; nothing past it is ever searched or shown.

    Without an option, prints the current position.
    """
    library = lazy.get().library
    found = library.resolve(book)
    flags = [flag for flag in (next_chapter, reset) if flag]
    chosen = [x for x in (page, chapter, percent) if x is not None] + flags
    if len(chosen) > 1:
        raise click.UsageError("give one of --page, --chapter, --percent, --next, --reset")
    if chosen or include_matter is not None:
        found = library.set_position(
            found.id,
            page=page,
            chapter=chapter,
            percent=percent,
            reset=reset,
            next_chapter=next_chapter,
            include_matter=include_matter,
        )
    if as_json:
        click.echo(json.dumps(book_summary(found)["reading_position"], indent=2))
    else:
        where = found.describe_position(now=datetime.now(UTC))
        console.print(f"{escape(found.name)}: read {escape(where)}")


@click.command("edit")
@click.argument("book")
@click.option("--title", help="The new title.")
@click.option("--author", help="The new author ('' clears it).")
@click.option("--series", help="The series BOOK belongs to ('' clears the series and index).")
@click.option(
    "--index",
    "series_index",
    type=float,
    help=f"BOOK's number in its series (0 to {MAX_SERIES_INDEX:g}; 2.5 between 2 and 3).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the book as JSON.")
@click.pass_obj
@handle_errors
def edit_cmd(
    lazy: Any,
    book: str,
    title: str | None,
    author: str | None,
    series: str | None,
    series_index: float | None,
    as_json: bool,
) -> None:
    """Change the title, author or series of BOOK (what the file said may be wrong or missing).

    In a series, chatting with a volume also searches the earlier volumes (in full) and never the
    later ones.

    \b
    Examples:
      folio edit pg1342 --title "Pride and Prejudice" --author "Jane Austen"
      folio edit "The Two Towers" --series "The Lord of the Rings" --index 2
    """
    if title is None and author is None and series is None and series_index is None:
        raise click.UsageError("give --title, --author, --series and/or --index")
    library = lazy.get().library
    found = library.edit(
        library.resolve(book).id,
        title=title,
        author=author,
        series=series,
        series_index=series_index,
    )
    if as_json:
        click.echo(json.dumps(book_summary(found), indent=2))
        return
    by = f" by {escape(found.author)}" if found.author else " (no author)"
    console.print(f"{escape(found.title)}{by}{escape(_series_text(found))}", highlight=False)


def _series_text(book: Any) -> str:
    """`` (The Expanse, book 3)``, or "" outside a series."""
    if not book.series:
        return ""
    number = index_text(book.series_index)
    return f" ({book.series}, book {number})" if number else f" ({book.series})"


@click.command("search")
@click.argument("book")
@click.argument("query")
@click.option(
    "-k", "k", type=click.IntRange(1, 50), default=5, show_default=True, help="Number of passages."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def search_cmd(lazy: Any, book: str, query: str, k: int, as_json: bool) -> None:
    """Search a book (up to your reading position) for QUERY."""
    if not query.strip():
        raise click.UsageError("QUERY cannot be empty")
    from folio.entrypoints.cli.progress import embedding_note, prepare_embedder  # rich.progress

    container = lazy.get()
    found = container.library.resolve(book)
    if not as_json:
        prepare_embedder(container)
    hits = container.searcher.search(found, query, k=k, window=container.library.window(found))
    embedding_note(container, found)
    if as_json:
        click.echo(json.dumps([hit_dict(h) for h in hits], indent=2))
        return
    if not hits:
        console.print(
            "No passages found"
            + (
                "."
                if found.position.is_unlimited
                else f" in what you have read ({escape(found.describe_position())})."
            )
        )
        return
    for i, hit in enumerate(hits, 1):
        where = hit.location
        console.print(f"[bold]{i}.[/] [cyan]{escape(where)}[/]")
        console.print(f"   {escape(hit.snippet)}", highlight=False)


COMMANDS = [add_cmd, books_cmd, show_cmd, rm_cmd, position_cmd, edit_cmd, search_cmd]
__all__ = ["COMMANDS", "FolioError"]
