"""Conversations (sessions): create, list, get, rename, delete, export, import."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic_core
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from folio.app.conversation_export import ConversationExport
from folio.domain.llm import PromptRole
from folio.entrypoints.api.deps import ConversationIdDep, ScopeDep, get_book_id
from folio.entrypoints.api.errors import ApiError
from folio.entrypoints.api.schemas import ConversationPage, errors_for, text_body
from folio.entrypoints.serialize import conversation_dict, message_dict, turn_meta_dict
from folio.entrypoints.views import ConversationDetailView, ConversationView, NewConversationView

router = APIRouter(prefix="/api/v1/conversations", tags=["conversations"])


class ConversationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    book_id: str = Field(min_length=1, max_length=200)
    title: str | None = Field(default=None, max_length=500)


class RenameIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=500)


@router.post(
    "",
    status_code=201,
    response_model=NewConversationView,
    responses=errors_for(400, 401, 404, 409, 413, 422, 503),
)
def create_conversation(body: ConversationIn, scope: ScopeDep) -> dict[str, Any]:
    book_id = get_book_id(body.book_id, scope)
    return conversation_dict(scope.conversations.create(book_id, body.title), turns=0)


@router.get("", response_model=ConversationPage, responses=errors_for(401, 404, 409, 422, 503))
def list_conversations(
    scope: ScopeDep,
    book_id: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> dict[str, Any]:
    """Newest activity first; ``limit``/``offset`` page through them."""
    if book_id is not None:
        book_id = get_book_id(book_id, scope)  # 404 for an unknown book
    summaries = scope.conversations.summaries(book_id)
    page = summaries[offset : offset + limit]
    return {
        "total": len(summaries),
        "limit": limit,
        "offset": offset,
        "items": [
            conversation_dict(s.conversation, turns=s.turn_count, book_title=s.book_title)
            for s in page
        ],
    }


@router.get(
    "/{conversation_id}",
    response_model=ConversationDetailView,
    responses=errors_for(401, 404, 409, 422, 503),
)
def get_conversation(
    conversation_id: ConversationIdDep, scope: ScopeDep, verbose: bool = False
) -> dict[str, Any]:
    """The conversation with its messages and per-turn metadata; tool calls and tool results
    only with ``verbose``."""
    detail = scope.conversations.get(conversation_id)
    messages = [
        message_dict(m)
        for m in detail.messages
        if verbose or (m.role is PromptRole.USER or (m.role is PromptRole.ASSISTANT and m.content))
    ]
    # each turn's answer (its last assistant text), where its sources' numbers go
    answers = {m.turn_number: m.content for m in detail.messages if m.role is PromptRole.ASSISTANT}
    return conversation_dict(
        detail.conversation,
        book_title=detail.book_title,
        turns=len(detail.turns),
        messages=messages,
        turn_details=[turn_meta_dict(t, answers.get(t.turn_number, "")) for t in detail.turns],
    )


@router.patch(
    "/{conversation_id}",
    response_model=ConversationView,
    responses=errors_for(400, 401, 404, 409, 413, 422, 503),
)
def rename_conversation(
    conversation_id: ConversationIdDep, body: RenameIn, scope: ScopeDep
) -> dict[str, Any]:
    return conversation_dict(scope.conversations.rename(conversation_id, body.title))


@router.delete("/{conversation_id}", status_code=204, responses=errors_for(401, 404, 409, 422, 503))
def delete_conversation(conversation_id: ConversationIdDep, scope: ScopeDep) -> Response:
    scope.conversations.delete(conversation_id)
    return Response(status_code=204)


@router.get(
    "/{conversation_id}/export",
    response_model=None,
    responses={
        200: {
            "model": ConversationExport,
            "description": "``md`` (default): Markdown for people; ``json``: everything, to import",
            "content": {"text/markdown": text_body("The conversation in Markdown")},
        },
        **errors_for(401, 404, 409, 422, 503),
    },
)
def export_conversation(
    conversation_id: ConversationIdDep,
    scope: ScopeDep,
    format: Literal["md", "json"] = "md",
) -> PlainTextResponse | dict[str, Any]:
    if format == "json":
        return scope.conversations.export_json(conversation_id)
    text = scope.conversations.export_markdown(conversation_id)
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")


@router.post(
    "/import",
    status_code=201,
    response_model=ConversationView,
    responses=errors_for(400, 401, 404, 413, 422, 503),
)
async def import_conversation(request: Request, scope: ScopeDep) -> dict[str, Any]:
    """A conversation exported as JSON (``export?format=json``), stored under new ids."""
    limit = scope.container.settings.max_import_bytes
    raw = await request.body()
    if len(raw) > limit:
        raise ApiError(413, "TOO_LARGE", f"An import is at most {limit // (1024 * 1024)} MB")
    try:
        data = pydantic_core.from_json(raw)  # strict: no lone surrogates, nesting bounded
    except ValueError as e:
        raise ApiError(422, "INVALID_INPUT", f"The body is not JSON: {e}") from e
    return conversation_dict(scope.conversations.import_json(data))
