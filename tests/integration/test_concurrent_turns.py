"""Two real processes append turns to the same conversation at the same time.

Each writer does what the chat turn does: inside one unit of work it reads the last turn number,
writes user, tool_result and assistant messages and the ``Turn`` with the next number, and commits;
on ``CONFLICT`` (the JSON store: another writer took that number first) or ``BUSY`` it retries.
Every turn must be stored exactly once, whole, with turn numbers 1..N and no gap, for SQLite (a
writing unit of work takes the lock on entry) and PostgreSQL (the conversation's row lock), where
the writers queue and need no retry, and for JSON files.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from folio.adapters.storage.json.conversations import JsonConversationStore
from folio.adapters.storage.postgres.conversations import PostgresConversationStore
from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.domain.conversations import Conversation
from folio.domain.llm import PromptRole
from folio.domain.ports import UnitOfWorkFactory

TURNS_PER_WRITER = 20

WORKER = r"""
import json, random, sys, time
from datetime import UTC, datetime
from pathlib import Path

from folio.adapters.storage.json.conversations import JsonConversationStore
from folio.adapters.storage.postgres.conversations import PostgresConversationStore
from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.domain.conversations import ChatMessage, Turn
from folio.domain.llm import PromptRole
from folio.domain.errors import ConversationError, StorageError

backend, location, cid, tag, count, go = sys.argv[1:]
if backend == "postgresql":
    from folio.adapters.storage.postgres.conversations import PostgresConversationStore
    from folio.adapters.storage.postgres.db import PgDatabase
    store = PostgresConversationStore(PgDatabase(location, max_size=1))
else:
    store = (SqliteConversationStore(Database(Path(location))) if backend == "sqlite"
             else JsonConversationStore(Path(location)))
while not Path(go).exists():
    time.sleep(0.002)
conflicts = 0
for i in range(int(count)):
    time.sleep(random.uniform(0, 0.01))  # the model's time between two turns
    while True:
        try:
            with store.unit_of_work() as uow:
                uow.conversations.get(cid)  # as ChatWithBook does (PostgreSQL: the row lock)
                n = uow.messages.last_turn_number(cid) + 1
                now = datetime.now(UTC)
                uow.messages.save_batch([
                    ChatMessage.of(f"{tag}{i}-0", cid, n, 0, PromptRole.USER, f"{tag}{i}", now),
                    ChatMessage.of(f"{tag}{i}-1", cid, n, 1, PromptRole.TOOL_RESULT, f"{tag}{i}",
                                now, tool_use_id=f"{tag}{i}", tool_name="search_book"),
                    ChatMessage.of(
                        f"{tag}{i}-2", cid, n, 2, PromptRole.ASSISTANT, f"{tag}{i}", now
                    ),
                ])
                time.sleep(0.002)  # widen the race: the other writer reads the same number
                uow.turns.save(Turn(cid, n, now, queries=(f"{tag}{i}",)))
                uow.commit()
            break
        except (ConversationError, StorageError) as e:  # what ChatWithBook retries too
            if e.code not in ("CONFLICT", "BUSY"):
                raise
            conflicts += 1
            time.sleep(random.uniform(0, 0.004))
print(json.dumps({"conflicts": conflicts}))
"""

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _sqlite(tmp_path: Path) -> tuple[str, UnitOfWorkFactory]:
    db = Database(tmp_path / "folio.db")
    db.migrate()
    conn = db.connect()
    conn.execute(
        "INSERT INTO books (id, title, format, source_name, content_hash, page_count, char_count,"
        " created_at, owner_content) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 1, '2026-01-01',"
        " 'local:h')"
    )
    conn.close()
    return str(db.path), SqliteConversationStore(db).unit_of_work


def _json(tmp_path: Path) -> tuple[str, UnitOfWorkFactory]:
    directory = tmp_path / "conversations"
    return str(directory), JsonConversationStore(directory).unit_of_work


def _postgresql(request: pytest.FixtureRequest) -> tuple[str, UnitOfWorkFactory]:
    url = request.getfixturevalue("pg_server").database("concurrent_turns")
    db = PgDatabase(url, max_size=2)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO books (id, title, format, source_name, content_hash, page_count,"
            " char_count, created_at) VALUES ('b1', 'T', 'txt', 't.txt', 'h', 1, 1, now())"
        )
    return url, PostgresConversationStore(db).unit_of_work


@pytest.mark.parametrize("backend", ["sqlite", "json", "postgresql"])
def test_two_processes_appending_turns_store_every_turn_once_with_gap_free_numbers(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "postgresql":
        location, uow = _postgresql(request)
    else:
        location, uow = (_sqlite if backend == "sqlite" else _json)(tmp_path)
    with uow() as u:
        u.conversations.save(Conversation("c1", "b1", "Race", T0, T0))
        u.commit()
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                backend,
                location,
                "c1",
                tag,
                str(TURNS_PER_WRITER),
                str(go),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    time.sleep(0.5)  # both interpreters started and waiting
    started = time.perf_counter()
    go.touch()
    outputs = [w.communicate(timeout=120) for w in writers]
    elapsed = time.perf_counter() - started
    for w, (_, err) in zip(writers, outputs, strict=True):
        assert w.returncode == 0, err
    conflicts = sum(json.loads(out)["conflicts"] for out, _ in outputs)

    with uow() as u:
        messages = u.messages.get_by_conversation("c1")
        turns = u.turns.get_by_conversation("c1")
    total = 2 * TURNS_PER_WRITER
    assert [t.turn_number for t in turns] == list(range(1, total + 1))
    assert len(messages) == 3 * total
    by_turn: dict[int, set[str]] = {}
    for m in messages:
        by_turn.setdefault(m.turn_number, set()).add(m.content)
    assert all(len(contents) == 1 for contents in by_turn.values()), "a turn mixes two writers"
    users = Counter(m.content for m in messages if m.role is PromptRole.USER)
    expected = {f"{tag}{i}" for tag in "AB" for i in range(TURNS_PER_WRITER)}
    assert set(users) == expected and set(users.values()) == {1}
    assert {t.queries[0] for t in turns} == expected
    writer_order = [t.queries[0][0] for t in turns]
    switches = sum(a != b for a, b in itertools.pairwise(writer_order))
    print(
        f"{backend}: {total} turns by 2 processes in {elapsed:.2f}s, "
        f"{conflicts} conflicts retried, writers alternated {switches} times"
    )
