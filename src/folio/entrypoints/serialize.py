"""Plain-data views of domain objects, shared by the CLI's ``--json`` output and the HTTP API."""

from __future__ import annotations

from typing import Any

from folio.domain.books import Book, SearchHit


def book_summary(book: Book) -> dict[str, Any]:
    return {
        "id": book.id,
        "title": book.title,
        "author": book.author,
        "format": book.format.value,
        "source_name": book.source_name,
        "pages": book.page_count,
        "chapters": len(book.chapters),
        "reading_position": position_dict(book),
        "created_at": book.created_at.isoformat() if book.created_at else None,
    }


def book_detail(book: Book, *, reveal_unread: bool = False) -> dict[str, Any]:
    """The book with its chapters. A chapter past the reading position is ``unread`` and its
    title is withheld (``None``) unless ``reveal_unread``: a descriptive title can be a spoiler."""
    data = book_summary(book)
    data["content_hash"] = book.content_hash
    data["page_count"] = book.page_count
    data["char_count"] = book.char_count
    limit = book.position.char_offset
    data["chapters"] = []
    for c in book.chapters:
        unread = limit is not None and c.char_start >= limit
        data["chapters"].append(
            {
                "index": c.index,
                "title": None if unread and not reveal_unread else c.title,
                "char_start": c.char_start,
                "page": book.page_at(c.char_start).label if book.pages else None,
                "unread": unread,
            }
        )
    return data


def position_dict(book: Book) -> dict[str, Any]:
    pos = book.position
    return {
        "kind": pos.kind.value,
        "value": pos.value,
        "char_offset": pos.char_offset,
        "description": pos.describe(),
        "percent": None
        if pos.char_offset is None or not book.char_count
        else round(100 * pos.char_offset / book.char_count, 1),
    }


def hit_dict(hit: SearchHit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "chunk_id": c.id,
        "chapter": c.chapter,
        "page_start": hit.page_label_start,
        "page_end": hit.page_label_end,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "score": round(hit.score, 6),
        "similarity": None if hit.similarity is None else round(hit.similarity, 4),
        "snippet": hit.snippet,
        "text": c.text,
    }
