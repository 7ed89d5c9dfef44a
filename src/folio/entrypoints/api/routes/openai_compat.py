"""OpenAI-compatible routes: any OpenAI Chat Completions client (Open WebUI, LibreChat, the
``openai`` SDK, scripts) talks to folio's own agent.

- ``GET /v1/models``: the caller's books, one "model" per book (``id`` = the book id; ``title``,
  ``author`` and the reading position as extra fields).
- ``POST /v1/chat/completions``: ``model`` names the book (its id, or a reference as the CLI takes
  it: an id prefix or a title). Stateless by default: the request's messages are the history, the
  way chat UIs send them (every earlier user/assistant pair feeds folio's follow-up handling), the
  last user message is the question, and nothing is stored. With the top-level extension field
  ``folio_conversation_id`` (an id or a unique prefix of one) the turn is a stored turn of that
  folio conversation (its stored history is used; the request's earlier messages are not). The
  client's system messages are ignored: folio's own prompt holds the reading position and the
  no-spoiler rules.
- ``stream: true`` sends ``chat.completion.chunk`` frames (a role chunk, content deltas, the final
  chunk with ``finish_reason`` and the ``folio`` extra field, a usage chunk when
  ``stream_options.include_usage``) and ends with ``data: [DONE]``.

Citations are in the answer text (a ``Sources:`` line naming chapter and page, unless the answer
already cites them) and, structured, in the ``folio`` field of the response or final chunk.
folio's internal tool calls (its searches of the book) are not exposed as ``tool_calls``. Errors
before the answer are statuses in OpenAI's error shape (``errors.py``); an error after the stream
started is one ``data: {"error": ...}`` frame, then ``[DONE]``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from folio.app.chat import AnswerDelta, TurnResult
from folio.bootstrap import UserScope
from folio.domain.books import Book, no_position_notice, numbered_places
from folio.domain.errors import BookError, BookErrorCode
from folio.entrypoints.api.deps import ScopeDep
from folio.entrypoints.api.errors import ApiError, openai_error_body, status_for
from folio.entrypoints.api.routes.chat import checked_message
from folio.entrypoints.api.schemas import (
    COMPLETION_CHUNKS,
    SSE,
    ChatCompletion,
    ModelCard,
    ModelList,
    OpenAIErrorBody,
    errors_for,
)
from folio.entrypoints.api.turn_stream import Runner, TurnFailed, TurnItem, TurnStreamDep
from folio.entrypoints.serialize import source_dict

router = APIRouter(prefix="/v1", tags=["openai-compatible"])

MAX_MESSAGES = 1000
_SOURCES_LINE = re.compile(r"\n*Sources: [^\n]*\s*$")
NO_POSITION_LINE = "({})".format(
    no_position_notice("this book", "on folio's page, or with `folio position BOOK --chapter 5`")
)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls, refusal...: accepted, unused
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(p.text or "" for p in self.content if p.type == "text")
        return self.content or ""


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionIn(BaseModel):
    """OpenAI's request body; sampling parameters (temperature, top_p, max_tokens...) are
    accepted and left to folio's configured model."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    folio_conversation_id: str | None = Field(default=None, max_length=200)


@router.get(
    "/models", response_model=ModelList, responses=errors_for(401, 503, body=OpenAIErrorBody)
)
def list_models(scope: ScopeDep) -> dict[str, Any]:
    """The caller's books as models."""
    return {"object": "list", "data": [_model(b) for b in scope.library.list_books()]}


@router.get(
    "/models/{model_id}",
    response_model=ModelCard,
    responses=errors_for(401, 404, 409, 422, 503, body=OpenAIErrorBody),
)
def get_model(model_id: str, scope: ScopeDep) -> dict[str, Any]:
    return _model(_book(scope, model_id))


def _model(book: Book) -> dict[str, Any]:
    return {
        "id": book.id,
        "object": "model",
        "created": int(book.created_at.timestamp()) if book.created_at else 0,
        "owned_by": "folio",
        "name": book.name,  # what a client's model picker shows (Open WebUI reads "name")
        "title": book.title,
        "author": book.author,
        "position": book.describe_position(now=datetime.now(UTC)),
    }


def _book(scope: UserScope, model: str) -> Book:
    """The book ``model`` names: its id or a unique prefix of it (several: a 409 saying how many
    characters to give), else a reference as the CLI takes it (a title, words of one)."""
    try:
        return scope.library.get(scope.library.full_id(model))
    except BookError as e:
        if e.code is BookErrorCode.AMBIGUOUS:
            raise
    return scope.library.resolve(model)  # NOT_FOUND names the closest titles


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        200: {
            "description": "The completion (JSON), or with ``stream`` its chunks",
            "content": {SSE: COMPLETION_CHUNKS},
        },
        **errors_for(400, 401, 404, 409, 413, 422, 429, 502, 503, 504, body=OpenAIErrorBody),
    },
)
async def chat_completions(
    body: ChatCompletionIn, scope: ScopeDep, turn: TurnStreamDep
) -> dict[str, Any] | StreamingResponse:
    question, history = _conversation(body.messages)
    text = checked_message(question, scope.container)

    def prepare() -> tuple[Book, Runner]:
        book = _book(scope, body.model)
        if body.folio_conversation_id is None:
            chat, conversation_id = scope.stateless_chat(book.id, history=history)
        else:
            conversation = scope.conversations.resolve(body.folio_conversation_id)
            if conversation.book_id != book.id:
                raise ApiError(
                    404,
                    "NOT_FOUND",
                    f"No conversation {body.folio_conversation_id!r} about book {book.id!r}",
                )
            conversation_id = conversation.id
            chat = scope.chat(still_wanted=turn.still_wanted, still_there=turn.still_there)
        return book, lambda on_event: chat.execute(conversation_id, text, on_event=on_event)

    book, run = await run_in_threadpool(prepare)
    completion = Completion(book.id, stored=body.folio_conversation_id is not None)
    if not body.stream:
        return completion.response(await turn.result(run))
    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    return turn.response(run, lambda items: _chunks(items, completion, include_usage))


def _conversation(messages: list[ChatMessageIn]) -> tuple[str, list[tuple[str, str]]]:
    """The question (the last message, a user's) and the earlier (question, answer) pairs."""
    if messages[-1].role != "user":
        raise ApiError(
            400, "INVALID_INPUT", "The last message must be the user's question (role user)"
        )
    exchanges: list[tuple[str, str]] = []
    asked: str | None = None
    for message in messages[:-1]:
        if message.role == "user":
            asked = message.text()
        elif message.role == "assistant" and asked is not None:
            answer = _SOURCES_LINE.sub("", message.text().replace(NO_POSITION_LINE, "")).strip()
            if asked.strip() and answer:
                exchanges.append((asked.strip(), answer))
            asked = None
    return messages[-1].text(), exchanges


class Completion:
    """The OpenAI shapes of one answer: ids, timestamps, the answer text with its sources."""

    def __init__(self, model: str, *, stored: bool) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model
        self.stored = stored

    def extra(self, result: TurnResult) -> dict[str, Any]:
        """The ``folio`` field: where the answer comes from, and the stored turn (if stored)."""
        return {
            "conversation_id": result.conversation_id if self.stored else None,
            "turn_number": result.turn_number if self.stored else None,
            "citations": [source_dict(c) for c in result.citations],
            "searches": list(result.searches),
            "provider": result.provider,
            "model": result.model,
        }

    def response(self, result: TurnResult) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer_text(result)},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(result),
            "folio": self.extra(result),
        }

    def chunk(
        self, delta: dict[str, Any], finish: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    def usage_chunk(self, result: TurnResult) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": _usage(result),
        }


def sources_suffix(result: TurnResult) -> str:
    """The ``Sources: [1] ...; [2] ...`` line the answer text ends with: each source once, with
    the number it has on every surface (``folio.citations[n - 1]``), two sources on one page
    included; then, for a book whose reader never said how far they have read, one line saying
    so."""
    notice = "" if result.position_set else f"\n\n{NO_POSITION_LINE}"
    if not result.citations:
        return notice
    return f"\n\nSources: {numbered_places(result.citations)}{notice}"


def answer_text(result: TurnResult) -> str:
    return result.answer + sources_suffix(result)


def _usage(result: TurnResult) -> dict[str, int]:
    return {
        "prompt_tokens": result.input_tokens,
        "completion_tokens": result.output_tokens,
        "total_tokens": result.input_tokens + result.output_tokens,
    }


def _data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


async def _chunks(
    items: AsyncIterator[TurnItem], completion: Completion, include_usage: bool
) -> AsyncIterator[bytes]:
    """The turn's items as chunks: a role chunk, the answer's deltas, the final chunk (or an
    error frame), then ``[DONE]``. folio's tool calls are not sent. A cancelled turn (the client
    has gone) ends without ``[DONE]``."""
    yield _data(completion.chunk({"role": "assistant", "content": ""}))
    async for item in items:
        if isinstance(item, AnswerDelta) and item.text:
            yield _data(completion.chunk({"content": item.text}))
        elif isinstance(item, TurnResult):
            suffix = sources_suffix(item)
            if suffix:
                yield _data(completion.chunk({"content": suffix}))
            yield _data(completion.chunk({}, "stop", folio=completion.extra(item)))
            if include_usage:
                yield _data(completion.usage_chunk(item))
            yield b"data: [DONE]\n\n"
        elif isinstance(item, TurnFailed):
            e = item.error
            if e is None:
                yield _data(openai_error_body(500, "INTERNAL", "Unexpected server error"))
            else:
                yield _data(openai_error_body(status_for(e), e.code, e.message))
            yield b"data: [DONE]\n\n"
