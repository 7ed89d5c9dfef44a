"""``folio add --calibre PATH``: import a Calibre library (or the books a search matches), and
bring the books imported from it before up to date."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from folio.domain.editions import Carried
from folio.entrypoints.cli.output import console, err_console
from folio.entrypoints.cli.progress import RichIngestProgress, ingest_progress, prepare_embedder
from folio.entrypoints.serialize import book_summary


def import_calibre(
    container: Any, path: Path, search: str, *, as_json: bool, remove_missing: bool = False
) -> bool:
    """Import the library at ``path``; prints what happened; returns whether a book failed."""
    if not as_json:
        prepare_embedder(container)
    with ingest_progress(enabled=not as_json) as progress:
        report = container.calibre_import.execute(
            path,
            search=search,
            progress=lambda entry, file: RichIngestProgress(progress, file.name),
            remove_missing=remove_missing,
        )
    if as_json:
        click.echo(json.dumps(_as_dict(report), indent=2))
    else:
        _print(report, search)
    return bool(report.failed)


def _as_dict(report: Any) -> dict[str, Any]:
    def calibre(entry: Any) -> dict[str, Any]:
        return {
            "calibre_id": entry.calibre_id,
            "title": entry.title,
            "authors": list(entry.authors),
            "series": entry.series,
            "series_index": entry.series_index,
            "identifiers": entry.identifiers,
        }

    return {
        "matched": report.matched,
        "added": [{**calibre(e), "book": book_summary(b)} for e, b in report.added],
        "updated": [
            {
                **calibre(u.entry),
                "book": book_summary(u.book),
                "changes": list(u.changes),
                "position_carried": u.position.value if u.position else None,
            }
            for u in report.updated
        ],
        "existing": [{**calibre(e), "book_id": book_id} for e, book_id in report.existing],
        "not_in_calibre": [book_summary(b) for b in report.removed],
        "removed": [book_summary(b) for b in report.deleted],
        "no_format": [calibre(e) for e in report.no_format],
        "failed": [{**calibre(e), "error": message} for e, message in report.failed],
    }


def _print(report: Any, search: str) -> None:
    for entry, book in report.added:
        series = f" ({entry.series} #{entry.series_index:g})" if entry.series else ""
        console.print(
            f"[green]Added[/] {escape(book.title)}{escape(series)} [dim]({book.id[:8]})[/]",
            highlight=False,
        )
    for u in report.updated:
        moved = f"; position carried by {_CARRIED[u.position]}" if u.position else ""
        console.print(
            f"[cyan]Updated[/] {escape(u.book.title)}: {escape(', '.join(u.changes))}"
            f"{escape(moved)} [dim]({u.book.id[:8]})[/]",
            highlight=False,
        )
    for book in report.removed:
        err_console.print(
            f"[yellow]Not in Calibre any more[/] {escape(book.title)} [dim]({book.id[:8]})[/]:"
            " kept; remove it with 'folio rm', or all such books with --remove-missing",
            highlight=False,
        )
    for book in report.deleted:
        console.print(
            f"[red]Removed[/] {escape(book.title)}: no longer in Calibre", highlight=False
        )
    for entry in report.no_format:
        err_console.print(
            f"[yellow]Skipped[/] {escape(entry.title)}: no EPUB, PDF, HTML, Markdown or text file"
        )
    for entry, message in report.failed:
        click.echo(f"Error: {entry.title}: {message}", err=True)
    matched = f" matching {search!r}" if search else ""
    console.print(
        f"[bold]Summary:[/] {report.matched} Calibre books{escape(matched)}:"
        f" {len(report.added)} added, {len(report.updated)} updated,"
        f" {len(report.existing)} already in the library,"
        f" {len(report.no_format)} without a readable format, {len(report.failed)} failed"
        f"{_gone(report)}.",
        highlight=False,
    )


def _gone(report: Any) -> str:
    if report.deleted:
        return f"; {len(report.deleted)} no longer in Calibre removed from folio"
    if report.removed:
        return f"; {len(report.removed)} no longer in Calibre kept in folio"
    return ""


_CARRIED = {
    Carried.UNCHANGED: "its place (unchanged)",
    Carried.CHAPTER: "its chapter",
    Carried.TEXT: "the text you had reached",
    Carried.CHAPTER_START: "its chapter (moved back to the chapter's start)",
    Carried.FRACTION: "its place in the book (moved back to the start of a page)",
}
