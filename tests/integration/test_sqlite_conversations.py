"""The SQLite conversation store on a real database file: cascades from books, persistence across
fresh instances (as after a restart), atomic turns, and what is actually in the tables."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.storage.sqlite import db as sqlite_db
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.adapters.storage.sqlite.library import SqliteLibrary
from folio.app.conversations import Conversations
from folio.domain.books import Book, BookFormat, Chunk, Page
from folio.domain.conversations import ChatMessage, Conversation, Turn
from folio.domain.errors import (
    BookError,
    StorageError,
    StorageErrorCode,
)
from folio.domain.llm import PromptRole, ToolInvocation

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TEXT = "Call me Ishmael. Some years ago, never mind how long precisely, I went to sea."


def add_tiny_book(db: Database, book_id: str = "book-1", content_hash: str = "h1") -> None:
    page = Page(1, "1", 0, len(TEXT))
    book = Book(book_id, "Moby-Dick", "Melville", BookFormat.TXT, "moby.txt", content_hash,
                page_count=1, char_count=len(TEXT), pages=(page,))  # fmt: skip
    chunk = Chunk(f"{book_id}-c0", book_id, 0, TEXT, 0, len(TEXT), 1, 1)
    vector = np.full((1, 8), 1 / np.sqrt(8), dtype=np.float32)
    SqliteLibrary(db).add(book, TEXT, [chunk], vector)


def counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("books", "chunks", "conversations", "chat_messages", "turns")
        }
    finally:
        conn.close()


def write_turn(
    store: SqliteConversationStore, cid: str, question: str, *, at: datetime = T0
) -> int:
    with store.unit_of_work() as uow:
        n = uow.messages.last_turn_number(cid) + 1
        uow.messages.save_batch([
            ChatMessage.of(f"{cid}-{n}-0", cid, n, 0, PromptRole.USER, question, at),
            ChatMessage.of(f"{cid}-{n}-1", cid, n, 1, PromptRole.ASSISTANT, "", at,
                        tool_invocations=(ToolInvocation("search_book", "t", {"query": "q"}),)),
            ChatMessage.of(f"{cid}-{n}-2", cid, n, 2, PromptRole.TOOL_RESULT, "{}", at,
                        tool_use_id="t", tool_name="search_book"),
            ChatMessage.of(f"{cid}-{n}-3", cid, n, 3, PromptRole.ASSISTANT, "An answer.", at),
        ])  # fmt: skip
        uow.turns.save(Turn(cid, n, at, queries=("q",)))
        uow.commit()
    return n


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(tmp_path / "folio.db")
    database.migrate()
    add_tiny_book(database)
    return database


@pytest.fixture
def convs(db: Database) -> Conversations:
    return Conversations(SqliteConversationStore(db).unit_of_work, SqliteLibrary(db))


def test_deleting_a_book_deletes_its_conversations_messages_and_turns(
    db: Database, convs: Conversations
) -> None:
    add_tiny_book(db, "book-2", "h2")
    store = SqliteConversationStore(db)
    doomed = [convs.create("book-1"), convs.create("book-1")]
    kept = convs.create("book-2")
    for c in [*doomed, kept]:
        write_turn(store, c.id, "Who is Ishmael?")
    assert counts(db.path) == {"books": 2, "chunks": 2, "conversations": 3, "chat_messages": 12,
                               "turns": 3}  # fmt: skip

    SqliteLibrary(db).delete("book-1")

    assert counts(db.path) == {"books": 1, "chunks": 1, "conversations": 1, "chat_messages": 4,
                               "turns": 1}  # fmt: skip
    assert [s.conversation.id for s in convs.summaries()] == [kept.id]


def test_conversations_and_messages_survive_a_restart(db: Database, convs: Conversations) -> None:
    c = convs.create("book-1", title="Whales")
    write_turn(SqliteConversationStore(db), c.id, "Who is Ishmael?")

    reopened = Database(db.path)  # what a new process does
    again = Conversations(SqliteConversationStore(reopened).unit_of_work, SqliteLibrary(reopened))
    detail = again.get(c.id)
    assert detail.conversation.title == "Whales"
    assert detail.messages[0].content == "Who is Ishmael?"
    assert detail.messages[1].tool_invocations[0].arguments == {"query": "q"}
    assert [t.turn_number for t in detail.turns] == [1]


def test_a_second_store_sees_turns_written_by_the_first_without_any_refresh(
    db: Database, convs: Conversations
) -> None:
    first, second = SqliteConversationStore(db), SqliteConversationStore(Database(db.path))
    c = convs.create("book-1")
    reader = Conversations(second.unit_of_work, SqliteLibrary(db))
    assert reader.get(c.id).messages == ()
    write_turn(first, c.id, "one")
    assert len(reader.get(c.id).messages) == 4
    write_turn(first, c.id, "two")
    assert [t.turn_number for t in reader.get(c.id).turns] == [1, 2]
    assert reader.summaries()[0].turn_count == 2


def test_a_turn_that_fails_after_its_tool_results_are_written_leaves_no_rows(
    db: Database, convs: Conversations
) -> None:
    c = convs.create("book-1")
    store = SqliteConversationStore(db)
    before = counts(db.path)
    with pytest.raises(RuntimeError), store.unit_of_work() as uow:
        uow.messages.save(ChatMessage.of("m0", c.id, 1, 0, PromptRole.USER, "q", T0))
        uow.messages.save(ChatMessage.of("m1", c.id, 1, 1, PromptRole.TOOL_RESULT, "{}", T0,
                                      tool_use_id="t", tool_name="search_book"))  # fmt: skip
        raise RuntimeError("provider failed")
    assert counts(db.path) == before
    assert convs.get(c.id).conversation.updated_at == c.updated_at


def test_datetimes_are_stored_as_utc_iso_strings_and_read_back_aware(db: Database) -> None:
    store = SqliteConversationStore(db)
    paris = timezone(timedelta(hours=1))
    with store.unit_of_work() as uow:
        uow.conversations.save(
            Conversation("c1", "book-1", "T", datetime(2026, 3, 1, 13, 0, tzinfo=paris), T0)
        )
        uow.commit()
    raw = sqlite3.connect(db.path).execute("SELECT created_at FROM conversations").fetchone()[0]
    assert raw == "2026-03-01T12:00:00.000000+00:00"
    with store.unit_of_work() as uow:
        got = uow.conversations.get("c1").created_at
    assert got == T0 and got.utcoffset() == timedelta(0)


def test_the_schema_refuses_unknown_roles_and_duplicate_turns(db: Database) -> None:
    conn = db.connect()
    conn.execute(
        "INSERT INTO conversations (id, book_id, title, created_at, updated_at) "
        "VALUES ('c1', 'book-1', 'T', 'x', 'x')"
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(
            "INSERT INTO chat_messages (id, conversation_id, turn_number, seq, role, content,"
            " created_at) VALUES ('m', 'c1', 1, 0, 'system', 'x', 'x')"
        )
    conn.execute(
        "INSERT INTO turns (conversation_id, turn_number, created_at) VALUES ('c1', 1, 'x')"
    )
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        conn.execute(
            "INSERT INTO turns (conversation_id, turn_number, created_at) VALUES ('c1', 1, 'x')"
        )


def test_a_conversation_for_a_book_not_in_the_database_is_refused(db: Database) -> None:
    with SqliteConversationStore(db).unit_of_work() as uow, pytest.raises(BookError):
        uow.conversations.save(Conversation("c1", "no-book", "T", T0, T0))


def test_a_writer_holding_the_lock_blocks_no_reader_and_a_second_writer_is_told_busy(
    db: Database, convs: Conversations, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = convs.create("book-1")
    monkeypatch.setattr(sqlite_db, "BUSY_TIMEOUT_MS", 100)
    store = SqliteConversationStore(db)
    with store.unit_of_work() as holder:
        holder.messages.save(ChatMessage.of("m0", c.id, 1, 0, PromptRole.USER, "q", T0))
        with store.unit_of_work(read_only=True) as reader:  # reads beside the write lock
            assert reader.conversations.get(c.id).id == c.id
            assert reader.messages.last_turn_number(c.id) == 0
        with pytest.raises(StorageError) as e, store.unit_of_work() as writer:
            writer.messages.save(ChatMessage.of("m1", c.id, 1, 0, PromptRole.USER, "r", T0))
        assert e.value.code == StorageErrorCode.BUSY and "busy" in e.value.message
        holder.commit()
    assert write_turn(store, c.id, "next") == 2


def test_a_version_1_database_with_books_upgrades_and_keeps_them_for_conversations(
    tmp_path: Path,
) -> None:
    old = Database(tmp_path / "old.db")
    assert old.migrate(target=1) == [1]
    conn = old.connect()  # a book as version 1 stored it (vector in the chunk row)
    conn.execute(
        "INSERT INTO books (id, title, author, format, source_name, content_hash, page_count,"
        " char_count, created_at) VALUES ('book-1', 'Moby-Dick', 'Melville', 'txt', 'moby.txt',"
        " 'h1', 1, ?, '2026-01-01T00:00:00+00:00')",
        (len(TEXT),),
    )
    conn.execute(
        "INSERT INTO chunks (id, book_id, ordinal, text, char_start, char_end, page_start,"
        " page_end, embedding) VALUES ('book-1-c0', 'book-1', 0, ?, 0, ?, 1, 1, ?)",
        (TEXT, len(TEXT), np.full(8, 1 / np.sqrt(8), dtype="<f4").tobytes()),
    )
    conn.close()
    assert 2 in old.migrate()

    convs = Conversations(SqliteConversationStore(old).unit_of_work, SqliteLibrary(old))
    c = convs.create("book-1")
    assert [s.book_title for s in convs.summaries()] == ["Moby-Dick"]
    assert convs.get(c.id).conversation == c
