"""The HTTP API describes what it returns: every operation of ``/openapi.json`` has a typed success
body (a 204 has none), every error status it declares has the error body its prefix writes, the
streaming routes name ``text/event-stream``; and the response models keep the bodies byte for byte
(what FastAPI sends after validating a body by its model is what ``serialize.py`` built)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from folio.app.chat import ToolCallRecord, TurnResult
from folio.bootstrap import Container
from folio.config import load_settings
from folio.domain.books import Book, BookFormat, Chapter, Chunk, Page, SearchHit, SectionKind
from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
from folio.domain.jobs import ImportJob, JobStatus
from folio.domain.llm import PromptRole, ToolInvocation
from folio.entrypoints import serialize, views
from folio.entrypoints.api.app import create_app

STREAMING = {
    ("post", "/api/v1/conversations/{conversation_id}/messages"),
    ("post", "/api/v1/chat"),
    ("post", "/v1/chat/completions"),
}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("openapi")
    container = Container(load_settings({"FOLIO_HOME": str(home)}))
    try:
        return create_app(container).openapi()
    finally:
        container.close()


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, ops in spec["paths"].items() for m, op in ops.items()]


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return _resolve(spec, spec["components"]["schemas"][ref.rsplit("/", 1)[-1]]) if ref else schema


def _typed(spec: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A schema that says what the body holds: named properties (of each alternative, or of the
    items), or a string for a text body; not ``{}`` nor a bare ``object``."""
    schema = _resolve(spec, schema)
    if "anyOf" in schema or "oneOf" in schema:
        return all(_typed(spec, s) for s in schema.get("anyOf", schema.get("oneOf")))
    if schema.get("type") == "array":
        return _typed(spec, schema["items"])
    if schema.get("type") == "string":
        return True
    return schema.get("type") == "object" and (
        bool(schema.get("properties")) or schema.get("additionalProperties") is False
    )


def test_every_operation_has_a_typed_success_body(spec: dict[str, Any]) -> None:
    operations = _operations(spec)
    assert len(operations) >= 30
    untyped = []
    for method, path, op in operations:
        success = {s: r for s, r in op["responses"].items() if s.startswith("2")}
        assert success, f"{method} {path} documents no success"
        for status, response in success.items():
            content = response.get("content", {})
            if status == "204":
                assert content == {}, f"{method} {path}: a 204 has no body"
                continue
            assert content, f"{method} {path} {status}: no body described"
            for media, body in content.items():
                if not _typed(spec, body.get("schema", {})):
                    untyped.append(f"{method} {path} {status} {media}")
    assert untyped == []


def test_every_error_status_has_the_error_body_of_its_prefix(spec: dict[str, Any]) -> None:
    for method, path, op in _operations(spec):
        if path.startswith("/v1/"):
            expected = "OpenAIErrorBody"
        elif path.startswith(("/users/", "/syncs/")):
            expected = "SyncErrorBody"
        else:
            expected = "ErrorBody"
        errors = {s: r for s, r in op["responses"].items() if s[0] in "45"}
        assert {"403", "421", "500"} <= errors.keys(), f"{method} {path}: the guard's refusals"
        for status, response in errors.items():
            ref = response["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith(f"/{expected}"), (method, path, status, ref)
        if op.get("parameters") or op.get("requestBody"):
            assert "422" in errors or "4XX" in errors, f"{method} {path}: invalid input"
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's, not folio's


def test_streams_name_their_media_type_and_describe_each_event(spec: dict[str, Any]) -> None:
    for method, path, op in _operations(spec):
        content = op["responses"].get("200", {}).get("content", {})
        if (method, path) not in STREAMING:
            assert "text/event-stream" not in content, (method, path)
            continue
        assert "application/json" in content  # the same route without "stream"
        frames = content["text/event-stream"]["schema"]["oneOf"]
        events = [f["properties"].get("event", {}).get("const") for f in frames]
        if path.startswith("/v1/"):
            data = frames[0]["properties"]["data"]["anyOf"]
            assert data[0] == {"const": "[DONE]"}
            chunk, error = data[1]["contentSchema"]["anyOf"]
            assert chunk["properties"]["object"]["const"] == "chat.completion.chunk"
            assert list(error["properties"]["error"]["properties"]) == [
                "message", "type", "param", "code"
            ]  # fmt: skip
        else:
            assert events == ["tool_call", "tool_result", "delta", "done", "error"]
            done = frames[3]["properties"]["data"]["contentSchema"]
            json_answer = _resolve(spec, content["application/json"]["schema"])
            assert list(done["properties"]) == list(json_answer["properties"])


# --- the models keep the bodies ------------------------------------------------------------------
NOW = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


def _book() -> Book:
    pages = tuple(Page(n, str(n), (n - 1) * 500, n * 500) for n in range(1, 7))
    chapters = (
        Chapter(1, "Preface", 0, SectionKind.COMMENTARY),
        Chapter(2, "Chapter 1", 500),
        Chapter(3, "Chapter 2. The Murder of William", 1500),
        Chapter(4, "CHAPTER III", 2000),
    )
    book = Book(
        "b1",
        "Frankenstein",
        None,
        BookFormat.EPUB,
        "f.epub",
        "h",
        6,
        3000,
        chapters,
        pages,
        created_at=NOW,
        series="Gothic",
        series_index=2,
    )
    return book.with_position(book.position_at_chapter("1"))


def _turn(*, latency: float) -> Turn:
    sources = (
        Source("c1", "Chapter 1", "2", "3", 600, 900, quote="“He was…”", score=0.5),
        Source("c2", None, "iv", "iv", 0, 40, book_id="b0", volume="Volume One"),
    )
    return Turn(
        "conv1",
        2,
        NOW,
        queries=("Clerval",),
        sources=sources,
        reasoning_steps=("s",),
        guardrail_score=0.25,
        provider="scripted",
        model="m",
        input_tokens=12,
        output_tokens=3,
        llm_calls=2,
        latency_ms=latency,
        strategy="tool_use",
    )


def _bodies() -> list[tuple[type[BaseModel], Any]]:
    """(model, body as serialize.py builds it) for every view, unusual values included: an int
    where a float may be, null fields, non-ASCII text, nested tool arguments."""
    book = _book()
    unlimited = replace(book, position=replace(book.position, char_offset=None), series_index=None)
    chunk = Chunk("c1", "b1", 0, "Ich bin’s", 600, 900, 2, 3, chapter="Chapter 1")
    hits = [
        SearchHit(chunk, 0.0123456789, "…bin…", "2", "3", similarity=0.91),
        SearchHit(chunk, 1, "s", "2", "2", volume="Volume One"),
    ]
    calls = (
        ToolCallRecord(
            "search_book", {"query": "é", "k": 5, "more": [1, {"a": None}]}, True, "2 passages"
        ),
        ToolCallRecord("x", {}, False, "no", "EXCEPTION"),
    )
    conversation = Conversation("conv1", "b1", "Who is Clerval?", NOW, NOW + timedelta(seconds=1))
    invocation = ToolInvocation("search_book", "tu1", {"query": "Clerval"})
    messages = [
        ChatMessage.of("m1", "conv1", 1, 0, PromptRole.USER, "Who?", NOW),
        ChatMessage.of(
            "m2", "conv1", 1, 1, PromptRole.ASSISTANT, "", NOW, tool_invocations=(invocation,)
        ),
        ChatMessage.of(
            "m3",
            "conv1",
            1,
            2,
            PromptRole.TOOL_RESULT,
            "{}",
            NOW,
            tool_use_id="tu1",
            tool_name="search_book",
            is_error=True,
        ),
    ]
    job = ImportJob("j1", "local", "b1", "f.epub", JobStatus.RUNNING, NOW, NOW, stage="parse")
    failed = replace(job, status=JobStatus.FAILED, error_code="CORRUPT", error_message="bad")
    conversation_body = serialize.conversation_dict(conversation)
    return [
        *((views.BookSummary, serialize.book_summary(b)) for b in (book, unlimited)),
        *((views.BookDetail, serialize.book_detail(b)) for b in (book, unlimited)),
        (views.PositionView, serialize.position_dict(book)),
        *((views.SearchHitView, serialize.hit_dict(h)) for h in hits),
        *(
            (
                views.TurnView,
                serialize.turn_result_dict(
                    TurnResult(_turn(latency=ms), "Ja.", calls, position_set=ms > 1)
                ),
            )
            for ms in (1, 12.5)
        ),
        (views.TurnMetaView, serialize.turn_meta_dict(_turn(latency=7))),
        (views.ConversationView, conversation_body),
        (views.NewConversationView, serialize.conversation_dict(conversation, turns=0)),
        (
            views.ConversationListItem,
            serialize.conversation_dict(conversation, turns=1, book_title=None),
        ),
        (
            views.ConversationDetailView,
            serialize.conversation_dict(
                conversation,
                book_title="Frankenstein",
                turns=1,
                messages=[serialize.message_dict(m) for m in messages],
                turn_details=[serialize.turn_meta_dict(_turn(latency=3.5))],
            ),
        ),
        *((views.JobView, serialize.job_dict(j)) for j in (job, failed)),
    ]


@pytest.mark.parametrize(("model", "body"), _bodies())
def test_a_body_sent_through_its_model_is_the_same_bytes(model: type[BaseModel], body: Any) -> None:
    # What FastAPI sends for a route with a response model: the body validated, dumped by pydantic.
    sent = model.model_validate(body).model_dump_json()
    assert sent == json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    assert list(json.loads(sent)) == list(
        model.model_json_schema(mode="serialization")["properties"]
    )


def test_the_models_build_the_same_bodies_as_the_dicts_did() -> None:
    turn = TurnResult(_turn(latency=4), "Ja.", position_set=False)
    body = serialize.turn_result_dict(turn)
    assert body["notice"] == views.NO_POSITION_NOTICE and body["position_set"] is False
    assert body["latency_ms"] == 4 and isinstance(body["latency_ms"], int)  # not rewritten as 4.0
    assert body["citations"][1] == {
        "chunk_id": "c2",
        "chapter": None,
        "page_start": "iv",
        "page_end": "iv",
        "quote": "",
        "location": "Volume One, p. iv",
        "char_start": 0,
        "char_end": 40,
        "book_id": "b0",
        "volume": "Volume One",
        "highlights": [],
    }
    assert serialize.source_dict(turn.citations[0])["location"] == "Chapter 1, pp. 2-3"


def test_a_withheld_chapter_title_stays_null_in_the_typed_body(tmp_path: Path) -> None:
    detail = views.BookDetail.model_validate(serialize.book_detail(_book()))
    titles = [c.title for c in detail.chapters]
    assert titles == ["Preface", "Chapter 1", None, "CHAPTER III"]
    assert [c.unread for c in detail.chapters] == [True, False, True, True]
