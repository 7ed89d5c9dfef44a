"""PostgreSQL migrations: applied once, in order, recorded, and safe when workers start together."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from folio.adapters.storage.postgres.db import (
    PgDatabase,
    PgMigration,
    packaged_pg_migrations,
    redacted,
)
from folio.domain.errors import StorageError, StorageErrorCode
from tests.postgres_support import PgTestServer


def test_a_blank_database_gets_every_packaged_migration_recorded(pg_server: PgTestServer) -> None:
    url = pg_server.database("migrate_blank", migrate=False)
    db = PgDatabase(url)
    versions = [m.version for m in packaged_pg_migrations()]
    assert db.applied_versions() == []
    assert db.migrate() == versions
    assert db.applied_versions() == versions
    assert db.migrate() == []  # nothing pending: nothing done
    with psycopg.connect(url) as conn:
        extension = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    assert extension is not None


def test_workers_migrating_at_once_apply_each_migration_exactly_once(
    pg_server: PgTestServer,
) -> None:
    url = pg_server.database("migrate_race", migrate=False)
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: PgDatabase(url).migrate(), range(6)))
    applied = [v for r in results for v in r]
    assert sorted(applied) == [m.version for m in packaged_pg_migrations()]
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY 1").fetchall()
    assert all(count == 1 for _, count in rows)


def test_a_later_migration_applies_on_top_of_the_previous_schema(pg_server: PgTestServer) -> None:
    url = pg_server.database("migrate_upgrade", migrate=False)
    current = packaged_pg_migrations()
    assert PgDatabase(url, migrations=current).migrate() == [m.version for m in current]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO books (id, title, format, source_name, content_hash, page_count,"
            " char_count, created_at) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 1, now())"
        )
    nxt = current[-1].version + 1
    later = PgMigration(nxt, "shelf", "ALTER TABLE books ADD COLUMN shelf TEXT DEFAULT 'main';")
    assert PgDatabase(url, migrations=[*current, later]).migrate() == [nxt]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT shelf FROM books WHERE id = 'b1'").fetchone() == ("main",)


def test_a_failing_migration_leaves_nothing_half_applied(pg_server: PgTestServer) -> None:
    url = pg_server.database("migrate_broken", migrate=False)
    current = packaged_pg_migrations()
    broken = PgMigration(
        current[-1].version + 1, "broken", "CREATE TABLE t1 (x int); SELECT no_such_function();"
    )
    with pytest.raises(StorageError):
        PgDatabase(url, migrations=[*current, broken]).migrate()
    db = PgDatabase(url)
    assert db.applied_versions() == [m.version for m in current]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('t1')").fetchone() == (None,)


def test_an_unreachable_server_is_a_clear_storage_error() -> None:
    url = "postgresql://folio:secret@127.0.0.1:1/folio"
    with pytest.raises(StorageError) as e:
        PgDatabase(url).migrate()
    assert e.value.code is StorageErrorCode.BUSY
    assert "Cannot reach the PostgreSQL database" in str(e.value)
    assert "secret" not in str(e.value)
    assert redacted(url) == "postgresql://folio:***@127.0.0.1:1/folio"


def test_version_6_makes_a_books_content_unique_per_owner(pg_server: PgTestServer) -> None:
    url = pg_server.database("migrate_identity", migrate=False)
    current = packaged_pg_migrations()
    PgDatabase(url, migrations=[m for m in current if m.version < 6]).migrate()
    insert = (
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        " created_at) VALUES (%s, 'T', 'txt', 't.txt', 'h', 1, 1, now())"
    )
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(insert, ("b-alice",))
        conn.execute("INSERT INTO owners VALUES ('book', 'b-alice', 'alice')")
    assert 6 in PgDatabase(url, migrations=current).migrate()
    with psycopg.connect(url, autocommit=True) as conn:
        owner_content = "SELECT owner_content FROM books WHERE id = %s"
        assert conn.execute(owner_content, ("b-alice",)).fetchone() == ("alice:h",)
        conn.execute("INSERT INTO owners VALUES ('book', 'b-bob', 'bob')")
        conn.execute(insert, ("b-bob",))  # the same file, another owner
        assert conn.execute(owner_content, ("b-bob",)).fetchone() == ("bob:h",)
        conn.execute("INSERT INTO owners VALUES ('book', 'b-alice-2', 'alice')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(insert, ("b-alice-2",))
