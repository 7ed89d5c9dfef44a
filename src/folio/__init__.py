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

from importlib.metadata import PackageNotFoundError, version

from folio.bootstrap import Container
from folio.config import Settings, load_settings

try:
    __version__ = version("folio-reader")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["Container", "Settings", "__version__", "load_settings"]
