"""The conversation use cases against the in-memory fakes: create, list, resolve, rename, delete,
export (Markdown and JSON) and import."""

from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from folio.adapters.storage.memory.books import InMemoryLibrary
from folio.adapters.storage.memory.conversations import InMemoryConversationStore
from folio.app.conversations import PLACEHOLDER_TITLE, Conversations
from folio.domain.books import Book, BookFormat
from folio.domain.conversations import ChatMessage, Source, Turn
from folio.domain.errors import BookError, ConversationError, ConversationErrorCode
from folio.domain.llm import PromptRole, ToolInvocation
from folio.domain.ports import UnitOfWorkFactory

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def make_book(book_id: str = "book-1", title: str = "Moby-Dick", content_hash: str = "h1") -> Book:
    return Book(book_id, title, "Herman Melville", BookFormat.TXT, f"{book_id}.txt", content_hash,
                page_count=3, char_count=100)  # fmt: skip


@pytest.fixture
def library() -> InMemoryLibrary:
    lib = InMemoryLibrary()
    lib.add(make_book(), "text", [], np.zeros((0, 4), dtype=np.float32))
    return lib


@pytest.fixture
def store() -> InMemoryConversationStore:
    return InMemoryConversationStore()


@pytest.fixture
def convs(store: InMemoryConversationStore, library: InMemoryLibrary) -> Conversations:
    ids = (
        f"{prefix}{n:04d}" for n, prefix in zip(itertools.count(), itertools.cycle(["aa", "ab"]))
    )
    return Conversations(store.unit_of_work, library, clock=Clock(), new_id=lambda: next(ids))


def write_turn(uow: UnitOfWorkFactory, cid: str, question: str, answer: str, *, at: datetime = T0,
               search: str | None = None) -> int:  # fmt: skip
    """What the chat turn writes: user, [assistant tool call, tool_result], assistant, Turn."""
    with uow() as u:
        n = u.messages.last_turn_number(cid) + 1
        msgs = [ChatMessage.of(f"{cid}-{n}-0", cid, n, 0, PromptRole.USER, question, at)]
        sources: tuple[Source, ...] = ()
        if search:
            call = ToolInvocation("search_book", f"tu{n}", {"query": search})
            msgs += [
                ChatMessage.of(f"{cid}-{n}-1", cid, n, 1, PromptRole.ASSISTANT, "", at,
                            tool_invocations=(call,)),
                ChatMessage.of(f"{cid}-{n}-2", cid, n, 2, PromptRole.TOOL_RESULT,
                            '{"results": [{"page": "12", "text": "Call me Ishmael."}]}', at,
                            tool_use_id=f"tu{n}", tool_name="search_book"),
            ]  # fmt: skip
            sources = (Source("c1", "Loomings", "12", "13", 0, 50, "Call me Ishmael.", 0.9),)
        seq = len(msgs)
        msgs.append(
            ChatMessage.of(f"{cid}-{n}-{seq}", cid, n, seq, PromptRole.ASSISTANT, answer, at)
        )
        u.messages.save_batch(msgs)
        u.turns.save(Turn(cid, n, at, queries=(search,) if search else (), sources=sources,
                          provider="offline", model="extractive", input_tokens=5))  # fmt: skip
        u.commit()
    return n


# --- create / list / get --------------------------------------------------------------------------
def test_create_gives_a_placeholder_title_until_the_chat_names_it(convs: Conversations) -> None:
    c = convs.create("book-1")
    assert c.title == PLACEHOLDER_TITLE
    assert c.book_id == "book-1" and c.created_at == c.updated_at
    assert convs.get(c.id).conversation == c


def test_create_with_a_title_cleans_it(convs: Conversations) -> None:
    assert convs.create("book-1", title="  Whales  and  men ").title == "Whales and men"


def test_create_for_an_unknown_book_is_a_book_not_found_error(convs: Conversations) -> None:
    with pytest.raises(BookError) as e:
        convs.create("no-such-book")
    assert e.value.code == "NOT_FOUND"


def test_create_with_an_empty_title_is_invalid_input(convs: Conversations) -> None:
    with pytest.raises(ConversationError) as e:
        convs.create("book-1", title="  ")
    assert e.value.code == ConversationErrorCode.INVALID_INPUT


def test_list_shows_most_recent_activity_first_with_turn_counts_and_book_titles(
    convs: Conversations, store: InMemoryConversationStore, library: InMemoryLibrary
) -> None:
    library.add(make_book("book-2", "Dracula", "h2"), "t", [], np.zeros((0, 4), np.float32))
    first, second, other = convs.create("book-1"), convs.create("book-1"), convs.create("book-2")
    write_turn(store.unit_of_work, first.id, "Who is Ishmael?", "The narrator.",
               at=T0 + timedelta(days=1))  # fmt: skip
    write_turn(store.unit_of_work, first.id, "And Ahab?", "The captain.", at=T0 + timedelta(days=1))

    listed = convs.summaries()
    assert [s.conversation.id for s in listed] == [first.id, other.id, second.id]
    assert [s.turn_count for s in listed] == [2, 0, 0]
    assert [s.book_title for s in listed] == ["Moby-Dick", "Dracula", "Moby-Dick"]
    assert [s.conversation.id for s in convs.summaries("book-2")] == [other.id]


def test_get_returns_messages_in_order_and_turn_metadata(
    convs: Conversations, store: InMemoryConversationStore
) -> None:
    c = convs.create("book-1")
    write_turn(store.unit_of_work, c.id, "Who?", "Ishmael.", search="narrator name")
    write_turn(store.unit_of_work, c.id, "Why?", "Because.")
    detail = convs.get(c.id)
    assert [(m.turn_number, m.role.value) for m in detail.messages] == [
        (1, "user"), (1, "assistant"), (1, "tool_result"), (1, "assistant"),
        (2, "user"), (2, "assistant"),
    ]  # fmt: skip
    assert [t.queries for t in detail.turns] == [("narrator name",), ()]
    assert detail.book_title == "Moby-Dick"


# --- resolve / rename / delete --------------------------------------------------------------------
def test_resolve_accepts_a_full_id_or_a_unique_prefix(convs: Conversations) -> None:
    a, b = convs.create("book-1"), convs.create("book-1")  # ids aa0000 and ab0001
    assert convs.resolve(a.id) == a
    assert convs.resolve("ab") == b
    assert convs.resolve(" aa0 ") == a


def test_resolve_an_ambiguous_prefix_lists_the_candidates(convs: Conversations) -> None:
    a, b = convs.create("book-1"), convs.create("book-1")
    with pytest.raises(ConversationError) as e:
        convs.resolve("a")
    assert e.value.code == ConversationErrorCode.AMBIGUOUS
    assert a.id in e.value.message and b.id in e.value.message
    assert "starts the ids of 2 conversations" in e.value.message
    assert "give at least 2 characters" in e.value.message  # aa0000 / ab0001
    assert sorted(e.value.details["candidates"]) == [a.id, b.id]  # type: ignore[type-var]


@pytest.mark.parametrize("ref", ["zz", ""])
def test_resolve_an_unknown_ref_is_not_found(convs: Conversations, ref: str) -> None:
    convs.create("book-1")
    with pytest.raises(ConversationError) as e:
        convs.resolve(ref)
    assert e.value.code == ConversationErrorCode.NOT_FOUND


def test_a_question_goes_to_the_named_conversation_else_the_books_latest_else_a_new_one(
    convs: Conversations, store: InMemoryConversationStore, library: InMemoryLibrary
) -> None:
    book = library.get("book-1")
    first = convs.for_question(book)  # the book has none yet: a new one
    assert [s.conversation.id for s in convs.summaries("book-1")] == [first]
    second = convs.create("book-1").id
    write_turn(store.unit_of_work, first, "Who?", "Ishmael.", at=T0 + timedelta(days=1))
    assert convs.for_question(book) == first  # the most recently active
    assert convs.for_question(book, second[:3]) == second
    assert convs.for_question(book, new=True) not in (first, second)
    library.add(make_book("book-2", "Dracula", "h2"), "t", [], np.zeros((0, 4), np.float32))
    other = convs.create("book-2").id
    for ref in (other, "zz"):  # about another book, or no conversation at all
        with pytest.raises(ConversationError) as e:
            convs.for_question(book, ref)
        assert e.value.code == ConversationErrorCode.NOT_FOUND and "Moby-Dick" in e.value.message
    with pytest.raises(ConversationError) as e:
        convs.for_question(book, "a")
    assert e.value.code == ConversationErrorCode.AMBIGUOUS


def test_rename_changes_the_stored_title(convs: Conversations) -> None:
    c = convs.create("book-1")
    assert convs.rename(c.id, "The whale").title == "The whale"
    assert convs.get(c.id).conversation.title == "The whale"


def test_rename_to_an_empty_title_is_invalid_input_and_changes_nothing(
    convs: Conversations,
) -> None:
    c = convs.create("book-1", title="Kept")
    with pytest.raises(ConversationError) as e:
        convs.rename(c.id, " \n ")
    assert e.value.code == ConversationErrorCode.INVALID_INPUT
    assert convs.get(c.id).conversation.title == "Kept"


def test_unknown_ids_are_not_found_for_every_use_case(convs: Conversations) -> None:
    for call in (lambda: convs.get("x"), lambda: convs.rename("x", "t"),
                 lambda: convs.delete("x"), lambda: convs.export_json("x"),
                 lambda: convs.export_markdown("x")):  # fmt: skip
        with pytest.raises(ConversationError) as e:
            call()
        assert e.value.code == ConversationErrorCode.NOT_FOUND


def test_delete_and_delete_for_book(
    convs: Conversations, library: InMemoryLibrary, store: InMemoryConversationStore
) -> None:
    library.add(make_book("book-2", "Dracula", "h2"), "t", [], np.zeros((0, 4), np.float32))
    a, b, other = convs.create("book-1"), convs.create("book-1"), convs.create("book-2")
    write_turn(store.unit_of_work, b.id, "q", "a")
    convs.delete(a.id)
    assert {s.conversation.id for s in convs.summaries()} == {b.id, other.id}
    assert convs.delete_for_book("book-1") == 1
    assert [s.conversation.id for s in convs.summaries()] == [other.id]
    assert store.state.messages.get(b.id) is None and store.state.turns.get(b.id) is None


# --- export / import ------------------------------------------------------------------------------
@pytest.fixture
def chatted(convs: Conversations, store: InMemoryConversationStore) -> str:
    c = convs.create("book-1", title="Whales")
    write_turn(store.unit_of_work, c.id, "Who tells the story?", "Ishmael tells it (p. 12).",
               search="narrator of Moby-Dick", at=T0 + timedelta(hours=1))  # fmt: skip
    write_turn(store.unit_of_work, c.id, "Thanks!", "You're welcome.", at=T0 + timedelta(hours=2))
    return c.id


def test_markdown_export_has_questions_answers_and_citations_but_no_tool_calls(
    convs: Conversations, chatted: str
) -> None:
    md = convs.export_markdown(chatted)
    assert md.startswith("# Whales\n")
    assert "*Moby-Dick* by Herman Melville" in md
    assert "Started: 2026-03-01 12:01 UTC" in md
    assert "- Read: the whole book" in md  # the reading position, as the reader says it
    assert "Who tells the story?" in md and "Ishmael tells it (p. 12)." in md
    assert "Sources: Loomings, pp. 12-13" in md
    assert "## 2. You" in md and "You're welcome." in md
    assert "search_book" not in md and "Call me Ishmael" not in md


def test_json_export_holds_everything_including_tool_results_and_sources(
    convs: Conversations, chatted: str
) -> None:
    data = convs.export_json(chatted)
    assert (data["format"], data["version"]) == ("folio.conversation", 1)
    assert data["book"] == {"id": "book-1", "title": "Moby-Dick", "author": "Herman Melville",
                            "content_hash": "h1",
                            "reading_position": "the whole book"}  # fmt: skip
    assert data["conversation"]["title"] == "Whales"
    roles = [m["role"] for m in data["messages"]]
    assert roles == ["user", "assistant", "tool_result", "assistant", "user", "assistant"]
    assert data["messages"][1]["tool_invocations"][0]["arguments"] == {
        "query": "narrator of Moby-Dick"
    }
    assert "Call me Ishmael." in data["messages"][2]["content"]
    assert data["turns"][0]["sources"][0]["page_start"] == "12"
    assert data["turns"][0]["input_tokens"] == 5


def _without_ids(data: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    del out["conversation"]["id"]
    for m in out["messages"]:
        del m["id"]
    return out


def test_export_import_export_is_identical_apart_from_ids(
    convs: Conversations, chatted: str
) -> None:
    first = convs.export_json(chatted)
    imported = convs.import_json(first)
    second = convs.export_json(imported.id)

    assert imported.id != chatted
    assert {m["id"] for m in first["messages"]}.isdisjoint(m["id"] for m in second["messages"])
    assert _without_ids(second) == _without_ids(first)
    assert len(convs.summaries()) == 2


def test_import_matches_the_book_by_content_hash_when_the_id_differs(
    convs: Conversations, chatted: str
) -> None:
    data = convs.export_json(chatted)
    data["book"]["id"] = "an-id-from-another-machine"
    assert convs.import_json(data).book_id == "book-1"


def test_import_of_a_conversation_about_a_missing_book_says_so(
    convs: Conversations, chatted: str
) -> None:
    data = convs.export_json(chatted)
    data["book"].update(id="elsewhere", content_hash="unknown")
    with pytest.raises(BookError, match="not in the library"):
        convs.import_json(data)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(format="something-else"), "format"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d.pop("messages"), "messages: Field required"),
        (lambda d: d["messages"][0].update(role="system"), "messages.0.role"),
        (lambda d: d["messages"][0].update(turn_number="1"), "messages.0.turn_number"),
        (lambda d: d["messages"][0].update(created_at="2026-03-01T12:00:00"), "created_at"),
        (lambda d: d["turns"][0].update(turn_number=2), "exactly one turn record per turn"),
        (lambda d: d["turns"].pop(), "exactly one turn record per turn"),
        (lambda d: d["messages"][1].update(seq=0), "seq numbers must run 0..n-1"),
        (lambda d: d["messages"][0].update(role="assistant"), "turn 1: the first message must be"),
        (
            lambda d: [m.update(turn_number=3) for m in d["messages"] if m["turn_number"] == 2],
            "turn numbers must run 1..2",
        ),
        # a forged tool result, answering a call nobody made
        (lambda d: d["messages"][2].update(tool_use_id="forged"), "answers no open tool call"),
        (
            lambda d: d["messages"][1].update(
                role="tool_result", tool_use_id="tu1", tool_invocations=[]
            ),
            "answers no open tool call",
        ),
        (lambda d: d["messages"][-1].update(role="user"), "only one message"),
        (lambda d: d["conversation"].update(title=""), "conversation.title"),
        (lambda d: d.update(surprise=1), "surprise"),
    ],
)
def test_a_malformed_import_is_refused_with_a_clear_error_and_stores_nothing(
    convs: Conversations, chatted: str, mutate: Any, expected: str
) -> None:
    data = convs.export_json(chatted)
    mutate(data)
    with pytest.raises(ConversationError) as e:
        convs.import_json(data)
    assert e.value.code == ConversationErrorCode.INVALID_INPUT
    assert e.value.message.startswith("Not a valid folio conversation export")
    assert expected in e.value.message
    assert len(convs.summaries()) == 1


@pytest.mark.parametrize("data", [[], "text", None, {"format": "folio.conversation"}])
def test_import_of_something_that_is_not_an_export_is_invalid_input(
    convs: Conversations, data: object
) -> None:
    with pytest.raises(ConversationError) as e:
        convs.import_json(data)
    assert e.value.code == ConversationErrorCode.INVALID_INPUT
