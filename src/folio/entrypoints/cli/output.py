"""Where the CLI writes: rich consoles for stdout and stderr, and the escaping of user text.

Invariants: text that comes from a user, a book or a model (titles, file names, questions, quotes,
answers) is always cleaned of control characters (an ESC sequence inside a book could otherwise
retitle or repaint the reader's terminal) and escaped before it is printed as rich markup, so
``[/x]`` in a title is shown, never interpreted; and when a stream is not a terminal, lines are not
re-wrapped (a piped line stays whole).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape as _escape_markup
from rich.table import Column, Table

__all__ = [
    "clean",
    "console",
    "err_console",
    "escape",
    "list_table",
    "make_console",
    "paged",
    "print_table",
    "show_long",
    "squeezed",
]

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F: CSI, OSC, ...).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` without control characters (tab and newline stay)."""
    return _CONTROL.sub("", text)


def escape(text: str) -> str:
    """``text`` cleaned of control characters and escaped for rich markup."""
    return _escape_markup(clean(text))


def make_console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    is_tty = stream.isatty()
    return Console(stderr=stderr, soft_wrap=not is_tty)


console = make_console()
err_console = make_console(stderr=True)


def show_long(renderable: RenderableType, *, to: Console | None = None) -> None:
    """Print ``renderable``; on a terminal, in a pager (``$PAGER``, else ``less``) when it is
    taller than the screen, as git does. Piped output is printed as it is, never re-wrapped."""
    out = to or console
    with paged(out):
        out.print(renderable, highlight=False)


@contextmanager
def paged(out: Console | None = None) -> Iterator[None]:
    """What is printed to ``out`` inside the block goes, on a terminal, through a pager when it
    is taller than the screen (``$PAGER``, else ``less -R``: colours and Markdown kept); printed
    as it is otherwise."""
    import click

    out = out or console
    if not out.is_terminal:
        yield
        return
    with out.capture() as captured:
        yield
    text = captured.get()
    if text.count("\n") < out.height - 1:
        out.file.write(text)
        out.file.flush()
    else:
        click.echo_via_pager(text)


# Piped output is never cut or wrapped: a table is as wide as its longest row needs.
_UNBOUNDED = 100_000


def list_table(*columns: Column, title: str | None = None) -> Table:
    """A compact listing (no side borders, little padding), so that a row of a library or of a
    conversation list fits 80 columns; make the wide columns with ``squeezed``, print it with
    ``print_table``."""
    return Table(
        *columns,
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        title_justify="left",
    )


def squeezed(header: str, *, ratio: int = 1, min_width: int = 6) -> Column:
    """A column that takes its share of a terminal's width and ends its text with … rather than
    wrapping it onto more lines."""
    return Column(header, ratio=ratio, min_width=min_width, no_wrap=True, overflow="ellipsis")


def print_table(table: Table, *, to: Console | None = None) -> None:
    """On a terminal, ``table`` fits the screen (its ``squeezed`` columns share what the others
    leave, their long texts end with …); piped, every row is whole on one line, however long."""
    out = to or console
    if not out.is_terminal:
        Console(file=out.file, width=_UNBOUNDED, no_color=True).print(table)
        return
    _fit(table, out.width)
    out.print(table)


def _fit(table: Table, width: int) -> None:
    """Give each ``squeezed`` column (those with a ratio) a width, so that the table fits
    ``width``: the other columns keep their natural width; the squeezed ones share the rest by
    their ratios, none wider than its longest text (what one does not need goes to the others)."""
    natural = [_natural_width(c) for c in table.columns]
    squeezable = [i for i, c in enumerate(table.columns) if c.ratio]
    dividers = len(table.columns) - 1 if table.box else 0
    padding = sum(table.padding[1] + table.padding[3] for _ in table.columns) + dividers
    left = width - padding - sum(w for i, w in enumerate(natural) if i not in squeezable)
    if sum(natural[i] for i in squeezable) <= left:
        return
    pending = list(squeezable)
    while pending:
        total_ratio = sum(table.columns[i].ratio or 1 for i in pending)
        shares = {i: left * (table.columns[i].ratio or 1) // total_ratio for i in pending}
        fitting = [i for i in pending if natural[i] <= shares[i]]
        if not fitting:
            for i in pending:
                table.columns[i].width = max(shares[i], table.columns[i].min_width or 1)
            return
        for i in fitting:
            left -= natural[i]
            pending.remove(i)


def _natural_width(column: Column) -> int:
    from rich.text import Text

    cells = [Text.from_markup(c) if isinstance(c, str) else c for c in column.cells]
    widths = [c.cell_len for c in cells if isinstance(c, Text)]
    header = column.header if isinstance(column.header, str) else ""
    return max([len(header), *widths])
