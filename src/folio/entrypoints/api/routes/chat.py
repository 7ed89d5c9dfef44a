"""Turns: a message to a conversation, and the seed-style ``/chat`` (stateless without a
``session_id``). JSON, or a stream of named SSE events with ``"stream": true``.

Everything that can fail before the answer is checked before the response starts: the
conversation (404), its book (404), the message (422 empty, 413 too long), the provider's settings
(503), the caller's concurrent turns (429).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from folio.app.chat import ChatWithBook
from folio.bootstrap import Container
from folio.entrypoints.api.deps import ConversationIdDep, ScopeDep, get_book_id
from folio.entrypoints.api.errors import ApiError
from folio.entrypoints.api.schemas import SSE, errors_for, turn_events
from folio.entrypoints.api.streaming import sse_frames
from folio.entrypoints.api.turn_stream import Runner, TurnStream, TurnStreamDep
from folio.entrypoints.serialize import turn_result_dict
from folio.entrypoints.views import TurnView

router = APIRouter(prefix="/api/v1", tags=["chat"])

# The model's hard ceiling; the setting ``max_message_chars`` is the bound that applies.
_MESSAGE_CEILING = 200_000


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(max_length=_MESSAGE_CEILING)
    stream: bool = False
    conversation_window: int | None = Field(
        default=None, ge=1, le=100, description="Earlier turns the model sees (default: settings)"
    )


# The answer: the turn as JSON, or with ``"stream": true`` folio's named SSE events.
TURN_RESPONSES: dict[int | str, Any] = {
    200: {
        "description": "The turn (JSON), or with ``stream`` its events",
        "content": {SSE: turn_events(TurnView)},
    },
    **errors_for(400, 401, 404, 409, 413, 422, 429, 502, 503, 504),
}


class ChatIn(MessageIn):
    book_id: str = Field(min_length=1, max_length=200)
    session_id: str | None = Field(default=None, max_length=200)


@router.post(
    "/conversations/{conversation_id}/messages",
    response_model=TurnView,
    responses=TURN_RESPONSES,
)
async def post_message(
    conversation_id: ConversationIdDep,
    body: MessageIn,
    scope: ScopeDep,
    turn: TurnStreamDep,
) -> dict[str, Any] | StreamingResponse:
    """Answer ``message`` in the conversation and store the turn."""
    text = checked_message(body.message, scope.container)

    def prepare() -> Runner:
        conversation = scope.conversations.find(conversation_id)
        scope.books.get(conversation.book_id)
        chat = scope.chat(
            still_wanted=turn.still_wanted,
            still_there=turn.still_there,
            window_turns=body.conversation_window,
        )
        return _runner(chat, conversation.id, text)

    return await _answer(turn, await run_in_threadpool(prepare), body.stream)


@router.post("/chat", response_model=TurnView, responses=TURN_RESPONSES)
async def chat(
    body: ChatIn, scope: ScopeDep, turn: TurnStreamDep
) -> dict[str, Any] | StreamingResponse:
    """With ``session_id``: continue that conversation (404 if unknown, or about another book).
    Without: a stateless turn about ``book_id`` that stores nothing."""
    text = checked_message(body.message, scope.container)

    def prepare() -> Runner:
        book = scope.books.get(get_book_id(body.book_id, scope))
        if body.session_id is None:
            use_case, conversation_id = scope.stateless_chat(book.id)
            return _runner(use_case, conversation_id, text)
        conversation = scope.conversations.resolve(body.session_id)
        if conversation.book_id != book.id:
            raise ApiError(
                404, "NOT_FOUND", f"No conversation {body.session_id!r} about book {book.id!r}"
            )
        chat = scope.chat(
            still_wanted=turn.still_wanted,
            still_there=turn.still_there,
            window_turns=body.conversation_window,
        )
        return _runner(chat, conversation.id, text)

    return await _answer(turn, await run_in_threadpool(prepare), body.stream)


def checked_message(message: str, container: Container) -> str:
    """The message stripped (a NUL means nothing, as in the use case); 422 when empty, 413 over
    ``max_message_chars`` (every chat route, KOReader's ask too)."""
    text = message.replace("\x00", "").strip()
    if not text:
        raise ApiError(422, "INVALID_INPUT", "A message cannot be empty")
    limit = container.settings.max_message_chars
    if len(text) > limit:
        raise ApiError(
            413,
            "TOO_LARGE",
            f"A message is at most {limit} characters (setting max_message_chars); "
            f"this one has {len(text)}",
        )
    return text


def _runner(chat: ChatWithBook, conversation_id: str, text: str) -> Runner:
    return lambda on_event: chat.execute(conversation_id, text, on_event=on_event)


async def _answer(
    turn: TurnStream, run: Runner, stream: bool
) -> dict[str, Any] | StreamingResponse:
    if not stream:
        return turn_result_dict(await turn.result(run))
    return turn.response(run, sse_frames)
