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

from rich.console import Console, RenderableType
from rich.markup import escape as _escape_markup

__all__ = ["clean", "console", "err_console", "escape", "make_console", "show_long"]

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
    import click

    out = to or console
    if not out.is_terminal:
        out.print(renderable, soft_wrap=True, highlight=False)
        return
    with out.capture() as captured:
        out.print(renderable, highlight=False)
    text = captured.get()
    if text.count("\n") < out.height - 1:
        out.file.write(text)
        out.file.flush()
    else:
        click.echo_via_pager(text)
