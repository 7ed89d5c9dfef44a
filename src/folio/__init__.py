"""folio: a reading companion you talk to.

As a library::

    from pathlib import Path
    from folio import Container

    folio = Container()                      # settings from FOLIO_HOME / config.toml / environment
    book = folio.ingest.execute(Path("frankenstein.epub")).book
    folio.library.set_position(book.id, chapter=5, page=None, percent=None, reset=False)
    conversation = folio.conversations.create(book.id)
    turn = folio.chat().execute(conversation.id, "Who is Victor's friend from Geneva?")
    print(turn.answer, [(c.chapter, c.page_start) for c in turn.citations])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from folio.bootstrap import Container
    from folio.config import Settings, load_settings

__all__ = ["Container", "Settings", "__version__", "load_settings"]


def __getattr__(name: str) -> Any:
    """The public names, imported on first use: ``folio --help`` needs none of them."""
    if name == "Container":
        from folio.bootstrap import Container

        return Container
    if name in ("Settings", "load_settings"):
        from folio import config

        return getattr(config, name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("folio-reader")
        except PackageNotFoundError:  # running from a source tree that is not installed
            return "0+unknown"
    raise AttributeError(f"module 'folio' has no attribute {name!r}")
