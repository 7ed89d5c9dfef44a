"""Asking folio from KOReader (the ``folio.koplugin``): a question, the story so far and the people
met so far, from the exact place the device is.

Each request names the book as KOReader does (``document``: its partial MD5, or the MD5 of its
file name) and the place with KOReader's own fields (``progress``: an xpointer, or a PDF's page
number; ``percentage``: 0-1). The book is the caller's book of that file, found as progress sync
finds it; the place becomes a position as a sync push would make it, and bounds this request only
(the chat turn and the reader tools see the book at that place: ``app.device_reading``); it is
not stored as the reader's position, which progress sync keeps. A question continues the given
conversation, else the book's latest one (shared with the web page and the terminal), else starts
one; ``new_conversation`` always starts one. Citations carry the place KOReader opens them at: an
xpointer into the EPUB, or a PDF's page.

Login: folio's bearer token, or KOReader's sync login headers (``x-auth-user``, ``x-auth-key``),
checked as progress sync checks them (at most two key checks at once); a server without users
needs neither, as every ``/api`` route. The request guard leaves these routes' credentials to them
(``KOREADER_AUTH_PREFIXES``) and still bounds their bodies; a body is read only once its caller is
known. Errors are folio's one error body; none names anything past the place asked from.
"""

from __future__ import annotations

from typing import Any, TypeVar

import anyio
from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ValidationError

from folio.app.chat import TurnResult
from folio.app.device_reading import DevicePlace
from folio.bootstrap import Container, UserScope
from folio.domain.books import Book
from folio.domain.errors import BookError, BookErrorCode
from folio.domain.passages import PEOPLE, RECAP, Passage, PeopleList, Recap
from folio.domain.sync import SyncError, SyncErrorCode
from folio.entrypoints.api.deps import ContainerDep, TurnSlots, TurnSlotsDep
from folio.entrypoints.api.errors import ApiError
from folio.entrypoints.api.koreader_schemas import (
    AskIn,
    AskOut,
    PeopleOut,
    PlaceIn,
    StoryOut,
    request_body,
)
from folio.entrypoints.api.routes.chat import checked_message
from folio.entrypoints.api.schemas import errors_for
from folio.entrypoints.api.sync_login import header_user, too_many_failures
from folio.entrypoints.api.turn_stream import TurnStream
from folio.entrypoints.citation_marks import numbered_answer

PREFIX = "/api/v1/koreader"
# The routes check their own credentials (a bearer token or the sync login): see the guard.
KOREADER_AUTH_PREFIXES = (f"{PREFIX}/",)
router = APIRouter(prefix=PREFIX, tags=["KOReader"])

QUOTE_WORDS = 40


# --- routes ------------------------------------------------------------------------------------
@router.post(
    "/ask",
    response_model=AskOut,
    responses=errors_for(401, 404, 409, 413, 422, 429, 502, 503, 504),
    openapi_extra=request_body(AskIn),
)
async def ask(request: Request, container: ContainerDep, slots: TurnSlotsDep) -> dict[str, Any]:
    """Answer ``question`` about the book KOReader has open, bounded by the place it is at, in
    the book's conversation; the answer's citations open their passages on the device."""
    user_id = await _caller(request, container)
    body = await _body(request, AskIn)
    question = checked_message(body.question, container)
    scope = container.for_user(user_id)
    turn = TurnStream(slots, user_id)

    def prepare() -> tuple[Book, Any]:
        book = _placed(scope, body)
        conversation_id = scope.conversations.for_question(
            book, body.conversation_id, new=body.new_conversation
        )
        chat = scope.chat(
            still_wanted=turn.still_wanted,
            still_there=turn.still_there,
            books=scope.devices.positioned(book, book.position),
        )
        return book, lambda on_event: chat.execute(conversation_id, question, on_event=on_event)

    book, run = await run_in_threadpool(prepare)
    result = await turn.result(run)
    return await run_in_threadpool(_answer, scope, book, result)


@router.post(
    "/story",
    response_model=StoryOut,
    responses=errors_for(401, 404, 413, 422, 429, 502, 503, 504),
    openapi_extra=request_body(PlaceIn),
)
async def story(request: Request, container: ContainerDep, slots: TurnSlotsDep) -> dict[str, Any]:
    """The story so far (a recap of every chapter read), up to the place KOReader is at."""
    user_id = await _caller(request, container)
    body = await _body(request, PlaceIn)
    scope = container.for_user(user_id)
    return await _holding_slot(slots, user_id, lambda: _story(scope, body))


@router.post(
    "/people",
    response_model=PeopleOut,
    responses=errors_for(401, 404, 413, 422, 429, 503),
    openapi_extra=request_body(PlaceIn),
)
async def people(request: Request, container: ContainerDep) -> dict[str, Any]:
    """The people met so far, most mentioned first, each with where they first appear."""
    user_id = await _caller(request, container)
    body = await _body(request, PlaceIn)
    scope = container.for_user(user_id)
    return await run_in_threadpool(_people, scope, body)


# --- who and what ------------------------------------------------------------------------------
async def _caller(request: Request, container: Container) -> str:
    """The user of the bearer token, else of KOReader's sync login headers (progress sync's own
    check: its failed-login limits, its key-check threads), else (a server without users) the
    local user. A wrong sync login is a 401 whatever the mode."""
    headers = request.headers
    if "authorization" not in headers and ("x-auth-user" in headers or "x-auth-key" in headers):
        try:
            return await header_user(request, container)
        except SyncError as e:
            if e.code is SyncErrorCode.RATE_LIMITED:
                raise too_many_failures(e) from e
            raise ApiError(
                401,
                "UNAUTHORIZED",
                "Wrong sync login: check the user name and password of KOReader's progress sync "
                "(`folio users sync-password NAME` sets them on the server), or use a folio token",
            ) from e
    authorization = headers.get("authorization", "")
    user: str = await anyio.to_thread.run_sync(container.users.authenticate_header, authorization)
    return user


M = TypeVar("M", bound=BaseModel)


async def _body(request: Request, model: type[M]) -> M:
    """The JSON body as ``model`` (the guard has bounded its size: 413 past it)."""
    raw = await request.body()
    try:
        return model.model_validate_json(raw or b"null")
    except ValidationError as e:
        problems = []
        for item in e.errors(include_url=False)[:5]:
            where = ".".join(str(x) for x in item.get("loc", ())) or "body"
            problems.append(f"{where}: {item.get('msg', 'invalid')}")
        raise ApiError(422, "INVALID_INPUT", "Invalid request: " + "; ".join(problems)) from e


def _placed(scope: UserScope, body: PlaceIn) -> Book:
    """The caller's book of ``body.document``, at the place the device is (not stored)."""
    devices = scope.devices
    try:
        book = devices.book_for(body.document)
        return book.with_position(devices.position(book, body.progress, body.percentage))
    except BookError as e:
        if e.is_not_found:
            raise ApiError(404, "BOOK_NOT_FOUND", e.message) from e
        if e.code is BookErrorCode.INVALID_POSITION:
            raise ApiError(422, "INVALID_POSITION", e.message) from e
        raise


async def _holding_slot(slots: TurnSlots, user_id: str, work: Any) -> dict[str, Any]:
    """``work`` in a worker thread, in one of the user's turn slots (a recap may call a model
    once per chapter)."""
    slots.acquire(user_id)
    try:
        result: dict[str, Any] = await run_in_threadpool(work)
        return result
    finally:
        slots.release(user_id)


def _tool(scope: UserScope, book: Book, name: str) -> object:
    """Reader tool ``name`` at ``book``'s (device) position, as a chat turn runs it."""
    window = scope.library.window(book)
    result = scope.reader_tool(name, window, books=scope.devices.positioned(book, book.position))
    if not result.success:
        raise ApiError(502, str(result.error_code or "TOOL_FAILED"), result.error or "It failed")
    return result.data


# --- answers -----------------------------------------------------------------------------------
def _answer(scope: UserScope, book: Book, result: TurnResult) -> dict[str, Any]:
    sources = result.citations
    places = scope.devices.places(book, [(s.book_id, s.char_start) for s in sources])
    citations = [
        _cited(n, s.chapter, s.page_start, s.quote, place, s.char_start, s.char_end, s.volume)
        for n, (s, place) in enumerate(zip(sources, places, strict=True), 1)
    ]
    return {
        "answer": numbered_answer(result.answer, sources),
        "conversation_id": result.conversation_id,
        "turn_number": result.turn_number,
        "book": _book(book),
        "position": _position(book),
        "citations": citations,
    }


def _story(scope: UserScope, body: PlaceIn) -> dict[str, Any]:
    book = _placed(scope, body)
    recap = _tool(scope, book, RECAP)
    assert isinstance(recap, Recap)
    places = scope.devices.places(book, [(p.book_id, p.char_start) for p in recap.passages])
    citations = []
    lines = [f"_The story so far, {recap.reading_limit}_"]
    heading: tuple[str | None, str | None] | None = None
    for n, (passage, place) in enumerate(zip(recap.passages, places, strict=True), 1):
        quote = _quote(scope, book, passage) if recap.generated else passage.text
        citations.append(_passage_cited(n, passage, place, quote))
        if (passage.volume, passage.chapter) != heading:
            heading = (passage.volume, passage.chapter)
            title = " – ".join(t for t in heading if t) or "Before the first chapter"
            lines.append(f"\n**{title}**\n")
        lines.append(f"{passage.text} [{n}]")
    if recap.note:
        lines.append(f"\n_{recap.note}_")
    return {
        "text": "\n".join(lines).strip(),
        "citations": citations,
        "book": _book(book),
        "position": _position(book),
    }


def _people(scope: UserScope, body: PlaceIn) -> dict[str, Any]:
    book = _placed(scope, body)
    found = _tool(scope, book, PEOPLE)
    assert isinstance(found, PeopleList)
    firsts = [(p.first.book_id, p.first.char_start) for p in found.people]
    places = scope.devices.places(book, firsts)
    people = []
    for person, place in zip(found.people, places, strict=True):
        first = _passage_cited(0, person.first, place, person.first.text)
        del first["n"]
        people.append(
            {
                "name": person.name,
                "aliases": list(person.aliases),
                "mentions": person.mentions,
                "introduced": first,
            }
        )
    return {"people": people, "book": _book(book), "position": _position(book), "note": found.note}


def _book(book: Book) -> dict[str, Any]:
    return {"id": book.id, "title": book.title, "author": book.author}


def _position(book: Book) -> dict[str, Any]:
    offset = book.position.char_offset or 0
    chapter = book.position_chapter
    label = book.page_at(offset - 1).label if offset > 0 and book.pages else None
    return {
        "chapter": chapter.title if chapter else None,
        "percentage": round(offset / book.char_count, 4) if book.char_count else 0.0,
        "page": _page_number(label),
        "page_label": label,
        "char_offset": offset,
        "description": book.describe_position(),
    }


def _page_number(label: str | None) -> int | None:
    return int(label) if label is not None and label.isdigit() else None


def _cited(
    n: int,
    chapter: str | None,
    page_label: str,
    quote: str,
    place: DevicePlace,
    start: int,
    end: int,
    volume: str | None,
) -> dict[str, Any]:
    return {
        "n": n,
        "chapter": chapter,
        "page": _page_number(page_label),
        "page_label": page_label,
        "quote": _short(quote),
        "xpointer": place.xpointer,
        "pdf_page": place.pdf_page,
        "char_start": start,
        "char_end": end,
        "volume": volume,
    }


def _passage_cited(n: int, passage: Passage, place: DevicePlace, quote: str) -> dict[str, Any]:
    return _cited(
        n,
        passage.chapter,
        passage.page_start,
        quote,
        place,
        passage.char_start,
        passage.char_end,
        passage.volume,
    )


def _quote(scope: UserScope, book: Book, passage: Passage) -> str:
    """The book's own first words of a passage whose text is a model's recap."""
    end = min(passage.char_end, passage.char_start + 8 * QUOTE_WORDS)
    return scope.books.get_text(passage.book_id or book.id, passage.char_start, end)


def _short(text: str) -> str:
    words = text.split()
    return " ".join(words) if len(words) <= QUOTE_WORDS else " ".join(words[:QUOTE_WORDS]) + " …"
