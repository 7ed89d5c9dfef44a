"""A book's new edition stored in place of the old one (``IngestBook.reingest``) on the real
stores, SQLite and PostgreSQL: the same book id with the new text, chunks, vectors and lexicon,
nothing of the old text searchable, its conversation and identifiers kept, its place carried;
and what folio remembers of a Calibre import kept and forgotten with the book."""

from __future__ import annotations

from pathlib import Path

from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.calibre import CalibreSource
from tests.postgres_support import PgTestServer

OLD = "# Tide\n\n## Chapter 1\n\n{one}\n\n## Chapter 2\n\n{two}\n\n## Chapter 3\n\n{three}\n"


def words(tag: str, n: int = 150) -> str:
    return " ".join(f"{tag}{i}" for i in range(n)) + "."


def write(path: Path, *, added: str = "", third: str = "gamma") -> Path:
    one = words("alpha") + (f"\n\n{added}" if added else "")
    path.write_text(OLD.format(one=one, two=words("beta"), three=words(third)))
    return path


def container(home: Path, url: str | None = None) -> Container:
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    return Container(load_settings(env={**env, "FOLIO_DATABASE_URL": url} if url else env))


def check_new_edition(folio: Container, tmp_path: Path) -> None:
    book = folio.ingest.execute(write(tmp_path / "tide.md")).book
    book = folio.books.set_position(book.id, book.position_at_chapter("2"))
    talk = folio.conversations.create(book.id, "About the tide")
    folio._identifier_store.set_identifiers(book.id, {"isbn": "978"})
    sources = folio.calibre_sources
    sources.save(CalibreSource(book.id, "lib", "uuid-1", "2026-01-01", "tide.md", 1, 2))

    result = folio.ingest.reingest(
        book,
        write(tmp_path / "tide-2.md", added="A corrected sentence of this edition.", third="delta"),
    )

    new = folio.books.get(book.id)
    assert new.content_hash == result.book.content_hash != book.content_hash
    assert "corrected sentence" in folio.books.get_text(book.id)
    assert new.describe_position().startswith("through Chapter 2")
    assert new.position.char_offset > book.position.char_offset  # type: ignore[operator]
    hits = folio.chunk_index.search(book.id, "corrected sentence", None, k=3)
    assert hits and "corrected sentence" in hits[0].chunk.text
    gone = folio.chunk_index.search(book.id, "gamma5 gamma6", None, k=3)
    assert not any("gamma" in hit.chunk.text for hit in gone)  # the old text is not searchable
    assert folio.books.chunks_without_vectors(book.id) == []  # embedded again
    assert [c.conversation.id for c in folio.conversations.summaries(book.id)] == [talk.id]
    assert folio.identifiers_of(book.id)["isbn"] == "978"
    assert sources.get(book.id) is not None and sources.of_library("lib")[0].book_id == book.id

    folio.books.delete(book.id)
    assert sources.get(book.id) is None and sources.of_library("lib") == []


def test_a_new_edition_replaces_the_text_and_keeps_the_rest_on_sqlite(tmp_path: Path) -> None:
    check_new_edition(container(tmp_path / "home"), tmp_path)


def test_a_new_edition_replaces_the_text_and_keeps_the_rest_on_postgres(
    tmp_path: Path, pg_server: PgTestServer
) -> None:
    check_new_edition(container(tmp_path / "home", pg_server.database("editions")), tmp_path)
