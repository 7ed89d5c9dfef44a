"""The only place where folio's errors become messages and exit codes for people.

Exit codes: 0 ok, 1 invalid input or operation, 2 usage (click), 3 not found, 4 model provider
error, 5 conflict (e.g. a concurrent writer), 130 interrupted. ``--debug`` / ``FOLIO_DEBUG=1``
re-raise with the traceback for developers.

Invariant: every error message is ONE line on stderr, starting with ``Error: ``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, TypeVar

import click

from folio.domain.errors import (
    ConversationError,
    ConversationErrorCode,
    FolioError,
    LLMError,
)

EXIT_ERROR = 1
EXIT_NOT_FOUND = 3
EXIT_PROVIDER = 4
EXIT_CONFLICT = 5
EXIT_INTERRUPTED = 130


def exit_code_for(error: FolioError) -> int:
    if isinstance(error, LLMError):
        return EXIT_PROVIDER
    if error.is_not_found:
        return EXIT_NOT_FOUND
    if isinstance(error, ConversationError) and error.code is ConversationErrorCode.CONFLICT:
        return EXIT_CONFLICT
    return EXIT_ERROR


_debug = False


def set_debug(enabled: bool) -> None:
    """``--debug``: tracebacks instead of one-line errors."""
    global _debug
    _debug = enabled


def debug_enabled() -> bool:
    return _debug or os.environ.get("FOLIO_DEBUG", "").lower() in {"1", "true", "yes", "on"}


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    from folio.entrypoints.cli.output import clean  # rich: imported when there is an error

    click.echo(f"Error: {' '.join(clean(message).split())}", err=True)
    sys.exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn folio errors (and a few OS errors) into one-line messages and exit codes."""
    try:
        yield
    except FolioError as e:
        if debug_enabled():
            raise
        fail(e.message, exit_code_for(e))
    except KeyboardInterrupt:
        if debug_enabled():
            raise
        click.echo("Interrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except OSError as e:
        if debug_enabled():
            raise
        fail(f"{e.strerror or e} ({e.filename})" if e.filename else str(e))


F = TypeVar("F", bound=Callable[..., object])


def handle_errors(func: F) -> F:
    """Decorator form of ``user_errors`` for click commands."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> object:
        with user_errors():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
