"""folio on PostgreSQL through its real entry points: the CLI with FOLIO_DATABASE_URL keeps
nothing in SQLite, and four ``folio serve`` workers share one library and one history (16 clients
x 10 turns on 4 conversations -> 160 gap-free turns; an upload through one worker is searchable
through every other)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in

V1 = "/api/v1"


@pytest.fixture(scope="module")
def pg_library(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated, empty PostgreSQL database for this module."""
    yield str(pg_server.database("serving"))


def psql_counts(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
            for table in ("books", "chunks", "chunk_vectors", "conversations", "turns", "users")
        }


def test_the_cli_keeps_the_whole_library_in_postgresql(
    pg_library: str, tmp_path: Path, pg_server: Any
) -> None:
    pg_server.truncate(pg_library)
    home = tmp_path / "home"
    env = {"FOLIO_DATABASE_URL": pg_library}
    book_id = added_book(home, env)
    ok(run_folio_in(home, "position", book_id, "--chapter", "Chapter 5", env=env))
    first = run_folio_in(home, "chat", book_id, "-m", "Who is Clerval?", env=env)
    ok(first)
    ok(run_folio_in(home, "chat", book_id, "-c", "-m", "What happens to him?", env=env))
    ok(run_folio_in(home, "users", "add", "alice", env=env))
    listed = ok_json(run_folio_in(home, "conversations", "list", "--json", env=env))
    assert [c["turns"] for c in listed] == [2]
    counts = psql_counts(pg_library)
    assert counts["books"] == 1 and counts["chunks"] == counts["chunk_vectors"] > 100
    assert (counts["conversations"], counts["turns"], counts["users"]) == (1, 2, 1)
    assert not (home / "folio.db").exists()  # nothing went to SQLite
    shown = ok_json(run_folio_in(home, "config", "--json", env=env))
    assert shown["database"] == pg_library


def added_book(home: Path, env: dict[str, str]) -> str:
    from folio.entrypoints.cli.demo import bundled_book

    added = ok_json(run_folio_in(home, "add", str(bundled_book()), "--json", env=env))
    assert added["status"] == "added", added
    return str(added["book"]["id"])


def new_conversation(client: httpx.Client, book_id: str) -> str:
    r = client.post(f"{V1}/conversations", json={"book_id": book_id})
    assert r.status_code == 201, r.text
    return str(r.json()["conversation_id"])


def turn_numbers(client: httpx.Client, conversation_id: str) -> list[int]:
    r = client.get(f"{V1}/conversations/{conversation_id}")
    assert r.status_code == 200, r.text
    return [t["turn_number"] for t in r.json()["turn_details"]]


@pytest.mark.slow
def test_four_workers_share_one_library_and_one_history(
    pg_library: str, tmp_path: Path, pg_server: Any
) -> None:
    pg_server.truncate(pg_library)
    home = tmp_path / "home"
    env = {"FOLIO_DATABASE_URL": pg_library, "FOLIO_MAX_CONCURRENT_TURNS": "16"}
    book_id = added_book(home, env)
    with (
        FolioServer(home, env=env, workers=4) as server,
        httpx.Client(base_url=server.url, timeout=120) as client,
    ):
        conversations = [new_conversation(client, book_id) for _ in range(4)]
        failures: list[str] = []
        workers_seen: set[int] = set()

        def reader(n: int) -> None:
            with httpx.Client(base_url=server.url, timeout=120) as c:
                workers_seen.add(c.get(f"{V1}/health").json()["worker"])
                for i in range(10):
                    cid = conversations[(n + i) % 4]
                    r = c.post(f"{V1}/conversations/{cid}/messages", json={"message": f"q{n}-{i}"})
                    if r.status_code != 200:
                        failures.append(f"{r.status_code} {r.text[:300]}")

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        numbers = [turn_numbers(client, cid) for cid in conversations]
        assert [len(n) for n in numbers] == [40, 40, 40, 40]  # exactly 160 turns
        assert all(n == list(range(1, 41)) for n in numbers)  # gap-free, none twice
        assert psql_counts(pg_library)["turns"] == 160
        assert len(workers_seen) > 1, "the turns were not spread over the workers"

        # A book uploaded through one worker is searchable through every worker.
        text = "\n\n".join(
            f"CHAPTER {i}\n\n" + f"The lighthouse keeper Marta counted ships on day {i}. " * 40
            for i in range(1, 6)
        )
        r = client.post(
            f"{V1}/books", files={"file": ("keeper.txt", text.encode())}, data={"title": "Keeper"}
        )
        assert r.status_code == 202, r.text
        job_url, uploaded = r.headers["location"], r.json()["book"]["id"]
        deadline = time.monotonic() + 120
        while (job := client.get(job_url).json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        assert job["status"] == "done", job
        searched_on: set[int] = set()
        for _ in range(200):  # fresh connections land on whichever worker accepts them
            with httpx.Client(base_url=server.url, timeout=30) as c:
                worker = c.get(f"{V1}/health").json()["worker"]
                hits = c.get(f"{V1}/books/{uploaded}/search", params={"q": "lighthouse"}).json()
                assert hits["results"], (worker, hits)
                searched_on.add(worker)
            if len(searched_on) == 4:
                break
        assert len(searched_on) == 4, f"only reached workers {searched_on}"


@pytest.mark.parametrize("store", ["sqlite", "json"])
def test_db_copy_moves_a_local_library_into_postgresql_losing_nothing(
    pg_server: Any, tmp_path: Path, store: str
) -> None:
    from folio.entrypoints.cli.demo import bundled_book

    home = tmp_path / "local"
    local = {"FOLIO_CONVERSATION_STORE": store}
    book_id = ok_json(run_folio_in(home, "add", str(bundled_book()), "--json", env=local))
    book_id = book_id["book"]["id"]
    ok(run_folio_in(home, "position", book_id, "--chapter", "Chapter 7", env=local))
    ok(run_folio_in(home, "chat", book_id, "-m", "Who is Clerval?", env=local))
    ok(run_folio_in(home, "chat", book_id, "-c", "-m", "What did he study?", env=local))
    ok(run_folio_in(home, "chat", book_id, "--new", "-m", "Who is Justine?", env=local))
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json", env=local))

    def snapshot(env: dict[str, str]) -> dict[str, Any]:
        conversations = ok_json(run_folio_in(home, "conversations", "list", "--json", env=env))
        return {
            "books": ok_json(run_folio_in(home, "books", "--json", env=env)),
            "users": ok_json(run_folio_in(home, "users", "list", "--json", env=env)),
            "exports": [
                ok_json(
                    run_folio_in(
                        home, "conversations", "export", c["conversation_id"], "--json", env=env
                    )
                )
                for c in conversations
            ],
        }

    before = snapshot(local)
    assert len(before["exports"]) == 2
    url = pg_server.database(f"copy_{store}", migrate=False)  # the copy migrates it
    copied = ok_json(run_folio_in(home, "db", "copy", "--to", url, "--json", env=local))["copied"]
    assert (copied["books"], copied["conversations"], copied["turns"], copied["users"]) == (
        1, 2, 3, 1,
    )  # fmt: skip
    assert copied["passages"] == copied["vectors"] == copied["sentence_vectors"] > 100
    on_pg = {"FOLIO_DATABASE_URL": url}
    assert snapshot(on_pg) == before  # the same books, hits, users and whole conversations
    assert snapshot(local) == before  # the local library is untouched
    assert passages_in_postgresql(url) == passages_in_sqlite(home / "folio.db")
    assert sentences_in(url) == sentences_in(home / "folio.db")  # byte for byte

    # the token made locally signs in against the server database
    from folio.bootstrap import Container
    from folio.config import load_settings

    container = Container(load_settings(env={"FOLIO_HOME": str(home), **on_pg}))
    assert container.users.authenticate(alice["token"]) == alice["id"]

    # a second copy into the same database is refused whole, naming what clashes
    again = run_folio_in(home, "db", "copy", "--to", url, env=local)
    assert again.returncode == 1 and "already holds 1 book(s)" in again.stderr
    assert "Traceback" not in again.stderr
    assert psql_counts(url)["turns"] == 3


def sentences_in(where: Path | str) -> dict[str, tuple[int, bytes]]:
    """Each passage's sentence vectors (width, float16 bytes), from a SQLite file or a URL."""
    import sqlite3

    import psycopg

    sql = (
        "SELECT c.id, v.dimensions, v.vectors FROM chunks c"
        " JOIN chunk_sentence_vectors v USING (seq)"
    )
    if isinstance(where, Path):
        with sqlite3.connect(where) as conn:
            rows = conn.execute(sql).fetchall()
    else:
        with psycopg.connect(where) as pg:
            rows = pg.execute(sql).fetchall()
    return {str(i): (int(d), bytes(v)) for i, d, v in rows}


def passages_in_sqlite(path: Path) -> list[tuple[Any, ...]]:
    import sqlite3

    import numpy as np

    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT c.id, c.text, c.char_start, c.char_end, c.page_start, c.page_end, c.chapter,"
            " c.chapter_index, v.embedding FROM chunks c JOIN chunk_vectors v USING (seq)"
            " ORDER BY c.id"
        ).fetchall()
    return [(*r[:-1], np.frombuffer(r[-1], dtype="<f4").tolist()) for r in rows]


def passages_in_postgresql(url: str) -> list[tuple[Any, ...]]:
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url) as conn:
        register_vector(conn)
        rows = conn.execute(
            "SELECT c.id, c.text, c.char_start, c.char_end, c.page_start, c.page_end, c.chapter,"
            " c.chapter_index, v.embedding FROM chunks c JOIN chunk_vectors v USING (seq)"
            ' ORDER BY c.id COLLATE "C"'
        ).fetchall()
    return [(*r[:-1], r[-1].to_list()) for r in rows]


def test_db_copy_explains_what_it_cannot_do(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    nothing = run_folio_in(home, "db", "copy", "--to", "postgresql://u:pw@127.0.0.1:1/x")
    assert nothing.returncode == 1 and "no local library to copy" in nothing.stderr
    ok(run_folio_in(home, "users", "add", "bob"))  # now a local library exists
    wrong = run_folio_in(home, "db", "copy", "--to", "mysql://u:secret@h/db")
    assert wrong.returncode == 1 and "must be a PostgreSQL URL" in wrong.stderr
    unreachable = run_folio_in(home, "db", "copy", "--to", "postgresql://u:secret@127.0.0.1:1/x")
    assert unreachable.returncode == 1 and "Cannot reach" in unreachable.stderr
    for result in (wrong, unreachable):
        assert "secret" not in result.stderr and "Traceback" not in result.stderr


def test_a_password_never_shows_even_in_a_url_the_driver_rejects(tmp_path: Path) -> None:
    for url in (
        "postgresql://u:pa%zzsecret@127.0.0.1:1/db",  # libpq repeats the bad token
        "postgresql://u@127.0.0.1:1/db?password=secret",  # a password in the query
    ):
        result = run_folio_in(tmp_path / "h", "books", env={"FOLIO_DATABASE_URL": url})
        assert result.returncode != 0 and "secret" not in result.stderr + result.stdout
        assert "Traceback" not in result.stderr and "Error:" in result.stderr
    shown = ok_json(run_folio_in(tmp_path / "h", "config", "--json", env={
        "FOLIO_DATABASE_URL": "postgresql://u@h/db?password=secret"}))  # fmt: skip
    assert "secret" not in json.dumps(shown)


def test_db_copy_is_all_or_nothing_and_names_what_it_cannot_copy(
    pg_server: Any, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    from folio.adapters.storage.memory.conversations import InMemoryConversationStore
    from folio.adapters.storage.postgres.copy import copy_library
    from folio.adapters.storage.postgres.db import PgDatabase
    from folio.adapters.storage.sqlite.db import Database
    from folio.domain.conversations import Conversation
    from folio.domain.errors import FolioError, StorageError

    home = tmp_path / "local"
    book_id = added_book(home, {})
    source = Database(home / "folio.db")
    url = pg_server.database("copy_atomic")
    target = PgDatabase(url, max_size=2)
    now = datetime.now(UTC)

    def store_with(*conversations: Conversation) -> Any:
        store = InMemoryConversationStore()
        with store.unit_of_work() as uow:
            for conversation in conversations:
                uow.conversations.save(conversation)
            uow.commit()
        return store.unit_of_work

    try:
        # a conversation about a book that is gone: refused before anything is written
        orphan = Conversation("c" * 32, "gone-book", "Lost", now, now)
        with pytest.raises(StorageError, match=r"\(cccccccc\) are about a book that is no longer"):
            copy_library(source, store_with(orphan), target)
        # a row the server refuses after the books were written: the whole copy is rolled back
        refused = Conversation("d" * 32, book_id, "   ", now, now)  # the schema wants a title
        with pytest.raises(FolioError):  # the adapter's ConversationError (INVALID_INPUT)
            copy_library(source, store_with(refused), target)
        assert psql_counts(url)["books"] == 0 and psql_counts(url)["chunks"] == 0
        fine = Conversation("e" * 32, book_id, "Fine", now, now)
        copied = copy_library(source, store_with(fine), target)
        assert (copied.books, copied.conversations) == (1, 1)
    finally:
        target.close()


def test_db_copy_knows_every_column_of_the_schema(pg_server: Any) -> None:
    """A migration that adds a table or a column must teach ``folio db copy`` to carry it, or the
    copy would silently lose it: every column is either copied as a row, or belongs to what is
    copied another way (vectors by passage id, conversations through their port, kept book files
    through their stores)."""
    import psycopg

    from folio.adapters.storage.postgres.copy import _TABLES

    url = pg_server.database("copy_schema")
    copied = {(t, c.strip()) for t, cols in _TABLES for c in cols.split(",")}
    another_way = {
        "chunk_vectors",
        "chunk_sentence_vectors",
        "conversations",
        "chat_messages",
        "turns",
        "schema_migrations",
    }
    # the kept book files: from the local library's directory through the file stores
    # (tests/integration/test_postgres_book_files.py), not rows of its database
    another_way |= {"book_files", "book_file_parts"}
    generated = {("chunks", "seq"), ("chunks", "tsv")}
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public'"
        ).fetchall()
    missing = {
        (t, c) for t, c in columns if t not in another_way and (t, c) not in copied | generated
    }
    assert missing == set()
