"""Writers wait their turn: concurrent conversation creations and chat turns on one SQLite file.

Two processes with eight threads each -- as two ``folio serve`` workers with their request threads
-- create conversations for two users and run offline chat turns in them, all at once, while a
thread of the test lists the conversations. Every creation and every turn must succeed (a writer
waits for the lock instead of being told the library is busy), each conversation must hold its
turns numbered 1..N once each, and every conversation must belong to the user who created it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.users import ResourceKind

PROCESSES = 2
THREADS = 8
TURNS = 3

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
