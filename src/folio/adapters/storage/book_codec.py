"""Books and passages as rows of the SQL libraries (SQLite and PostgreSQL share one schema), and
back. A row read back holds JSON as text (SQLite) or parsed (PostgreSQL's jsonb), and its date as
text or as a datetime: the decoders take either, so both adapters share them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from folio.adapters.storage.row_values import encode_datetime, json_value, moment
from folio.domain.books import (
    Book,
    BookFormat,
    Chapter,
    Chunk,
    Page,
    PositionKind,
    ReadingPosition,
    SectionKind,
)
from folio.domain.sections import section_kind

CHUNK_COLUMNS = (
    "seq, id, book_id, ordinal, text, char_start, char_end, page_start, page_end, chapter,"
    " chapter_index"
)


def book_row(book: Book) -> dict[str, Any]:
    """The ``books`` row of ``book`` (named parameters)."""
    created = book.created_at or datetime.now(UTC)
    return {
        "id": book.id,
        "title": book.title,
        "author": book.author,
        "format": book.format.value,
        "source_name": book.source_name,
        "content_hash": book.content_hash,
        "page_count": book.page_count,
        "char_count": book.char_count,
        "chapters": json.dumps(
            [[c.index, c.title, c.char_start, c.kind.value] for c in book.chapters]
        ),
        "pages": json.dumps([[p.number, p.label, p.char_start, p.char_end] for p in book.pages]),
        "position_char_offset": book.position.char_offset,
        "position_kind": book.position.kind.value,
        "position_value": book.position.value,
        "position_include_matter": int(book.position.include_matter),
        "position_source": book.position.source,
        "position_set_at": position_time(book.position),
        "created_at": created.isoformat(),
        "series": book.series,
        "series_index": book.series_index,
    }


def position_time(position: ReadingPosition) -> str | None:
    """When a synced position was sent, as stored (ISO text; PostgreSQL casts it)."""
    return None if position.set_at is None else encode_datetime(position.set_at)


def book_from_row(row: Mapping[str, Any]) -> Book:
    return Book(
        id=row["id"],
        title=row["title"],
        author=row["author"],
        format=BookFormat(row["format"]),
        source_name=row["source_name"],
        content_hash=row["content_hash"],
        page_count=row["page_count"],
        char_count=row["char_count"],
        chapters=tuple(_chapter(entry) for entry in json_value(row["chapters"])),
        pages=tuple(Page(n, label, s, e) for n, label, s, e in json_value(row["pages"])),
        position=ReadingPosition(
            row["position_char_offset"],
            PositionKind(row["position_kind"]),
            row["position_value"],
            bool(row["position_include_matter"]),
            row["position_source"],
            None if row["position_set_at"] is None else moment(row["position_set_at"]),
        ),
        created_at=moment(row["created_at"]),
        series=row["series"],
        series_index=None if row["series_index"] is None else float(row["series_index"]),
    )


def chunk_row(chunk: Chunk) -> tuple[Any, ...]:
    """The ``chunks`` row of ``chunk`` without ``seq`` (the database numbers passages)."""
    return (
        chunk.id, chunk.book_id, chunk.ordinal, chunk.text, chunk.char_start, chunk.char_end,
        chunk.page_start, chunk.page_end, chunk.chapter, chunk.chapter_index,
    )  # fmt: skip


def chunk_from_row(row: Mapping[str, Any]) -> Chunk:
    return Chunk(
        id=row["id"],
        book_id=row["book_id"],
        ordinal=row["ordinal"],
        text=row["text"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        page_start=row["page_start"],
        page_end=row["page_end"],
        chapter=row["chapter"],
        chapter_index=row["chapter_index"],
    )


def _chapter(entry: list[Any]) -> Chapter:
    """A stored chapter: ``[index, title, char_start, kind]``; a book stored before sections had
    kinds (three fields) gets the kind its title says."""
    index, title, start = entry[0], entry[1], entry[2]
    kind = SectionKind(entry[3]) if len(entry) > 3 else section_kind(title)
    return Chapter(index, title, start, kind)
