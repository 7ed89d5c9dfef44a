"""Where the CLI writes: rich consoles for stdout and stderr, and the escaping of user text.

Invariants: text that comes from a user or a book (titles, file names, questions, quotes) is always
escaped before it is printed as rich markup, so ``[/x]`` in a title is shown, never interpreted; and
when a stream is not a terminal, lines are not re-wrapped (a piped line stays whole).
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

__all__ = ["console", "err_console", "escape", "make_console"]


def make_console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    is_tty = stream.isatty()
    return Console(stderr=stderr, soft_wrap=not is_tty)


console = make_console()
err_console = make_console(stderr=True)
