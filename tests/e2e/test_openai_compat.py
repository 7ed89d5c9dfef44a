"""The OpenAI-compatible routes, driven by the official ``openai`` client against a real
``folio serve`` process (offline provider: folio's own agent, no model), sent the way chat UIs send
a conversation: the whole message list every time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import demo_book_home, ok_json, run_folio_in

FIRST = "Who is Victor's friend from Geneva?"
FOLLOW_UP = "What happens to him?"
# A follow-up is searched with the reader's earlier question (or a model's rewrite naming the
# friend, Henry Clerval, by either of his names). Which sentences the answer quotes is the offline
# policy's with this home's hashing embedder: not asserted here (the golden conversations do, with
# the packaged model).
FRIEND_SEARCHED = r"\b(?:Henry|Clerval)\b|friend from Geneva"
THIRD = "And who is Elizabeth?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FolioServer]:
    home = demo_book_home(tmp_path_factory, "openai-home")
    with FolioServer(home, env={"FOLIO_PROVIDER": "offline"}) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: FolioServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused-locally", max_retries=0)


@pytest.fixture(scope="module")
def book_id(client: openai.OpenAI) -> str:
    return client.models.list().data[0].id


def stored_conversations(server: FolioServer) -> list[dict[str, Any]]:
    return list(httpx.get(f"{server.url}/api/v1/conversations", timeout=30).json())


def ask(client: openai.OpenAI, book_id: str, messages: list[dict[str, str]], **kw: Any) -> Any:
    return client.chat.completions.create(model=book_id, messages=messages, **kw)  # type: ignore[arg-type]


def test_models_are_the_readers_books(client: openai.OpenAI, book_id: str) -> None:
    models = client.models.list().data
    assert [m.id for m in models] == [book_id]
    assert models[0].owned_by == "folio"
    assert "Frankenstein" in (models[0].model_extra or {})["title"]
    assert client.models.retrieve(book_id).id == book_id


def test_a_three_turn_conversation_sent_whole_each_time_resolves_its_follow_ups(
    server: FolioServer, client: openai.OpenAI, book_id: str
) -> None:
    before = stored_conversations(server)
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": FIRST},
    ]
    first = ask(client, book_id, messages)
    answer = first.choices[0].message.content
    assert first.object == "chat.completion" and first.choices[0].finish_reason == "stop"
    assert answer.startswith("From the book")
    extra = first.model_extra["folio"]
    assert extra["citations"] and all(c["page_start"] for c in extra["citations"])
    assert "p. " in answer  # citations in the text too
    assert extra["conversation_id"] is None  # stateless: nothing stored
    assert first.usage is not None and first.usage.total_tokens >= 0

    messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": FOLLOW_UP}]
    second = ask(client, book_id, messages)
    (query,) = second.model_extra["folio"]["searches"]
    assert re.search(FRIEND_SEARCHED, query), (
        query
    )  # "him" resolved from the history the client sent
    assert second.model_extra["folio"]["citations"]

    messages += [
        {"role": "assistant", "content": second.choices[0].message.content},
        {"role": "user", "content": THIRD},
    ]
    third = ask(client, book_id, messages)
    assert "Elizabeth" in third.model_extra["folio"]["searches"][0]
    assert stored_conversations(server) == before  # stateless: nothing was stored


def test_a_follow_up_without_the_history_is_searched_as_asked(
    client: openai.OpenAI, book_id: str
) -> None:
    alone = ask(client, book_id, [{"role": "user", "content": FOLLOW_UP}])
    assert not re.search(FRIEND_SEARCHED, alone.model_extra["folio"]["searches"][0])


def test_streaming_sends_chunks_then_done_with_citations_in_the_last_chunk(
    client: openai.OpenAI, book_id: str
) -> None:
    stream = ask(
        client,
        book_id,
        [{"role": "user", "content": FIRST}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finished) == 1
    whole = ask(client, book_id, [{"role": "user", "content": FIRST}])
    assert text == whole.choices[0].message.content and "p. " in text  # the same answer, streamed
    assert finished[0].model_extra["folio"]["citations"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None  # include_usage
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)


def test_the_stream_ends_with_done(server: FolioServer, book_id: str) -> None:
    body = {"model": book_id, "messages": [{"role": "user", "content": FIRST}], "stream": True}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=60) as r:
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"


def test_with_the_extension_field_the_turn_is_stored_in_that_conversation(
    server: FolioServer, client: openai.OpenAI, book_id: str
) -> None:
    created = httpx.post(
        f"{server.url}/api/v1/conversations", json={"book_id": book_id}, timeout=30
    ).json()
    cid = created["conversation_id"]
    for question in (FIRST, FOLLOW_UP):
        result = ask(
            client,
            book_id,
            [{"role": "user", "content": question}],
            extra_body={"folio_conversation_id": cid},
        )
        assert result.model_extra["folio"]["conversation_id"] == cid
    assert result.model_extra["folio"]["turn_number"] == 2
    # the stored history, not the request's, fed the follow-up
    assert re.search(FRIEND_SEARCHED, result.model_extra["folio"]["searches"][0])
    detail = httpx.get(f"{server.url}/api/v1/conversations/{cid}", timeout=30).json()
    assert [t["turn_number"] for t in detail["turn_details"]] == [1, 2]


def test_errors_come_in_openais_shape_with_the_right_status(
    client: openai.OpenAI, book_id: str
) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        ask(client, "no-such-book", [{"role": "user", "content": FIRST}])
    assert "no-such-book" in missing.value.message
    with pytest.raises(openai.BadRequestError) as last:
        ask(
            client,
            book_id,
            [{"role": "user", "content": FIRST}, {"role": "assistant", "content": "x"}],
        )
    assert "last message" in last.value.message
    with pytest.raises(openai.NotFoundError):
        ask(
            client,
            book_id,
            [{"role": "user", "content": FIRST}],
            extra_body={"folio_conversation_id": "nope"},
        )
    with pytest.raises(openai.UnprocessableEntityError) as empty:
        ask(client, book_id, [])
    assert empty.value.body["type"] == "invalid_request_error"  # type: ignore[index]


def test_a_server_with_users_needs_the_token_and_shows_only_the_users_books(
    tmp_path: Path,
) -> None:
    from folio.entrypoints.cli.demo import bundled_book

    ok_json(run_folio_in(tmp_path, "add", str(bundled_book()), "--json"))
    token = ok_json(run_folio_in(tmp_path, "users", "add", "ada", "--json"))["token"]
    with FolioServer(tmp_path, env={"FOLIO_PROVIDER": "offline"}) as s:
        anonymous = openai.OpenAI(base_url=f"{s.url}/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            anonymous.models.list()
        ada = openai.OpenAI(base_url=f"{s.url}/v1", api_key=token, max_retries=0)
        assert ada.models.list().data == []  # the local user's book is not ada's
