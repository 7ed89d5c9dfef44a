"""``folio highlights``: import the reader's highlights and notes from KOReader or a Kindle, and
list a book's (``folio highlights BOOK``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from folio.entrypoints.cli.errors import handle_errors
from folio.entrypoints.cli.output import console


class _ListByDefault(click.Group):
    """``folio highlights BOOK`` lists the book's highlights; ``highlights import`` imports."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "list", self.commands["list"], args
        return super().resolve_command(ctx, args)


@click.group("highlights", cls=_ListByDefault)
def highlights_group() -> None:
    """Your highlights and notes from KOReader or a Kindle, anchored to the book's text.

    \b
    Examples:
      folio highlights import "Pride and Prejudice.sdr"      a KOReader book folder
      folio highlights import "My Clippings.txt"             a Kindle's clippings
      folio highlights import metadata.epub.lua --book pride
      folio highlights pride                                 list a book's highlights
    """


@highlights_group.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--book", "book_ref", help="Give every entry to this book (id or title words).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def import_cmd(lazy: Any, path: Path, book_ref: str | None, as_json: bool) -> None:
    """Import PATH: a KOReader `.sdr` folder or its `metadata.*.lua`, or a Kindle `My
    Clippings.txt`. Entries go to the book of the same title (and author), or all to --book;
    entries for a book not in your library are kept until you add it. Importing the same file
    again adds nothing."""
    container = lazy.get()
    book = container.library.resolve(book_ref) if book_ref else None
    report = container.highlights.import_file(path, book=book)
    if as_json:
        books = [{"book_id": b.book.id, "title": b.book.title, "read": b.read,
                  "added": b.added, "anchored": b.anchored} for b in report.books]  # fmt: skip
        waiting = [{"book": w.named, "read": w.read, "added": w.added} for w in report.waiting]
        click.echo(json.dumps({"books": books, "unmatched": list(report.unmatched),
                               "waiting": waiting}, indent=2, ensure_ascii=False))  # fmt: skip
        return
    for line in report.summary():
        console.print(escape(line), highlight=False)


@highlights_group.command("list")
@click.argument("book")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def list_cmd(lazy: Any, book: str, as_json: bool) -> None:
    """List BOOK's highlights and notes in the book's order, up to your reading position (those
    past it, or not found in the book's text, are counted, not shown)."""
    container = lazy.get()
    found = container.library.resolve(book)
    shown = container.highlights.shown(container.library.window(found))
    items, withheld = shown.highlights, shown.hidden + shown.unplaced
    if as_json:
        listed = [_as_dict(found, h) for h in items]
        click.echo(json.dumps({"highlights": listed, "withheld": withheld}, indent=2,
                              ensure_ascii=False))  # fmt: skip
        return
    if withheld:
        console.print(
            f"[dim]{withheld} more past your reading position ({escape(found.describe_position())})"
            " or not found in the book's text: not shown.[/]",
            highlight=False,
        )
    if not items:
        console.print(f"No highlights for {escape(found.title)} so far: `folio highlights import`.")
        return
    for h in items:
        where = _where(found, h)
        console.print(f"[bold]{escape(where)}[/] [dim]{h.kind}[/]", highlight=False)
        if h.text:
            console.print(f"  “{escape(h.text)}”", highlight=False)
        if h.note:
            console.print(f"  [italic]Note:[/] {escape(h.note)}", highlight=False)


def _where(book: Any, h: Any) -> str:
    parts = [h.chapter] if h.chapter else []
    if h.char_start is not None and book.pages:
        parts.append(f"p. {book.page_at(h.char_start).label}")
    elif h.location:
        parts.append(h.location)
    return ", ".join(parts) or "(not found in the book's text)"


def _as_dict(book: Any, h: Any) -> dict[str, Any]:
    page = book.page_at(h.char_start).label if h.char_start is not None and book.pages else None
    return {"kind": str(h.kind), "text": h.text, "note": h.note, "chapter": h.chapter,
            "page": page, "char_start": h.char_start, "char_end": h.char_end,
            "location": h.location, "created": h.created, "source": h.source}  # fmt: skip
