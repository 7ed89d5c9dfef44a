"""The JSON-file conversation store on a real directory: the files it writes, reads from disk every
time, optimistic turn numbers (CONFLICT, never a lost write), corrupt files, and book removal."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from folio.adapters.storage.json.conversations import JsonConversationStore
from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.app.conversations import Conversations
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book, BookFormat, Chunk, Page
from folio.domain.conversations import ChatMessage, Turn
from folio.domain.errors import ConversationError, ConversationErrorCode
from folio.domain.llm import PromptRole

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TEXT = "Call me Ishmael. Some years ago I went to sea."


def tiny_book(book_id: str = "book-1", content_hash: str = "h1") -> Book:
    page = Page(1, "1", 0, len(TEXT))
    return Book(book_id, "Moby-Dick", "Melville", BookFormat.TXT, "moby.txt", content_hash,
                page_count=1, char_count=len(TEXT), pages=(page,))  # fmt: skip


def add_to(books: object, book: Book) -> None:
    chunk = Chunk(f"{book.id}-c0", book.id, 0, TEXT, 0, len(TEXT), 1, 1)
    books.add(book, TEXT, [chunk], np.full((1, 8), 1 / np.sqrt(8), np.float32))  # type: ignore[attr-defined]


def messages(cid: str, n: int, question: str) -> list[ChatMessage]:
    return [
        ChatMessage.of(f"{cid}-{n}-0", cid, n, 0, PromptRole.USER, question, T0),
        ChatMessage.of(
            f"{cid}-{n}-1", cid, n, 1, PromptRole.TOOL_RESULT, "{}", T0, tool_use_id="t"
        ),
        ChatMessage.of(f"{cid}-{n}-2", cid, n, 2, PromptRole.ASSISTANT, "An answer.", T0),
    ]


def write_turn(store: JsonConversationStore, cid: str, question: str) -> int:
    with store.unit_of_work() as uow:
        n = uow.messages.last_turn_number(cid) + 1
        uow.messages.save_batch(messages(cid, n, question))
        uow.turns.save(Turn(cid, n, T0, queries=(question,)))
        uow.commit()
    return n


@pytest.fixture
def library() -> InMemoryLibrary:
    lib = InMemoryLibrary()
    add_to(lib, tiny_book())
    return lib


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "conversations"


@pytest.fixture
def convs(directory: Path, library: InMemoryLibrary) -> Conversations:
    return Conversations(JsonConversationStore(directory).unit_of_work, library)


def test_each_conversation_is_one_json_file_with_its_messages_and_turns(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1", title="Whales")
    write_turn(JsonConversationStore(directory), c.id, "Who is Ishmael?")

    assert sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) == [
        f"{c.id}.json"
    ]
    data = json.loads((directory / f"{c.id}.json").read_text())
    assert data["format"] == "folio.conversation-file" and data["version"] == 1
    assert data["conversation"]["title"] == "Whales"
    assert [m["role"] for m in data["messages"]] == ["user", "tool_result", "assistant"]
    assert data["turns"][0]["queries"] == ["Who is Ishmael?"]
    assert not list(directory.glob(".*.tmp")), "temporary files are replaced, never left"


def test_a_second_store_instance_sees_every_write_without_a_refresh(
    directory: Path, convs: Conversations, library: InMemoryLibrary
) -> None:
    c = convs.create("book-1")
    reader = Conversations(JsonConversationStore(directory).unit_of_work, library)
    writer = JsonConversationStore(directory)
    assert reader.get(c.id).messages == ()
    write_turn(writer, c.id, "one")
    assert len(reader.get(c.id).messages) == 3
    write_turn(writer, c.id, "two")
    assert [t.turn_number for t in reader.get(c.id).turns] == [1, 2]
    assert reader.summaries()[0].turn_count == 2
    convs.rename(c.id, "Renamed")
    assert reader.resolve(c.id[:6]).title == "Renamed"


def test_a_turn_number_taken_by_a_concurrent_writer_is_a_conflict_and_nothing_is_lost(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1")
    store = JsonConversationStore(directory)
    slow = store.unit_of_work()
    with slow:
        n = slow.messages.last_turn_number(c.id) + 1
        slow.messages.save_batch(messages(c.id, n, "slow"))
        slow.turns.save(Turn(c.id, n, T0))
        assert write_turn(store, c.id, "fast") == 1  # another writer commits turn 1 first
        with pytest.raises(ConversationError) as e:
            slow.commit()
        assert e.value.code == ConversationErrorCode.CONFLICT
    detail = convs.get(c.id)
    assert [m.content for m in detail.messages if m.role is PromptRole.USER] == ["fast"]
    assert write_turn(store, c.id, "slow, retried") == 2


def test_a_rename_committed_meanwhile_is_kept_when_a_turn_commits(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1")
    store = JsonConversationStore(directory)
    with store.unit_of_work() as turn:
        read = turn.conversations.get(c.id)
        turn.messages.save_batch(messages(c.id, 1, "q"))
        convs.rename(c.id, "Renamed meanwhile")
        turn.conversations.save(read.touched(T0.replace(year=2027)))  # as the chat turn does
        turn.commit()
    detail = convs.get(c.id)
    assert detail.conversation.title == "Renamed meanwhile"
    assert detail.conversation.updated_at == T0.replace(year=2027)
    assert len(detail.messages) == 3


def test_a_turn_that_fails_half_way_writes_nothing_to_disk(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1")
    path = directory / f"{c.id}.json"
    before = path.read_bytes()
    with pytest.raises(RuntimeError), JsonConversationStore(directory).unit_of_work() as uow:
        uow.messages.save_batch(messages(c.id, 1, "q")[:2])  # user + tool_result
        raise RuntimeError("provider failed")
    assert path.read_bytes() == before


def test_a_corrupt_file_is_a_clear_error_and_listing_skips_it(
    directory: Path, convs: Conversations
) -> None:
    good, bad = convs.create("book-1", title="Good"), convs.create("book-1", title="Bad")
    (directory / f"{bad.id}.json").write_text('{"format": "folio.conversation-file", "vers')

    with pytest.raises(ConversationError) as e:
        convs.get(bad.id)
    assert e.value.code == ConversationErrorCode.INVALID_STATE
    assert f"{bad.id}.json is corrupt" in e.value.message
    assert [s.conversation.title for s in convs.summaries()] == ["Good"]
    assert convs.get(good.id).conversation.title == "Good"


def test_a_file_with_a_missing_field_is_reported_as_corrupt(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1")
    path = directory / f"{c.id}.json"
    data = json.loads(path.read_text())
    del data["conversation"]["book_id"]
    path.write_text(json.dumps(data))
    with pytest.raises(ConversationError, match=r"corrupt.*book_id"):
        convs.get(c.id)


def test_ids_that_are_not_file_names_are_simply_not_found(convs: Conversations) -> None:
    for ref in ("../etc/passwd", ".locks", "a/b"):
        with pytest.raises(ConversationError) as e:
            convs.get(ref)
        assert e.value.code == ConversationErrorCode.NOT_FOUND


def test_removing_a_book_removes_its_conversation_files(tmp_path: Path) -> None:
    settings = load_settings(env={"FOLIO_HOME": str(tmp_path), "FOLIO_CONVERSATION_STORE": "json"})
    container = Container(settings)
    add_to(container.books, tiny_book())
    add_to(container.books, tiny_book("book-2", "h2"))
    doomed = container.conversations.create("book-1")
    kept = container.conversations.create("book-2")
    write_turn(JsonConversationStore(settings.conversations_dir), doomed.id, "q")

    container.library.remove("book-1")

    files = sorted(p.stem for p in settings.conversations_dir.glob("*.json"))
    assert files == [kept.id]


def test_a_full_conversation_file_refuses_the_next_turn_and_says_the_store_is_for_small_libraries(
    directory: Path, convs: Conversations
) -> None:
    c = convs.create("book-1")
    store = JsonConversationStore(directory, max_messages=6)
    write_turn(store, c.id, "one")
    write_turn(store, c.id, "two")
    with pytest.raises(ConversationError) as e:
        write_turn(store, c.id, "three")
    assert "small libraries" in e.value.message and "at most 6 messages" in e.value.message
    assert [t.turn_number for t in convs.get(c.id).turns] == [1, 2]  # nothing of turn 3 stored
