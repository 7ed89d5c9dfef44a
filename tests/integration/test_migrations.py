"""Numbered migrations: applied once each, in order, recorded; upgrades from an older schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from folio.adapters.storage.sqlite.db import (
    Database,
    Migration,
    packaged_migrations,
    split_statements,
    transaction,
)
from folio.domain.errors import StorageError


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
    return {r[0] for r in rows}


def test_a_blank_database_gets_every_packaged_migration_applied_and_recorded(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "sub" / "folio.db")
    expected = [m.version for m in packaged_migrations()]

    assert db.migrate() == expected
    conn = db.connect()
    rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations").fetchall()
    assert [r["version"] for r in rows] == expected
    assert rows[0]["name"] == "library" and rows[0]["applied_at"]
    assert {"books", "book_texts", "chunks", "chunks_fts", "chunks_fts_insert"} <= _tables(conn)


def test_running_migrate_twice_applies_nothing_the_second_time(tmp_path: Path) -> None:
    db = Database(tmp_path / "folio.db")
    db.migrate()
    assert db.migrate() == []
    count = db.connect().execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
    assert count == len(packaged_migrations())


def test_a_database_at_version_1_upgrades_to_the_latest(tmp_path: Path) -> None:
    db = Database(tmp_path / "folio.db")
    assert db.migrate(target=1) == [1]
    conn = db.connect()
    conn.execute(
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        " created_at) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 1, '2026-01-01')"
    )
    later = [m.version for m in packaged_migrations() if m.version > 1]

    assert db.migrate() == later
    assert db.applied_versions() == [m.version for m in packaged_migrations()]
    assert conn.execute("SELECT title FROM books WHERE id = 'b1'").fetchone()[0] == "T"


def test_an_upgrade_applies_only_the_new_migrations_in_order(tmp_path: Path) -> None:
    first = Migration(1, "one", "CREATE TABLE a (x INTEGER);")
    second = Migration(2, "two", "ALTER TABLE a ADD COLUMN y TEXT;\nCREATE TABLE b (z INTEGER);")
    Database(tmp_path / "x.db", migrations=[first]).migrate()

    upgraded = Database(tmp_path / "x.db", migrations=[first, second])
    assert upgraded.migrate() == [2]
    assert upgraded.applied_versions() == [1, 2]
    assert {"a", "b"} <= _tables(upgraded.connect())


def test_a_failing_migration_leaves_no_trace_and_is_not_recorded(tmp_path: Path) -> None:
    good = Migration(1, "one", "CREATE TABLE a (x INTEGER);")
    bad = Migration(2, "two", "CREATE TABLE b (x INTEGER);\nTHIS IS NOT SQL;")
    db = Database(tmp_path / "x.db", migrations=[good, bad])

    with pytest.raises(StorageError, match="syntax error"):
        db.migrate()
    assert db.applied_versions() == [1]
    assert "b" not in _tables(db.connect())


def test_connections_enforce_foreign_keys_and_use_wal(tmp_path: Path) -> None:
    db = Database(tmp_path / "folio.db")
    db.migrate()
    conn = db.connect()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO book_texts (book_id, text) VALUES ('missing', 'x')")


def test_transaction_rolls_back_when_the_block_raises(tmp_path: Path) -> None:
    db = Database(tmp_path / "x.db", migrations=[Migration(1, "one", "CREATE TABLE a (x);")])
    db.migrate()
    conn = db.connect()
    with pytest.raises(RuntimeError), transaction(conn):
        conn.execute("INSERT INTO a VALUES (1)")
        raise RuntimeError("boom")
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 0
    assert not conn.in_transaction


def test_split_statements_keeps_trigger_bodies_whole() -> None:
    script = (
        "-- comment\nCREATE TABLE t (x);\n"
        "CREATE TRIGGER g AFTER INSERT ON t BEGIN\n  INSERT INTO t VALUES (1);\nEND;\n"
    )
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[1].endswith("END;")


def test_a_file_that_is_not_a_database_gives_a_storage_error_naming_it(tmp_path):
    from folio.adapters.storage.sqlite.db import Database
    from folio.domain.errors import StorageError

    path = tmp_path / "folio.db"
    path.write_bytes(b"this is not an SQLite database" * 100)
    with pytest.raises(StorageError, match=r"folio\.db"):
        Database(path).migrate()


def test_version_3_moves_existing_vectors_into_their_own_table(tmp_path: Path) -> None:
    db = Database(tmp_path / "folio.db")
    db.migrate(target=2)
    conn = db.connect()
    conn.execute(
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        " created_at) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 9, '2026-01-01')"
    )
    vector = bytes(range(16))
    conn.execute(
        "INSERT INTO chunks (id, book_id, ordinal, text, char_start, char_end, page_start,"
        " page_end, embedding) VALUES ('c1', 'b1', 0, 'the whale', 0, 9, 1, 1, ?)",
        (vector,),
    )
    db.migrate(target=3)
    columns = {r["name"] for r in conn.execute("PRAGMA table_info(chunks)")}
    assert "embedding" not in columns
    row = conn.execute("SELECT c.id, v.embedding FROM chunk_vectors v JOIN chunks c USING (seq)")
    assert [tuple(r) for r in row] == [("c1", vector)]
    hits = conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'whale'").fetchall()
    assert len(hits) == 1, "the full-text index survives the column drop"


def test_version_12_makes_a_books_content_unique_per_owner_and_keeps_existing_books(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "folio.db")
    db.migrate(target=11)
    conn = db.connect()
    for book_id, owner in (("b-local", None), ("b-alice", "alice")):
        conn.execute(
            "INSERT INTO books (id, title, format, source_name, content_hash, page_count,"
            " char_count, created_at) VALUES (?, 'T', 'txt', 't.txt', ?, 1, 1, '2026-01-01')",
            (book_id, f"hash-{book_id}"),
        )
        if owner:
            conn.execute("INSERT INTO owners VALUES ('book', ?, ?)", (book_id, owner))
    conn.commit()
    assert 12 in db.migrate()
    rows = conn.execute("SELECT id, content_hash, owner_content FROM books ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [
        ("b-alice", "hash-b-alice", "alice:hash-b-alice"),
        ("b-local", "hash-b-local", "local:hash-b-local"),
    ]
    # bob may now hold alice's file; alice may not hold it twice
    insert = (
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        " created_at, owner_content) VALUES (?, 'T', 'txt', 't.txt', 'hash-b-alice', 1, 1,"
        " '2026-01-01', ?)"
    )
    conn.execute(insert, ("b-bob", "bob:hash-b-alice"))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("b-alice-2", "alice:hash-b-alice"))
    conn.close()
