"""The book's lexicon stored with it, on the real stores: an import through the composition root
stores it, the people tool answers from it as it did when each process built it from the text,
a library from before lexicons were stored gets the migration and then the lexicon on first use,
and ``folio db copy`` carries it to PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.adapters.storage.postgres.copy import copy_library
from folio.adapters.storage.postgres.db import PgDatabase, packaged_pg_migrations
from folio.adapters.storage.postgres.library import PostgresLibrary
from folio.adapters.storage.sqlite.db import Database, packaged_migrations
from folio.agent.lexicon import Lexicons
from folio.agent.tools.base import ToolContext, ToolServices
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book
from folio.domain.lexicon import Lexicon
from folio.domain.passages import PEOPLE
from folio.entrypoints.cli.demo import bundled_book
from tests.postgres_support import VECTOR_SCAN, PgTestServer

ASKED = ["Clerval", "Henry Clerval", "Elizabeth", "Mr. Kirwin", "Justine", "Walton", "Nobody"]


def _container(home: Path) -> Container:
    return Container(
        load_settings(env={"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"})
    )


def _imported(home: Path) -> tuple[Container, Book]:
    container = _container(home)
    book = container.ingest.execute(bundled_book()).book
    return container, book.with_position(book.position_at_percent(40))


def _answers(container: Container, book: Book, lexicons: Lexicons) -> list[Any]:
    services = ToolServices(
        container.searcher, container.books, container.chunk_index, lexicons=lexicons
    )
    ctx = ToolContext(book=book)
    results = [container.tools.execute(PEOPLE, ctx, services, {"name": n}) for n in ASKED]
    assert all(r.success for r in results)
    return [r.data for r in results]


def _forget_lexicons(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM book_lexicons")


def test_an_imported_book_is_stored_with_its_lexicon_and_answers_as_one_built_from_text(
    tmp_path: Path,
) -> None:
    container, book = _imported(tmp_path)
    text = container.books.get_text(book.id)
    assert container.books.lexicon(book.id) == Lexicon.of(text)
    stored = _answers(container, book, Lexicons())
    _forget_lexicons(tmp_path / "folio.db")  # as every process did before: built from the text
    built = _answers(container, book, Lexicons())
    assert stored == built
    assert [len(a.people) for a in stored] == [1, 1, 1, 0, 1, 1, 0]  # Kirwin: met later


def test_a_library_from_before_lexicons_gets_the_migration_then_a_lexicon_on_first_use(
    tmp_path: Path,
) -> None:
    before = [m for m in packaged_migrations() if m.version != 13]
    assert max(m.version for m in before) > 13  # 013 comes after a later migration
    Database(tmp_path / "folio.db", migrations=before).migrate()
    _imported_without_lexicon(tmp_path)

    container = _container(tmp_path)
    [stored] = container.books.list()  # opening the library applied 013
    assert Database(tmp_path / "folio.db").applied_versions() == [
        m.version for m in packaged_migrations()
    ]
    # read to the end: the window shows the whole book, whose lexicon is the stored one (a
    # window short of the end learns names from the text it shows)
    book = stored.with_position(stored.position_at_percent(100))
    assert container.books.lexicon(book.id) is None
    answers = _answers(container, book, Lexicons())
    assert container.books.lexicon(book.id) == Lexicon.of(container.books.get_text(book.id))
    assert _answers(_container(tmp_path), book, Lexicons()) == answers
    container.library.remove(book.id)
    with sqlite3.connect(tmp_path / "folio.db") as conn:
        assert conn.execute("SELECT count(*) FROM book_lexicons").fetchone() == (0,)


def _imported_without_lexicon(home: Path) -> None:
    """A book imported by a folio without lexicons: its rows, copied from a fresh import."""
    fresh = home / "fresh"
    _imported(fresh)
    old = sqlite3.connect(home / "folio.db")
    try:
        old.execute("ATTACH DATABASE ? AS fresh", (str(fresh / "folio.db"),))
        with old:
            for table in ("books", "book_texts", "chunks", "owners"):
                old.execute(f"INSERT INTO {table} SELECT * FROM fresh.{table}")
    finally:
        old.close()


def test_a_postgresql_database_from_before_lexicons_gets_the_migration(
    pg_server: PgTestServer,
) -> None:
    url = pg_server.database("lexicon_upgrade", migrate=False)
    before = [m for m in packaged_pg_migrations() if m.version != 7]
    assert max(m.version for m in before) > 7
    PgDatabase(url, migrations=before).migrate()
    db = PgDatabase(url)
    try:
        assert db.migrate() == [7]
        assert db.applied_versions() == [m.version for m in packaged_pg_migrations()]
    finally:
        db.close()


def test_db_copy_carries_each_books_lexicon(tmp_path: Path, pg_server: PgTestServer) -> None:
    container, book = _imported(tmp_path)
    lexicon = container.books.lexicon(book.id)
    assert lexicon is not None
    url = pg_server.database("lexicon_copy")
    target = PgDatabase(url, max_size=2)
    try:
        copied = copy_library(
            Database(tmp_path / "folio.db"), InMemoryConversationStore().unit_of_work, target
        )
        assert copied.books == 1
        on_pg = PostgresLibrary(target, vector_scan=VECTOR_SCAN)
        assert on_pg.lexicon(book.id) == lexicon
        on_pg.delete(book.id)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM book_lexicons").fetchone() == (0,)
    finally:
        target.close()
