"""Plain-data views of domain objects, shared by the CLI's ``--json`` output and the HTTP API:
the bodies whose shapes ``views.py`` declares (a view whose fields are the object's attributes is
built by its model)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from folio.domain.books import Book, SearchHit
from folio.domain.window import ReadingWindow

if TYPE_CHECKING:  # annotations only: `folio books` imports no conversation or job module
    from folio.app.chat import TurnResult
    from folio.domain.conversations import ChatMessage, Conversation, Source, Turn
    from folio.domain.jobs import ImportJob


def book_summary(book: Book) -> dict[str, Any]:
    return {
        "id": book.id,
        "name": book.name,  # the title, or "Frankenstein (EPUB)" beside a same-titled book
        "title": book.title,
        "author": book.author,
        "series": book.series,
        "series_index": book.series_index,
        "format": book.format.value,
        "source_name": book.source_name,
        "pages": book.page_count,
        "chapters": sum(c.is_story for c in book.chapters),
        "other_sections": sum(not c.is_story for c in book.chapters),
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
    window = ReadingWindow(book)
    current = book.position_chapter
    read = {c.index for c in window.chapters()}
    data["chapters"] = []
    for c in book.chapters:
        withheld = not reveal_unread and not window.shows_title(c)
        end = max(c.char_start, book.chapter_end(c) - 1)
        data["chapters"].append(
            {
                "index": c.index,
                "kind": c.kind.value,
                # front/back matter counts as unread until the reader finishes the book
                "unread": c.index not in read,
                # a descriptive title can be a spoiler; "Chapter XIII" is not
                "title": None if withheld else c.title,
                "char_start": c.char_start,
                "page": book.page_at(c.char_start).label if book.pages else None,
                # the last page: what "read to the end of this chapter" reaches
                "page_end": book.page_at(end).label if book.pages else None,
                "current": current is not None and c.index == current.index,
            }
        )
    return data


def position_dict(book: Book) -> dict[str, Any]:
    """The position as stored (``kind``, ``value``, ``char_offset``) and as a reader says it:
    ``description`` ("through Chapter 5 (p. 45 of 205, 23%)"; a synced position adds ", from
    KOReader on Kobo, 2 h ago"), the last ``chapter`` read by its title, the last ``page`` read
    by its label, and for a synced position its ``source`` and ``set_at``."""
    pos = book.position
    percent = book.percent_read()
    chapter = book.position_chapter
    last_page = book.page_at(pos.char_offset - 1).label if pos.char_offset and book.pages else None
    return {
        "kind": pos.kind.value,
        "value": pos.value,
        "char_offset": pos.char_offset,
        "description": book.describe_position(now=datetime.now(UTC)),
        "chapter": chapter.title if chapter else None,
        "page": last_page,
        "page_count": book.page_count,
        "percent": None if percent is None else round(percent, 1),
        "include_matter": pos.include_matter,
        "source": pos.source,
        "set_at": pos.set_at.isoformat() if pos.set_at else None,
    }


def hit_dict(hit: SearchHit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "chunk_id": c.id,
        "book_id": c.book_id,
        "volume": hit.volume,  # the earlier volume of the series it comes from (else null)
        "location": hit.location,
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


def source_dict(source: Source) -> dict[str, Any]:
    from folio.entrypoints.views import SourceView  # the views name roles and jobs: see above

    return SourceView.model_validate(source).model_dump()


def turn_result_dict(result: TurnResult) -> dict[str, Any]:
    """A turn as clients get it (the CLI's ``--json`` fields plus the per-turn metadata)."""
    from folio.entrypoints.views import TurnView

    return TurnView.model_validate(result).model_dump()


def conversation_dict(conversation: Conversation, **extra: Any) -> dict[str, Any]:
    return {
        "conversation_id": conversation.id,
        "book_id": conversation.book_id,
        "title": conversation.title,
        "created_at": conversation.created_at.isoformat(),
        "updated_at": conversation.updated_at.isoformat(),
        **extra,
    }


def message_dict(message: ChatMessage) -> dict[str, Any]:
    return {
        "id": message.id,
        "turn_number": message.turn_number,
        "seq": message.seq,
        "role": message.role.value,
        "content": message.content,
        "created_at": message.created_at.isoformat(),
        "tool_name": message.tool_name,
        "tool_calls": [
            {"id": i.tool_use_id, "name": i.tool_name, "arguments": dict(i.arguments)}
            for i in message.tool_invocations
        ],
        "is_error": message.is_error,
    }


def turn_meta_dict(turn: Turn, answer: str = "") -> dict[str, Any]:
    """A stored turn's metadata; ``answer``: its answer, where its sources' numbers go."""
    from folio.entrypoints.citation_marks import citation_marks

    return {
        "turn_number": turn.turn_number,
        "created_at": turn.created_at.isoformat(),
        "searches": list(turn.queries),
        "citations": [source_dict(s) for s in turn.sources],
        "citation_marks": [
            {"at": at, "source": n} for at, n in citation_marks(answer, turn.sources)
        ],
        "reasoning_steps": list(turn.reasoning_steps),
        "guardrail_score": turn.guardrail_score,
        "provider": turn.provider,
        "model": turn.model,
        "input_tokens": turn.input_tokens,
        "output_tokens": turn.output_tokens,
        "latency_ms": turn.latency_ms,
    }


def job_dict(job: ImportJob) -> dict[str, Any]:
    return {
        "job_id": job.id,
        "status": job.status.value,
        "book_id": job.book_id,
        "filename": job.filename,
        "stage": job.stage,
        "done": job.done,
        "total": job.total,
        "error": None
        if job.error_code is None
        else {"code": job.error_code, "message": job.error_message},
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }
