"""Writers wait their turn: concurrent conversation creations and chat turns on one SQLite file.

Two processes with eight threads each -- as two ``folio serve`` workers with their request threads
-- create conversations for two users and run offline chat turns in them, all at once, while a
thread of the test lists the conversations. Every creation and every turn must succeed (a writer
waits for the lock instead of being told the library is busy), each conversation must hold its
turns numbered 1..N once each, and every conversation must belong to the user who created it.
Then, unit by unit: a second writer waits for the lock (SQLite) or the row lock (PostgreSQL) while
a read-only unit of work reads at once.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from folio.adapters.storage.postgres.conversations import PostgresConversationStore
from folio.adapters.storage.postgres.db import PgDatabase, pg_storage_error
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.app.writes import write
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.conversations import Conversation
from folio.domain.errors import StorageErrorCode
from folio.domain.ports import ConversationUnitOfWork
from folio.domain.users import ResourceKind

PROCESSES = 2
THREADS = 8
TURNS = 3
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
_C1 = Conversation("c1", "b1", "T", T0, T0)

WORKER = r"""
import json, sys, threading, time
from pathlib import Path
from folio.bootstrap import Container
from folio.config import load_settings

home, users, threads, turns, go = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), \
    int(sys.argv[4]), Path(sys.argv[5])
container = Container(load_settings(
    env={"FOLIO_HOME": home, "FOLIO_EMBEDDING_MODEL": "hashing", "FOLIO_PROVIDER": "offline"},
    conversation_store="sqlite",
))
scopes = [container.for_user(u) for u in users]
books = [scope.books.list()[0].id for scope in scopes]
results, errors = [], []
start = threading.Barrier(threads)

def client(n):
    scope, book = scopes[n % len(scopes)], books[n % len(scopes)]
    chat = scope.chat()
    start.wait()
    try:
        cid = scope.conversations.create(book).id
        for i in range(turns):
            chat.execute(cid, f"[{n}-{i}] Who keeps the lighthouse?")
        results.append({"user": scope.user_id, "conversation": cid})
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")

while not go.exists():
    time.sleep(0.002)
workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(json.dumps({"results": results, "errors": errors}))
"""

STORY = "\n\n".join(
    f"CHAPTER {i}\n\n"
    + " ".join(
        f"The keeper Marta climbed the lighthouse on night {i} and saw {j} ships."
        for j in range(30)
    )
    for i in range(1, 4)
)


def _container(home: Path) -> Container:
    env = {"FOLIO_HOME": str(home), "FOLIO_EMBEDDING_MODEL": "hashing"}
    return Container(load_settings(env=env, conversation_store="sqlite"))


def _library(tmp_path: Path) -> tuple[Path, list[str]]:
    """A library with two users, each owning a book of their own."""
    home = tmp_path / "home"
    container = _container(home)
    users = []
    for name in ("ann", "bob"):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"{name.title()}'s lighthouse\n\n{STORY}", encoding="utf-8")
        book = container.ingest.execute(path).book
        user, _ = container.users.add(name)
        container.ownership.set_owner(ResourceKind.BOOK, book.id, user.id)
        users.append(user.id)
    container.close()
    return home, users


def test_concurrent_creations_and_turns_in_two_processes_all_succeed_and_are_stored_once(
    tmp_path: Path,
) -> None:
    home, users = _library(tmp_path)
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(home),
                ",".join(users),
                str(THREADS),
                str(TURNS),
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    container = _container(home)
    reader_errors: list[str] = []
    reads = 0
    stop = threading.Event()

    def reader() -> None:  # lists conversations all along: reads never fail nor wait for writers
        nonlocal reads
        scope = container.for_user(users[0])
        while not stop.is_set():
            try:
                scope.conversations.summaries()
                reads += 1
            except Exception as e:
                reader_errors.append(f"{type(e).__name__}: {e}")
            time.sleep(0.01)

    listing = threading.Thread(target=reader)
    listing.start()
    time.sleep(1.0)  # the interpreters have started and wait for the signal
    go.touch()
    try:
        outputs = [w.communicate(timeout=240) for w in workers]
    finally:
        stop.set()
        listing.join()
        for w in workers:
            if w.poll() is None:
                w.kill()
    for w, (_, err) in zip(workers, outputs, strict=True):
        assert w.returncode == 0, err
    reports = [json.loads(out) for out, _ in outputs]
    errors = [e for r in reports for e in r["errors"]]
    assert errors == [], f"{len(errors)} of {PROCESSES * THREADS} clients failed: {errors[:3]}"
    assert reader_errors == [] and reads > 0

    created = [r for report in reports for r in report["results"]]
    assert len(created) == PROCESSES * THREADS
    for user in users:
        scope = container.for_user(user)
        mine = {c["conversation"] for c in created if c["user"] == user}
        listed = {s.conversation.id: s.turn_count for s in scope.conversations.summaries()}
        assert set(listed) == mine, "every conversation belongs to the user who created it"
        for cid in mine:
            detail = scope.conversations.get(cid)
            assert [t.turn_number for t in detail.turns] == list(range(1, TURNS + 1))
            questions = [m.message.content for m in detail.messages if m.message.role == "user"]
            assert len(questions) == len(set(questions)) == TURNS, "each turn stored once"
            assert listed[cid] == TURNS
    container.close()


def test_a_writer_waits_for_the_lock_and_a_reader_does_not_on_sqlite(tmp_path: Path) -> None:
    db = Database(tmp_path / "folio.db")
    db.migrate()
    store = SqliteConversationStore(db)
    _book(db.connect())
    seen: list[str] = []
    with store.unit_of_work() as holder:  # holds the write lock while the others try
        holder.conversations.save(Conversation("c1", "b1", "T", T0, T0))
        waiting = threading.Thread(target=lambda: seen.append(write(store.unit_of_work, _create)))
        waiting.start()
        time.sleep(0.3)
        with store.unit_of_work(read_only=True) as reader:
            assert reader.conversations.list_all() == [], "a reader sees what is committed"
        assert waiting.is_alive(), "the second writer waits for the lock"
        holder.commit()
    waiting.join(timeout=10)
    assert seen == ["c2"]
    with store.unit_of_work(read_only=True) as reader:
        assert sorted(c.id for c in reader.conversations.list_all()) == ["c1", "c2"]


def test_a_reader_does_not_wait_for_a_turn_being_stored_on_postgresql(
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("pg_server").database("waiting_writes")
    db = PgDatabase(url, max_size=3)
    with db.connection() as conn:
        _book(conn)
    store = PostgresConversationStore(db)
    write(store.unit_of_work, lambda uow: (uow.conversations.save(_C1), uow.commit()))
    seen: list[str] = []
    with store.unit_of_work() as holder:
        holder.conversations.get("c1")  # the row lock of a turn being stored
        other = threading.Thread(target=lambda: seen.append(write(store.unit_of_work, _rename)))
        other.start()
        with store.unit_of_work(read_only=True) as reader:
            assert reader.conversations.get("c1").title == "T"  # no wait for the lock
        time.sleep(0.3)
        assert other.is_alive() and seen == [], "a second writer waits for the row lock"
        holder.commit()
    other.join(timeout=10)
    assert seen == ["renamed"]
    db.close()


def test_postgresql_deadlocks_and_serialization_failures_are_busy_and_say_so() -> None:
    for refusal in (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
        error = pg_storage_error(refusal("deadlock detected"), "postgresql://u:secret@h/db")
        assert error.code is StorageErrorCode.BUSY
        assert "another writer" in error.message and "secret" not in error.message


def _book(conn: Any) -> None:
    sqlite = isinstance(conn, sqlite3.Connection)
    owner = (", owner_content", ", 'local:h'") if sqlite else ("", "")
    conn.execute(
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        f" created_at{owner[0]}) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 1,"
        f" '2026-01-01T00:00:00+00:00'{owner[1]})"
    )
    if sqlite:
        conn.close()


def _create(uow: ConversationUnitOfWork) -> str:
    uow.conversations.save(Conversation("c2", "b1", "U", T0, T0))
    uow.commit()
    return "c2"


def _rename(uow: ConversationUnitOfWork) -> str:
    title = uow.conversations.update_title("c1", "renamed").title
    uow.commit()
    return title
