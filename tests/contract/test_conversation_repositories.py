"""One contract for every conversation store: the in-memory fake, SQLite, PostgreSQL and the JSON
files.

Each test runs against all four (the ``store`` fixture); a store that passes is interchangeable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from folio.adapters.storage.json.conversations import JsonConversationStore
from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.adapters.storage.postgres.conversations import PostgresConversationStore
from folio.adapters.storage.postgres.db import PgDatabase
from folio.adapters.storage.sqlite.conversations import SqliteConversationStore
from folio.adapters.storage.sqlite.db import Database
from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import PromptRole, ToolInvocation
from folio.domain.ports import ConversationUnitOfWork
from tests.postgres_support import PgTestServer

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Store:
    name: str
    uow: Callable[[], ConversationUnitOfWork]
    add_book: Callable[[str], None]  # SQLite's foreign key needs the book; idempotent


def _sqlite(tmp_path: Path) -> Store:
    db = Database(tmp_path / "folio.db")
    db.migrate()

    def add_book(book_id: str) -> None:
        conn = db.connect()
        conn.execute(
            "INSERT OR IGNORE INTO books (id, title, format, source_name, content_hash, page_count,"
            " char_count, created_at, owner_content)"
            " VALUES (?, 'T', 'txt', 't.txt', ?, 1, 1, '2026-01-01', ?)",
            (book_id, f"hash-{book_id}", f"local:hash-{book_id}"),
        )
        conn.close()

    return Store("sqlite", SqliteConversationStore(db).unit_of_work, add_book)


@pytest.fixture(scope="module")
def pg_conversations_url(pg_server: PgTestServer) -> str:
    return pg_server.database("conversation_contract")


def _postgresql(request: pytest.FixtureRequest) -> Iterator[Store]:
    url: str = request.getfixturevalue("pg_conversations_url")
    request.getfixturevalue("pg_server").truncate(url)
    db = PgDatabase(url, max_size=4)

    def add_book(book_id: str) -> None:
        with db.connection() as conn:
            conn.execute(
                "INSERT INTO books (id, title, format, source_name, content_hash, page_count,"
                " char_count, created_at) VALUES (%s, 'T', 'txt', 't.txt', %s, 1, 1, now())"
                " ON CONFLICT DO NOTHING",
                (book_id, f"hash-{book_id}"),
            )

    yield Store("postgresql", PostgresConversationStore(db).unit_of_work, add_book)
    db.close()


@pytest.fixture(params=["memory", "sqlite", "json", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield Store("memory", InMemoryConversationStore().unit_of_work, lambda _: None)
    elif request.param == "sqlite":
        yield _sqlite(tmp_path)
    elif request.param == "postgresql":
        yield from _postgresql(request)
    else:
        yield Store("json", JsonConversationStore(tmp_path / "c").unit_of_work, lambda _: None)


def conv(cid: str = "c1", book: str = "b1", *, at: datetime = T0, title: str = "T") -> Conversation:
    return Conversation(cid, book, title, at, at)


def msg(
    cid: str, turn: int, seq: int, role: PromptRole = PromptRole.USER, **kw: object
) -> ChatMessage:
    return ChatMessage.of(
        id=f"{cid}-{turn}-{seq}", conversation_id=cid, turn_number=turn, seq=seq, role=role,
        content=f"message {turn}.{seq}", created_at=kw.pop("at", T0), **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def turn(cid: str, number: int, **kw: object) -> Turn:
    return Turn(cid, number, T0, **kw)  # type: ignore[arg-type]


def saved(store: Store, *conversations: Conversation) -> None:
    for c in conversations:
        store.add_book(c.book_id)
    with store.uow() as uow:
        for c in conversations:
            uow.conversations.save(c)
        uow.commit()


# --- conversations --------------------------------------------------------------------------------
def test_a_saved_conversation_can_be_read_back_in_a_later_unit_of_work(store: Store) -> None:
    saved(store, conv("c1", title="About whales"))
    with store.uow() as uow:
        got = uow.conversations.get("c1")
    assert got == conv("c1", title="About whales")
    assert got.created_at.tzinfo is not None


def test_the_auto_title_flag_is_kept_and_a_rename_clears_it(store: Store) -> None:
    auto = Conversation("c1", "b1", "New conversation", T0, T0, auto_title=True)
    saved(store, auto)
    with store.uow() as uow:
        assert uow.conversations.get("c1").auto_title is True
        renamed = uow.conversations.update_title("c1", "Untitled")
        uow.commit()
    assert renamed.auto_title is False
    with store.uow() as uow:
        assert uow.conversations.get("c1") == replace(auto, title="Untitled", auto_title=False)


def test_save_twice_updates_instead_of_duplicating(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        uow.messages.save(msg("c1", 1, 0))
        uow.conversations.save(conv("c1", title="Renamed", at=T0 + timedelta(hours=1)))
        uow.commit()
    with store.uow() as uow:
        assert [c.title for c in uow.conversations.list_all()] == ["Renamed"]
        assert len(uow.messages.get_by_conversation("c1")) == 1  # an upsert, not a delete+insert


def test_get_by_book_lists_that_books_conversations_most_recent_first(store: Store) -> None:
    saved(store, conv("old", at=T0), conv("new", at=T0 + timedelta(days=1)),
          conv("other", "b2", at=T0 + timedelta(days=2)))  # fmt: skip
    with store.uow() as uow:
        assert [c.id for c in uow.conversations.get_by_book("b1")] == ["new", "old"]
        assert [c.id for c in uow.conversations.list_all()] == ["other", "new", "old"]
        assert uow.conversations.get_by_book("nobody") == []


def test_saving_messages_moves_the_conversation_to_the_top_of_the_list(store: Store) -> None:
    saved(store, conv("old", at=T0), conv("new", at=T0 + timedelta(days=1)))
    with store.uow() as uow:
        uow.messages.save(msg("old", 1, 0, at=T0 + timedelta(days=2)))
        uow.commit()
    with store.uow() as uow:
        assert [c.id for c in uow.conversations.list_all()] == ["old", "new"]
        assert uow.conversations.get("old").updated_at == T0 + timedelta(days=2)


def test_update_title_renames_and_rejects_an_empty_title(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        assert uow.conversations.update_title("c1", "  New   title ").title == "New title"
        uow.commit()
    with store.uow() as uow:
        assert uow.conversations.get("c1").title == "New title"
        with pytest.raises(ConversationError) as e:
            uow.conversations.update_title("c1", "   ")
        assert e.value.code == ConversationErrorCode.INVALID_INPUT


def test_delete_removes_the_conversation_with_its_messages_and_turns(store: Store) -> None:
    saved(store, conv("c1"), conv("c2"))
    with store.uow() as uow:
        uow.messages.save_batch([msg("c1", 1, 0), msg("c2", 1, 0)])
        uow.turns.save(turn("c1", 1))
        uow.commit()
    with store.uow() as uow:
        uow.conversations.delete("c1")
        uow.commit()
    with store.uow() as uow:
        assert [c.id for c in uow.conversations.list_all()] == ["c2"]
        assert uow.messages.get_by_conversation("c1") == []
        assert uow.turns.get_by_conversation("c1") == []
        assert uow.messages.last_turn_number("c1") == 0
        assert len(uow.messages.get_by_conversation("c2")) == 1


@pytest.mark.parametrize("action", ["get", "delete", "update_title"])
def test_unknown_conversation_ids_are_not_found(store: Store, action: str) -> None:
    with store.uow() as uow, pytest.raises(ConversationError) as e:
        if action == "update_title":
            uow.conversations.update_title("nope", "x")
        else:
            getattr(uow.conversations, action)("nope")
    assert e.value.code == ConversationErrorCode.NOT_FOUND


def test_messages_and_turns_of_an_unknown_conversation_are_not_found(store: Store) -> None:
    with store.uow() as uow:
        with pytest.raises(ConversationError) as e:
            uow.messages.save(msg("nope", 1, 0))
        assert e.value.code == ConversationErrorCode.NOT_FOUND
        with pytest.raises(ConversationError) as e:
            uow.turns.save(turn("nope", 1))
        assert e.value.code == ConversationErrorCode.NOT_FOUND


# --- messages and turns ---------------------------------------------------------------------------
def test_messages_come_back_ordered_by_turn_then_seq_with_every_field(store: Store) -> None:
    saved(store, conv("c1"))
    call = ToolInvocation("search_book", "tu1", {"query": "the white whale", "k": 3})
    batch = [
        msg("c1", 2, 1, PromptRole.ASSISTANT),
        msg("c1", 1, 2, PromptRole.TOOL_RESULT, tool_use_id="tu1", tool_name="search_book",
            is_error=True),
        msg("c1", 1, 0),
        msg("c1", 1, 1, PromptRole.ASSISTANT, tool_invocations=(call,)),
        msg("c1", 2, 0),
    ]  # fmt: skip
    with store.uow() as uow:
        uow.messages.save_batch(batch)
        uow.commit()
    with store.uow() as uow:
        got = uow.messages.get_by_conversation("c1")
    assert [(m.turn_number, m.seq) for m in got] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    assert got[1].tool_invocations == (call,)
    assert got[2] == batch[1]
    assert all(m.created_at == T0 for m in got)


def test_last_turn_number_is_zero_then_the_highest_turn(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        assert uow.messages.last_turn_number("c1") == 0
        uow.messages.save_batch([msg("c1", 1, 0), msg("c1", 2, 0)])
        assert uow.messages.last_turn_number("c1") == 2  # sees its own uncommitted writes
        uow.turns.save(turn("c1", 3))
        assert uow.messages.last_turn_number("c1") == 3
        uow.commit()
    with store.uow() as uow:
        assert uow.messages.last_turn_number("c1") == 3


def test_turns_keep_their_metadata(store: Store) -> None:
    saved(store, conv("c1"))
    source = Source("ch1", "Chapter 1", "12", "13", 100, 900, "Call me Ishmael.", 0.75)
    meta = turn("c1", 1, queries=("whale",), retrieval_attempts=1, sources=(source,),
                reasoning_steps=("searched",), guardrail_score=0.5, provider="offline",
                model="extractive", input_tokens=10, output_tokens=20, llm_calls=2,
                latency_ms=12.5, strategy="tool_use", extra={"k": [1, 2]},
                cache_read_tokens=6, cache_write_tokens=3)  # fmt: skip
    with store.uow() as uow:
        uow.turns.save(meta)
        uow.turns.save(turn("c1", 2))
        uow.commit()
    with store.uow() as uow:
        assert uow.turns.get_by_conversation("c1") == [meta, turn("c1", 2)]


def test_a_taken_turn_number_is_a_conflict(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        uow.turns.save(turn("c1", 1))
        uow.commit()
    with store.uow() as uow, pytest.raises(ConversationError) as e:
        uow.turns.save(turn("c1", 1))
    assert e.value.code == ConversationErrorCode.CONFLICT


def test_a_taken_message_number_is_a_conflict(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        uow.messages.save(msg("c1", 1, 0))
        uow.commit()
    with store.uow() as uow, pytest.raises(ConversationError) as e:
        uow.messages.save(ChatMessage.of("other-id", "c1", 1, 0, PromptRole.USER, "x", T0))
    assert e.value.code == ConversationErrorCode.CONFLICT


def test_delete_by_conversation_removes_only_that_conversations_messages(store: Store) -> None:
    saved(store, conv("c1"), conv("c2"))
    with store.uow() as uow:
        uow.messages.save_batch([msg("c1", 1, 0), msg("c2", 1, 0)])
        uow.commit()
    with store.uow() as uow:
        uow.messages.delete_by_conversation("c1")
        uow.commit()
    with store.uow() as uow:
        assert uow.messages.get_by_conversation("c1") == []
        assert len(uow.messages.get_by_conversation("c2")) == 1


# --- the unit of work -----------------------------------------------------------------------------
def test_leaving_without_commit_stores_nothing(store: Store) -> None:
    store.add_book("b1")
    with store.uow() as uow:
        uow.conversations.save(conv("c1"))
        uow.messages.save(msg("c1", 1, 0))
    with store.uow() as uow:
        assert uow.conversations.list_all() == []
        assert uow.messages.get_by_conversation("c1") == []


def test_a_turn_that_fails_half_way_leaves_no_trace(store: Store) -> None:
    saved(store, conv("c1"))
    with pytest.raises(RuntimeError), store.uow() as uow:
        n = uow.messages.last_turn_number("c1") + 1
        uow.messages.save(msg("c1", n, 0))
        uow.messages.save(
            msg(
                "c1",
                n,
                1,
                PromptRole.ASSISTANT,
                tool_invocations=(ToolInvocation("search_book", "t1", {}),),
            )
        )
        uow.messages.save(msg("c1", n, 2, PromptRole.TOOL_RESULT, tool_use_id="t1"))
        raise RuntimeError("the model went away")
    with store.uow() as uow:
        assert uow.messages.get_by_conversation("c1") == []
        assert uow.turns.get_by_conversation("c1") == []
        assert uow.conversations.get("c1").updated_at == T0


def test_rollback_discards_what_was_written_since_the_last_commit(store: Store) -> None:
    saved(store, conv("c1"))
    with store.uow() as uow:
        uow.messages.save(msg("c1", 1, 0))
        uow.commit()
        uow.messages.save(msg("c1", 2, 0))
        uow.rollback()
        uow.commit()
    with store.uow() as uow:
        assert [m.turn_number for m in uow.messages.get_by_conversation("c1")] == [1]


def test_a_unit_of_work_reads_what_others_committed_after_it_was_created(store: Store) -> None:
    saved(store, conv("c1"))
    reader = store.uow()
    with store.uow() as writer:
        writer.messages.save(msg("c1", 1, 0))
        writer.commit()
    with reader:
        assert len(reader.messages.get_by_conversation("c1")) == 1
