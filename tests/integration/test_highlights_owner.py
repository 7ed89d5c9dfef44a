"""Highlights imported on this machine (the CLI's local reader) are matched only against the local
reader's own books: a same-titled book another user of the library uploaded gets none of them,
and the entries stay unmatched (real SQLite through the composition root)."""

from __future__ import annotations

from pathlib import Path

from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.users import ResourceKind

TEXT = (
    "# The Keeper\n\n## Chapter 1\n\n"
    + "The keeper wound the clock before the storm came in. " * 40
)
CLIPPINGS = """The Keeper (Anonymous)
- Your Highlight on page 1 | Location 1-2 | Added on Friday, 20 November 2026 21:14:03

The keeper wound the clock before the storm came in.
==========
"""


def test_a_local_import_never_lands_on_another_users_book(tmp_path: Path) -> None:
    env = {"FOLIO_HOME": str(tmp_path / "home"), "FOLIO_EMBEDDING_MODEL": "hashing"}
    container = Container(load_settings(env=env))
    source = tmp_path / "keeper.md"
    source.write_text(TEXT, encoding="utf-8")
    book = container.ingest.execute(source).book
    alice, _ = container.users.add("alice")
    container.ownership.set_owner(ResourceKind.BOOK, book.id, alice.id)  # alice's upload
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(CLIPPINGS, encoding="utf-8")

    result = container.highlights.import_file(clippings)

    assert result.books == () and result.unmatched == ("The Keeper (Anonymous)",)
    assert container.highlights.of_book(book) == []
