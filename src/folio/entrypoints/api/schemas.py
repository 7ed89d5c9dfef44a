"""The HTTP API's response bodies that are not views of one domain object (``folio.entrypoints
.views`` has those), its three error bodies, and ``errors_for``: the error responses a route
declares, so that ``/openapi.json`` names every status a route answers with and its body.

Invariant: each model is the body a route writes, field for field and in its order; the error
bodies are those ``errors.py`` writes (folio's ``{"error": {"code", "message"}}``, OpenAI's under
``/v1/``, KOReader's progress sync protocol's ``{"code", "message"}``).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from 3.12

from folio.entrypoints.views import (
    ConversationListItem,
    JobView,
    Number,
    SearchHitView,
    SourceView,
)


# --- errors --------------------------------------------------------------------------------------
class ErrorDetail(BaseModel):
    code: str = Field(examples=["NOT_FOUND"])
    message: str


class ErrorBody(BaseModel):
    """folio's one error body."""

    error: ErrorDetail


class OpenAIErrorDetail(BaseModel):
    message: str
    type: Literal[
        "invalid_request_error", "authentication_error", "rate_limit_error", "server_error"
    ]
    param: None
    code: str


class OpenAIErrorBody(BaseModel):
    """An error as OpenAI's API writes it (the routes under ``/v1/``)."""

    error: OpenAIErrorDetail


class SyncErrorBody(BaseModel):
    """An error of KOReader's progress sync protocol (its server's codes: 103, 104, 2001...)."""

    code: int
    message: str


# Why a folio route answers with each status (the one mapping is errors.py's).
_WHY = {
    400: "Invalid input",
    401: "No valid credentials",
    402: "Registration refused (the protocol's status for it)",
    403: "Refused: a request from another site's page (or, for progress sync, invalid input)",
    404: "Not found (or not the caller's)",
    409: "Conflict: a duplicate, an ambiguous reference, or a turn taken meanwhile",
    413: "Too large (the setting that bounds it is named)",
    415: "Not a book folio can read",
    421: "The request names a host this server does not serve",
    422: "Invalid input (the fields and why)",
    429: "Too many turns of this user at once",
    500: "Unexpected server error (a bug in folio)",
    502: "The model's provider failed (authentication, a bad response, no tool use)",
    503: "Unavailable: the model's provider (rate limit, down), the settings or the database",
    504: "The model's provider timed out",
}
# Every route: the request guard's refusals and an unexpected error.
GUARD = (403, 421, 500)


def errors_for(*statuses: int, body: type[BaseModel] = ErrorBody) -> dict[int | str, Any]:
    """The ``responses=`` of a route that fails with ``statuses`` (and the guard's) in ``body``."""
    return {
        status: {"model": body, "description": _WHY.get(status, HTTPStatus(status).phrase)}
        for status in sorted({*statuses, *GUARD})
    }


# --- service -------------------------------------------------------------------------------------
class Health(BaseModel):
    status: Literal["ok"]
    provider: str
    worker: int = Field(description="The id of the server process that answered")


class About(BaseModel):
    version: str = Field(description="The folio version that answers (as `folio --version`)")
    provider: str
    model: str = Field(description="The model, or why there is none")
    database: Literal["SQLite", "PostgreSQL"]


class Me(BaseModel):
    user_id: str
    name: str


# --- books ---------------------------------------------------------------------------------------
class ImportingBook(BaseModel):
    id: str = Field(description="The id the book gets once imported")
    status: Literal["importing"]


class UploadAccepted(BaseModel):
    book: ImportingBook
    job: JobView


class PassageText(BaseModel):
    """The book's text between two offsets, cut by its reading window."""

    book_id: str
    volume: str | None
    chapter: str | None
    page_start: str
    page_end: str
    location: str
    char_start: int
    char_end: int
    text: str


class SearchResults(BaseModel):
    book_id: str
    query: str
    results: list[SearchHitView]


class ConversationPage(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[ConversationListItem]


# --- OpenAI-compatible ---------------------------------------------------------------------------
class ModelCard(BaseModel):
    """A book as an OpenAI model (``id`` is the book's id)."""

    id: str
    object: Literal["model"]
    created: int
    owned_by: Literal["folio"]
    name: str
    title: str
    author: str | None
    position: str = Field(description="How far the reader has read, as a reader says it")


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]


class AssistantMessage(BaseModel):
    role: Literal["assistant"]
    content: str


class Choice(BaseModel):
    index: int
    message: AssistantMessage
    logprobs: None
    finish_reason: Literal["stop"]


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class FolioExtra(BaseModel):
    """Where the answer comes from, and the stored turn (null when stateless)."""

    conversation_id: str | None
    turn_number: int | None
    citations: list[SourceView]
    searches: list[str]
    provider: str
    model: str


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str = Field(description="The book's id")
    choices: list[Choice]
    usage: Usage
    folio: FolioExtra


# --- KOReader's progress sync --------------------------------------------------------------------
class SyncUser(BaseModel):
    username: str


class SyncAuthorized(BaseModel):
    authorized: Literal["OK"]


class SyncPushed(BaseModel):
    document: str
    timestamp: int


class SyncProgress(BaseModel):
    document: str
    percentage: Number
    progress: str
    device: str
    device_id: str
    timestamp: int


class NoProgress(BaseModel):
    """``{}``: nothing was pushed for the document."""

    model_config = ConfigDict(extra="forbid")


class SyncHealth(BaseModel):
    state: Literal["OK"]


# --- streams -------------------------------------------------------------------------------------
# A stream is described event by event (each frame's ``event`` and its JSON ``data``), as
# OpenAPI 3.1 tools read a text/event-stream schema.
SSE = "text/event-stream"


class ToolCallEvent(BaseModel):
    name: str
    arguments: dict[str, Any]


class ToolResultEvent(BaseModel):
    name: str
    success: bool
    summary: str


class DeltaEvent(BaseModel):
    text: str


class StreamErrorDetail(ErrorDetail):
    status: int | None = Field(default=None, description="The status it would have had")


class StreamErrorBody(BaseModel):
    """folio's error body in a stream that has started: ``status`` added when known."""

    error: StreamErrorDetail


class ChunkDelta(TypedDict, total=False):
    role: Literal["assistant"]
    content: str


class ChunkChoice(BaseModel):
    index: int
    delta: ChunkDelta
    logprobs: None
    finish_reason: Literal["stop"] | None


class ChatCompletionChunk(BaseModel):
    """One chunk: the role, a piece of the answer, the last (``finish_reason`` and ``folio``), or
    the usage (no choices)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]
    folio: FolioExtra | None = None
    usage: Usage | None = None


def _inlined(kind: Any) -> dict[str, Any]:
    """The JSON schema of ``kind`` with its definitions in place: an event's data stands alone."""
    schema = TypeAdapter(kind).json_schema(mode="serialization")
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                return resolve(definitions[ref.rsplit("/", 1)[-1]])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(value) for value in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def json_data(kind: Any) -> dict[str, Any]:
    """A frame's ``data``: JSON of ``kind``."""
    return {
        "type": "string",
        "contentMediaType": "application/json",
        "contentSchema": _inlined(kind),
    }


def sse_frame(data: dict[str, Any], event: str | None = None) -> dict[str, Any]:
    if event is None:
        return {"type": "object", "properties": {"data": data}, "required": ["data"]}
    properties = {"event": {"const": event}, "data": data}
    return {"type": "object", "properties": properties, "required": ["event", "data"]}


def sse_body(description: str, *frames: dict[str, Any]) -> dict[str, Any]:
    return {"schema": {"description": description, "oneOf": list(frames)}}


def turn_events(turn: type[BaseModel]) -> dict[str, Any]:
    """folio's stream of a turn whose JSON answer is ``turn``."""
    return sse_body(
        "folio's named events: ``tool_call`` and ``tool_result`` as the agent searches, "
        "``delta`` (a piece of the answer), then exactly one of ``done`` (the turn, as the JSON "
        "answer) or ``error``",
        sse_frame(json_data(ToolCallEvent), "tool_call"),
        sse_frame(json_data(ToolResultEvent), "tool_result"),
        sse_frame(json_data(DeltaEvent), "delta"),
        sse_frame(json_data(turn), "done"),
        sse_frame(json_data(StreamErrorBody), "error"),
    )


COMPLETION_CHUNKS = sse_body(
    "OpenAI's ``data:`` frames: ``chat.completion.chunk`` objects (a role chunk, content deltas, "
    "the final chunk with ``finish_reason`` and ``folio``, a usage chunk with "
    "``stream_options.include_usage``) or one ``{error}``, then ``[DONE]``",
    sse_frame({"anyOf": [{"const": "[DONE]"}, json_data(ChatCompletionChunk | OpenAIErrorBody)]}),
)


def text_body(description: str) -> dict[str, Any]:
    return {"schema": {"type": "string", "description": description}}
