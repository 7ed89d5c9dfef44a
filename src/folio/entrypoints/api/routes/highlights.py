"""The reader's highlights and notes from their e-reader: list a book's, import a device's file,
delete one. Per user: another user's books and highlights do not exist here (404).

- ``GET /api/v1/books/{book_id}/highlights``: the highlights inside the reading window, in the
  book's order; those past the position or in unread matter are counted (``hidden``), never
  shown, and so are those not found in the book's text (``not_found``).
- ``POST /api/v1/highlights/import``: a KOReader ``metadata.*.lua`` or a Kindle ``My
  Clippings.txt`` (multipart ``file``), each entry to the book it names or all to ``book_id``;
  entries for a book not in the library are kept and anchored when it is added (``waiting``).
- ``DELETE /api/v1/books/{book_id}/highlights/{highlight_id}``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Form, Response, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from folio.app.highlights import HighlightImport, ShownHighlights
from folio.domain.books import Book
from folio.domain.highlights import Highlight, HighlightKind
from folio.entrypoints.api.deps import BookIdDep, ScopeDep, get_book_id
from folio.entrypoints.api.schemas import errors_for
from folio.entrypoints.api.uploads import save_upload

router = APIRouter(prefix="/api/v1", tags=["highlights"])


class HighlightView(BaseModel):
    """One highlight, note or bookmark inside the reading window."""

    id: str
    kind: HighlightKind
    text: str = Field(description="The highlighted text as the device kept it")
    note: str | None = Field(description="The reader's note on it")
    chapter: str | None = Field(description="The chapter it lies in, as the book names it")
    page: str | None = Field(description="The label of the page it starts on")
    location: str | None = Field(description="Where the device said it was, in its words")
    char_start: int
    char_end: int
    created: str | None = Field(description="When it was made, as the device wrote it")
    source: str = Field(examples=["KOReader", "Kindle"])


class HighlightList(BaseModel):
    book_id: str
    position: str = Field(description="How far the reader has read, in the book's words")
    highlights: list[HighlightView]
    hidden: int = Field(description="Highlights past the position or in unread matter")
    not_found: int = Field(description="Highlights whose text was not found in the book")


class BookImported(BaseModel):
    book_id: str
    title: str
    read: int = Field(description="Entries of the file for this book")
    added: int = Field(description="New ones kept (an entry imported before is not)")
    anchored: int = Field(description="Of those read, how many were placed in the book's text")


class WaitingImported(BaseModel):
    book: str = Field(description='The book the entries name: "Title (Author)"')
    read: int
    added: int


class HighlightImportView(BaseModel):
    books: list[BookImported]
    waiting: list[WaitingImported] = Field(
        description="Entries for a book not in your library: kept until the book is added"
    )
    message: str


def _view(book: Book, h: Highlight) -> HighlightView:
    assert h.char_start is not None and h.char_end is not None  # only anchored ones are shown
    return HighlightView(
        id=h.id, kind=h.kind, text=h.text, note=h.note, chapter=h.chapter,
        page=book.page_label(h.char_start) if book.pages else None, location=h.location,
        char_start=h.char_start, char_end=h.char_end, created=h.created, source=h.source,
    )  # fmt: skip


def _list(book: Book, shown: ShownHighlights) -> HighlightList:
    return HighlightList(
        book_id=book.id,
        position=book.describe_position(),
        highlights=[_view(book, h) for h in shown.highlights],
        hidden=shown.hidden,
        not_found=shown.unplaced,
    )


@router.get(
    "/books/{book_id}/highlights",
    response_model=HighlightList,
    responses=errors_for(401, 404, 409, 422, 503),
)
def list_highlights(book_id: BookIdDep, scope: ScopeDep) -> HighlightList:
    """Your highlights of the book up to your reading position, in the book's order."""
    book = scope.library.get(book_id)
    return _list(book, scope.highlights.shown(scope.library.window(book)))


@router.delete(
    "/books/{book_id}/highlights/{highlight_id}",
    status_code=204,
    responses=errors_for(401, 404, 409, 422, 503),
)
def delete_highlight(book_id: BookIdDep, highlight_id: str, scope: ScopeDep) -> Response:
    """Forget one of your highlights (importing its file again brings it back)."""
    scope.highlights.delete(scope.library.get(book_id), highlight_id)
    return Response(status_code=204)


@router.post(
    "/highlights/import",
    response_model=HighlightImportView,
    responses=errors_for(400, 401, 404, 409, 413, 422, 503),
)
async def import_highlights(
    scope: ScopeDep,
    file: Annotated[
        UploadFile,
        File(description="A KOReader metadata.<ext>.lua or a Kindle's My Clippings.txt"),
    ],
    book_id: Annotated[
        str | None, Form(max_length=200, description="Give every entry to this book")
    ] = None,
) -> HighlightImportView:
    """Import your highlights and notes from KOReader (a book's ``metadata.*.lua``, from its
    ``.sdr`` folder) or a Kindle (``My Clippings.txt``): each entry goes to your book of the
    same title (and author), or all to ``book_id``. Entries for a book you have not added are
    kept and placed when you add it. Importing the same file again adds nothing. 400 for a file
    that is neither, 413 over ``max_highlights_mb`` (20 MB by default)."""
    folder = Path(tempfile.mkdtemp(prefix="folio-highlights-"))
    try:
        path = folder / _upload_name(file.filename)
        settings = scope.container.settings
        await save_upload(
            file,
            path,
            max_bytes=settings.max_highlights_bytes,
            too_large=f"A highlights file is at most {settings.max_highlights_mb:g} MB"
            " (setting max_highlights_mb)",
        )

        def run() -> HighlightImportView:
            book = scope.library.get(get_book_id(book_id, scope)) if book_id else None
            report = scope.highlights.import_file(path, book=book)
            return _import_view(report)

        return await run_in_threadpool(run)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _upload_name(filename: str | None) -> str:
    """The upload's own file name (what a refusal names), made a safe bare name: its suffix
    tells the readers apart (a ``.lua`` is KOReader's, anything else a Kindle's clippings)."""
    bare = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    safe = "".join(c for c in bare if c.isalnum() or c in " ._-()").strip(" .")[-120:]
    return safe or "highlights.txt"


def _import_view(report: HighlightImport) -> HighlightImportView:
    return HighlightImportView(
        books=[
            BookImported(
                book_id=b.book.id,
                title=b.book.title,
                read=b.read,
                added=b.added,
                anchored=b.anchored,
            )
            for b in report.books
        ],
        waiting=[WaitingImported(book=w.named, read=w.read, added=w.added) for w in report.waiting],
        message=" ".join(report.summary()),
    )
