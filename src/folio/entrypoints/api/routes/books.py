"""Books: list, get, edit, delete, reading position, search."""

from __future__ import annotations

import shutil
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Response, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from folio.domain.books import MAX_POSITION_TEXT_CHARS
from folio.domain.series import MAX_SERIES_CHARS, MAX_SERIES_INDEX
from folio.entrypoints.api.deps import BookIdDep, ScopeDep, get_book_id
from folio.entrypoints.api.schemas import PassageText, SearchResults, UploadAccepted, errors_for
from folio.entrypoints.api.uploads import save_upload
from folio.entrypoints.serialize import book_detail, book_summary, hit_dict, job_dict
from folio.entrypoints.views import BookDetail, BookSummary

router = APIRouter(prefix="/api/v1/books", tags=["books"])


class PositionIn(BaseModel):
    """Exactly one of ``chapter`` (as the book names it: "5", "Chapter 5", "Letter 2", words of its
    title), ``chapter_index`` (1-based entry of the book's ``chapters`` list, for a picker),
    ``page`` (label or number), ``percent``, ``reset``; and/or ``include_matter``: whether the
    front and back matter before the position (an editor's introduction, notes: they may discuss
    the whole story) counts as read before the reader finishes the book (omitted: unchanged;
    false until the reader asks)."""

    model_config = ConfigDict(extra="forbid")
    chapter: str | int | None = Field(default=None)
    chapter_index: int | None = Field(default=None, ge=1, le=100_000)
    page: str | int | None = Field(default=None)
    percent: float | None = Field(default=None, ge=0, le=100)
    reset: bool = False
    include_matter: bool | None = None


@router.post(
    "",
    status_code=202,
    response_model=UploadAccepted,
    responses=errors_for(400, 401, 413, 415, 422, 503),
)
async def upload_book(
    scope: ScopeDep,
    response: Response,
    file: Annotated[UploadFile, File(description="The book: EPUB, PDF, HTML, Markdown or text")],
    title: Annotated[str | None, Form(max_length=500)] = None,
    author: Annotated[str | None, Form(max_length=500)] = None,
    position: Annotated[
        str | None,
        Form(
            max_length=MAX_POSITION_TEXT_CHARS,
            description="How far you have read, in the book's words: 'Chapter 5', 'Letter 2', "
            "'p. 45', '23%', 'not started' or 'whole'. Omitted: no position is set (answers may "
            "come from the whole book, and say so).",
        ),
    ] = None,
) -> dict[str, Any]:
    """Upload a book (multipart field ``file``) and, in ``position``, how far you have read it.
    Its type is sniffed from the content; the import runs in the background: poll ``GET
    /api/v1/jobs/{job_id}``. 413 over ``max_book_mb``, 415 for a file that is not a book; a
    ``position`` that names no place in the book fails the job with ``INVALID_POSITION`` and
    stores nothing (the error names no chapter title but bare labels such as "Chapter 5": how far
    you have read is not known yet)."""
    settings = scope.container.settings
    folder = settings.home / "uploads" / uuid.uuid4().hex
    folder.mkdir(parents=True)
    path = folder / "upload"
    try:
        await save_upload(
            file,
            path,
            max_bytes=settings.max_book_bytes,
            too_large=f"A book is at most {settings.max_book_mb:g} MB (setting max_book_mb)",
        )
        job = await run_in_threadpool(
            scope.imports.start,
            path,
            file.filename or "book",
            title=title,
            author=author,
            position=position,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    response.headers["Location"] = f"/api/v1/jobs/{job.id}"
    return {"book": {"id": job.book_id, "status": "importing"}, "job": job_dict(job)}


@router.get("", response_model=list[BookSummary], responses=errors_for(401, 503))
def list_books(scope: ScopeDep) -> list[dict[str, Any]]:
    return [book_summary(b) for b in scope.library.list_books()]


@router.get("/{book_id}", response_model=BookDetail, responses=errors_for(401, 404, 409, 422, 503))
def get_book(book_id: BookIdDep, scope: ScopeDep, all_chapters: bool = False) -> dict[str, Any]:
    """The book with its chapters; unread chapters' titles are withheld unless ``all_chapters``."""
    return book_detail(scope.library.get(book_id), reveal_unread=all_chapters)


class BookPatch(BaseModel):
    """The fields to change; an empty ``author`` clears it, an empty ``series`` clears the series
    and its index; ``series_index`` alone keeps the series. In a series, a conversation with a
    volume also searches the earlier volumes in full, never the later ones."""

    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(default=None, min_length=1, max_length=500)
    author: str | None = Field(default=None, max_length=500)
    series: str | None = Field(default=None, max_length=MAX_SERIES_CHARS)
    series_index: float | None = Field(default=None, ge=0, le=MAX_SERIES_INDEX, allow_inf_nan=False)


@router.patch(
    "/{book_id}",
    response_model=BookDetail,
    responses=errors_for(400, 401, 404, 409, 413, 422, 503),
)
def edit_book(book_id: BookIdDep, body: BookPatch, scope: ScopeDep) -> dict[str, Any]:
    book = scope.library.edit(
        book_id,
        title=body.title,
        author=body.author,
        series=body.series,
        series_index=body.series_index,
    )
    return book_detail(book)


@router.delete("/{book_id}", status_code=204, responses=errors_for(401, 404, 409, 422, 503))
def delete_book(book_id: BookIdDep, scope: ScopeDep) -> Response:
    scope.library.remove(book_id)
    return Response(status_code=204)


@router.put(
    "/{book_id}/position",
    response_model=BookDetail,
    responses=errors_for(400, 401, 404, 409, 413, 422, 503),
)
def set_position(book_id: BookIdDep, body: PositionIn, scope: ScopeDep) -> dict[str, Any]:
    book = scope.library.set_position(
        book_id,
        page=None if body.page is None else str(body.page),
        chapter=body.chapter,
        chapter_index=body.chapter_index,
        percent=body.percent,
        reset=body.reset,
        include_matter=body.include_matter,
    )
    return book_detail(book)


@router.get(
    "/{book_id}/text",
    response_model=PassageText,
    responses=errors_for(400, 401, 404, 409, 422, 503),
)
def read_text(
    book_id: BookIdDep,
    scope: ScopeDep,
    start: Annotated[int, Query(ge=0)],
    end: Annotated[int, Query(ge=1)],
    volume: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """The book's text between two character offsets (a citation's ``char_start``/``char_end``,
    widened for context), cut by its reading window; 400 for a range past the position.
    ``volume``: a citation's ``book_id``, an earlier volume of the book's series (400 for any
    other book)."""
    volume = None if volume is None else get_book_id(volume, scope)
    p = scope.library.read(book_id, start, end, volume_id=volume)
    return {
        "book_id": volume or book_id,
        "volume": p.volume,
        "chapter": p.chapter,
        "page_start": p.page_start,
        "page_end": p.page_end,
        "location": p.location,
        "char_start": p.char_start,
        "char_end": p.char_end,
        "text": p.text,
    }


@router.get(
    "/{book_id}/search",
    response_model=SearchResults,
    responses=errors_for(400, 401, 404, 409, 422, 503),
)
async def search_book(
    book_id: BookIdDep,
    scope: ScopeDep,
    q: Annotated[str, Query(min_length=1, max_length=1000)],
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> dict[str, Any]:
    """Passages of the book up to the reading position, best first."""

    def run() -> dict[str, Any]:
        book = scope.books.get(book_id)
        hits = scope.searcher.search(book, q, k=k, window=scope.library.window(book))
        return {"book_id": book.id, "query": q, "results": [hit_dict(h) for h in hits]}

    return await run_in_threadpool(run)
