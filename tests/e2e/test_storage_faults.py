"""The data directory under faults: a long writer, a read-only library, a full disk, damaged or
foreign database files. Each gets a true, one-line message (never "a bug in folio"), and reads
keep working wherever they can."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from folio.adapters.storage.sqlite.db import Database, storage_error
from folio.adapters.storage.sqlite.library import SqliteLibrary
from folio.domain.books import PositionKind, ReadingPosition
from folio.domain.errors import StorageError, StorageErrorCode
from tests.e2e.conftest import RunFolio, ok, ok_json, one_error_line

STORY = "Chapter 1\n\n" + "The lighthouse keeper watched the harbour every night. " * 300

HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE books SET title = title")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


@pytest.fixture
def library_with_a_book(run_folio: RunFolio, tmp_path: Path) -> str:
    book = tmp_path / "story.txt"
    book.write_text(STORY)
    return str(ok_json(run_folio("add", str(book), "--json"))["book"]["id"])


def test_reads_work_while_another_process_holds_a_long_write_and_writes_say_busy(
    run_folio: RunFolio, library_with_a_book: str
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(run_folio.home / "folio.db"), "120"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        ok(run_folio("books"))
        ok(run_folio("show", library_with_a_book))
        ok(run_folio("search", library_with_a_book, "lighthouse keeper"))
        # the reads finished while the writer still held its lock: they did not wait for it
        assert holder.poll() is None, "the writer let go before the reads were done"
        line = one_error_line(run_folio("position", library_with_a_book, "--percent", "50"))
        assert "library is busy" in line and "Try again" in line
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
    ok(run_folio("position", library_with_a_book, "--percent", "50"))  # works once it is free


def test_a_damaged_database_file_is_named_with_what_to_do(run_folio: RunFolio) -> None:
    (run_folio.home / "folio.db").write_bytes(b"\x00garbage, not SQLite\x00" * 400)
    line = one_error_line(run_folio("books"))
    assert "folio.db" in line and "damaged" in line and "backup" in line
    assert "bug in folio" not in line


def test_another_applications_sqlite_file_is_not_taken_for_a_library(run_folio: RunFolio) -> None:
    conn = sqlite3.connect(run_folio.home / "folio.db")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    line = one_error_line(run_folio("books"))
    assert "another application's SQLite database" in line and "invoices" in line
    tables = sqlite3.connect(run_folio.home / "folio.db").execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'"
    )
    assert [r[0] for r in tables] == ["invoices"], "the foreign file was left untouched"


def test_a_read_only_library_can_be_read_and_says_read_only_on_a_write(
    run_folio: RunFolio, library_with_a_book: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = run_folio.home / "folio.db"
    # Root ignores permission bits, so the read-only disk is what os.access reports.
    monkeypatch.setattr("folio.adapters.storage.sqlite.db.os.access", lambda path, mode: False)
    db = Database(db_path)
    assert db.migrate() == [], "an up-to-date library needs no write to open"
    library = SqliteLibrary(db)
    (book,) = library.list()
    assert library.search(book.id, "lighthouse", None)
    with pytest.raises(StorageError) as caught:
        library.set_position(book.id, ReadingPosition(10, PositionKind.PERCENT, 1.0))
    assert caught.value.code == StorageErrorCode.READ_ONLY
    assert "read-only" in caught.value.message and "reading works" in caught.value.message


def test_a_full_disk_and_a_busy_lock_read_as_what_they_are() -> None:
    full = storage_error(sqlite3.OperationalError("database or disk is full"), "/x/folio.db")
    busy = storage_error(sqlite3.OperationalError("database is locked"), "/x/folio.db")
    assert full.code == StorageErrorCode.DISK_FULL and "disk holding /x/folio.db is full" in (
        full.message
    )
    assert busy.code == StorageErrorCode.BUSY and "busy" in busy.message
