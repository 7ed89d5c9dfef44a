"""``folio db copy``: a local SQLite library, whole, into a PostgreSQL database.

What is copied: books (metadata, chapters, pages, reading position), their text, passages,
vectors (of the passages and of their sentences), chapter recaps and lexicons; users (with their
token hashes, so tokens keep working), ownership and import history; and every conversation with
its messages and turns, read through the conversation port, so a library keeping conversations as
JSON files is copied the same way.
The book files the library kept are not rows of it: the composition root copies them after this,
through the two file stores (``bootstrap.storage``).

Invariants: the copy is ONE transaction in the target: it lands whole or not at all. Nothing is
changed in the source. Before writing, it refuses (``StorageError`` CONFLICT, naming what clashes)
when the target already holds a book (same id or same file), a conversation, a user (id, name or
token) or a job of the source: merging two libraries silently could drop one side's data. After
writing, the target's counts for the copied ids are checked against the source's, and any
difference aborts the transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import psycopg

from folio.adapters.storage.postgres.conversations import PostgresUnitOfWork
from folio.adapters.storage.postgres.db import PgDatabase, pg_storage_error, redacted
from folio.adapters.storage.sqlite.db import Database, transaction
from folio.domain.conversations import ChatMessage
from folio.domain.errors import StorageError, StorageErrorCode
from folio.domain.ports import UnitOfWorkFactory

# (table, columns) copied as rows, in foreign-key order. chunks.seq is NOT copied: the target
# numbers its passages itself (it may hold other books); vectors follow their passage by its id.
_TABLES: tuple[tuple[str, str], ...] = (
    (
        "books",
        "id, title, author, format, source_name, content_hash, page_count, char_count, chapters,"
        " pages, position_char_offset, position_kind, position_value, position_include_matter,"
        " created_at, series, series_index, position_source, position_set_at, owner_content",
    ),
    ("book_texts", "book_id, text"),
    ("book_documents", "book_id, partial_md5, filename_md5, fragments, structure_md5"),
    ("book_identifiers", "book_id, scheme, value"),
    (
        "calibre_sources",
        "book_id, library_id, calibre_uuid, last_modified, file, file_size, file_mtime_ns",
    ),
    (
        "chunks",
        "id, book_id, ordinal, text, char_start, char_end, page_start, page_end, chapter,"
        " chapter_index",
    ),
    ("chapter_recaps", "book_id, chapter_index, text, model, created_at"),
    ("book_lexicons", "book_id, version, data"),
    ("users", "id, name, token_hash, created_at"),
    ("owners", "kind, resource_id, user_id"),
    ("sync_accounts", "user_id, username, key_hash, created_at"),
    (
        "sync_progress",
        "user_id, document, progress, percentage, device, device_id, pushed_at, described,"
        " structure_md5",
    ),
    (
        "highlights",
        "id, book_id, user_id, kind, text, note, chapter, location, char_start, char_end, created,"
        " source, key",
    ),
    ("pending_highlights", "user_id, title, author, key, entry, seq"),
    (
        "import_jobs",
        "id, user_id, book_id, filename, status, stage, done, total, error_code, error_message,"
        " created_at, updated_at",
    ),
)
_BATCH = 500

Progress = Callable[[str, int, int], None]  # (what, done, total)


@dataclass(frozen=True, slots=True)
class CopyReport:
    books: int
    passages: int
    vectors: int
    sentence_vectors: int  # passages whose sentences' vectors were copied
    conversations: int
    messages: int
    turns: int
    users: int
    owners: int
    import_jobs: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def copy_library(
    source: Database,
    conversations: UnitOfWorkFactory,
    target: PgDatabase,
    *,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy the SQLite library ``source`` and the conversations of ``conversations`` into the
    migrated PostgreSQL ``target`` in one transaction; returns what was copied."""
    report = progress or _quiet
    src = source.connect()
    try:
        with transaction(src, immediate=False):  # one snapshot of every table
            rows = {
                table: [_no_nul(r) for r in src.execute(f"SELECT {cols} FROM {table}")]
                for table, cols in _TABLES
            }
            vectors = src.execute(
                "SELECT c.id, v.embedding FROM chunk_vectors v JOIN chunks c ON c.seq = v.seq"
            ).fetchall()
            sentences = src.execute(
                "SELECT v.dimensions, v.vectors, c.id FROM chunk_sentence_vectors v"
                " JOIN chunks c ON c.seq = v.seq"
            ).fetchall()
    finally:
        src.close()
    with conversations(read_only=True) as uow:
        history = [
            (c, [_clean(m) for m in uow.messages.get_by_conversation(c.id)],
             uow.turns.get_by_conversation(c.id))
            for c in uow.conversations.list_all()
        ]  # fmt: skip
    _refuse_orphans(history, {str(b["id"]) for b in rows["books"]})
    try:
        with target.connection() as conn:
            _refuse_conflicts(conn, rows, [c.id for c, _, _ in history], target.url)
            for table, columns in _TABLES:
                _insert(conn, table, columns, rows[table], report)
            _insert_vectors(conn, vectors, report)
            _insert_sentence_vectors(conn, sentences, report)
            pg = PostgresUnitOfWork(target, connection=conn)
            with pg:
                for done, (conversation, messages, turns) in enumerate(history, 1):
                    pg.conversations.save(conversation)
                    pg.messages.save_batch(messages)
                    for turn in turns:
                        pg.turns.save(turn)
                    report("conversations", done, len(history))
            copied = CopyReport(
                books=len(rows["books"]),
                passages=len(rows["chunks"]),
                vectors=len(vectors),
                sentence_vectors=len(sentences),
                conversations=len(history),
                messages=sum(len(m) for _, m, _ in history),
                turns=sum(len(t) for _, _, t in history),
                users=len(rows["users"]),
                owners=len(rows["owners"]),
                import_jobs=len(rows["import_jobs"]),
            )
            _check_counts(conn, rows, [c.id for c, _, _ in history], copied, target.url)
    except psycopg.Error as e:  # raised at the commit, after ``connection()`` translated the rest
        raise pg_storage_error(e, target.url) from e
    return copied


def _no_nul(row: sqlite3.Row) -> dict[str, Any]:
    """A row PostgreSQL can store: it has no NUL character in text (a space keeps offsets)."""
    values = dict(zip(row.keys(), row, strict=True))
    return {k: v.replace("\x00", " ") if isinstance(v, str) else v for k, v in values.items()}


def _clean(stored: ChatMessage) -> ChatMessage:
    content = stored.message.content
    if "\x00" not in content:
        return stored
    return replace(stored, message=stored.message.with_content(content.replace("\x00", "")))


def _refuse_orphans(history: Sequence[tuple[Any, ...]], book_ids: set[str]) -> None:
    """Conversations about a book no longer in the library cannot exist in PostgreSQL (its
    foreign keys forbid them): say which, rather than copy a library without them."""
    orphans = [c.id for c, _, _ in history if c.book_id not in book_ids]
    if orphans:
        shown = ", ".join(o[:8] for o in orphans[:5]) + (" ..." if len(orphans) > 5 else "")
        raise StorageError(
            f"{len(orphans)} conversation(s) ({shown}) are about a book that is no longer in the"
            " library, so they cannot be copied. Export them if you want them"
            " (`folio conversations export ID`), remove them (`folio conversations rm ID`), then"
            " copy again. Nothing was copied.",
            code=StorageErrorCode.CONFLICT,
        )


def _quiet(what: str, done: int, total: int) -> None:
    """No progress display."""


def _refuse_conflicts(
    conn: psycopg.Connection[Any],
    rows: dict[str, list[dict[str, Any]]],
    conversation_ids: Sequence[str],
    url: str,
) -> None:
    books = rows["books"]
    users = rows["users"]
    checks = [
        (
            "book",
            "SELECT title FROM books WHERE id = ANY(%s) OR owner_content = ANY(%s)",
            ([b["id"] for b in books], [b["owner_content"] for b in books]),
        ),
        (
            "conversation",
            "SELECT id FROM conversations WHERE id = ANY(%s)",
            (list(conversation_ids),),
        ),
        (
            "user",
            "SELECT name FROM users WHERE id = ANY(%s) OR name = ANY(%s) OR token_hash = ANY(%s)",
            (
                [u["id"] for u in users],
                [u["name"] for u in users],
                [u["token_hash"] for u in users],
            ),
        ),
        (
            "import job",
            "SELECT id FROM import_jobs WHERE id = ANY(%s)",
            ([j["id"] for j in rows["import_jobs"]],),
        ),
    ]
    clashes = []
    for what, sql, params in checks:
        found = [str(r[0]) for r in conn.execute(sql, params).fetchall()]
        if found:
            shown = ", ".join(repr(f) for f in found[:5]) + (" ..." if len(found) > 5 else "")
            clashes.append(f"{len(found)} {what}(s) ({shown})")
    if clashes:
        raise StorageError(
            f"{redacted(url)} already holds {'; '.join(clashes)} of this library. Nothing was"
            " copied: copy into a database without them (remove them there, or use a new"
            " database).",
            code=StorageErrorCode.CONFLICT,
        )


def _insert(
    conn: psycopg.Connection[Any],
    table: str,
    columns: str,
    rows: Sequence[dict[str, Any]],
    report: Progress,
) -> None:
    marks = ", ".join(["%s"] * len(columns.split(",")))
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
    with conn.cursor() as cur:
        for start in range(0, len(rows), _BATCH):
            cur.executemany(sql, [tuple(r.values()) for r in rows[start : start + _BATCH]])
            report(table, min(start + _BATCH, len(rows)), len(rows))


def _insert_vectors(
    conn: psycopg.Connection[Any], vectors: Sequence[sqlite3.Row], report: Progress
) -> None:
    sql = "INSERT INTO chunk_vectors (seq, embedding) SELECT seq, %s FROM chunks WHERE id = %s"
    with conn.cursor() as cur:
        for start in range(0, len(vectors), _BATCH):
            batch = vectors[start : start + _BATCH]
            cur.executemany(
                sql, [(np.frombuffer(blob, dtype="<f4"), chunk_id) for chunk_id, blob in batch]
            )
            report("vectors", min(start + _BATCH, len(vectors)), len(vectors))


def _insert_sentence_vectors(
    conn: psycopg.Connection[Any], rows: Sequence[sqlite3.Row], report: Progress
) -> None:
    """Each passage's sentence vectors, as stored (float16 bytes and their width)."""
    sql = (
        "INSERT INTO chunk_sentence_vectors (seq, dimensions, vectors)"
        " SELECT seq, %s, %s FROM chunks WHERE id = %s"
    )
    with conn.cursor() as cur:
        for start in range(0, len(rows), _BATCH):
            cur.executemany(sql, [tuple(r) for r in rows[start : start + _BATCH]])
            report("sentence vectors", min(start + _BATCH, len(rows)), len(rows))


def _check_counts(
    conn: psycopg.Connection[Any],
    rows: dict[str, list[dict[str, Any]]],
    conversation_ids: Sequence[str],
    copied: CopyReport,
    url: str,
) -> None:
    book_ids = [b["id"] for b in rows["books"]]
    ids = list(conversation_ids)
    found = {
        "books": "SELECT count(*) FROM books WHERE id = ANY(%s)",
        "passages": "SELECT count(*) FROM chunks WHERE book_id = ANY(%s)",
        "vectors": "SELECT count(*) FROM chunk_vectors v JOIN chunks c USING (seq)"
        " WHERE c.book_id = ANY(%s)",
        "sentence_vectors": "SELECT count(*) FROM chunk_sentence_vectors v"
        " JOIN chunks c USING (seq) WHERE c.book_id = ANY(%s)",
        "conversations": "SELECT count(*) FROM conversations WHERE id = ANY(%s)",
        "messages": "SELECT count(*) FROM chat_messages WHERE conversation_id = ANY(%s)",
        "turns": "SELECT count(*) FROM turns WHERE conversation_id = ANY(%s)",
    }
    found["users"] = "SELECT count(*) FROM users WHERE id = ANY(%s)"
    found["import_jobs"] = "SELECT count(*) FROM import_jobs WHERE id = ANY(%s)"
    scopes = {
        "users": [u["id"] for u in rows["users"]],
        "import_jobs": [j["id"] for j in rows["import_jobs"]],
    }
    wanted = copied.as_dict()
    for what, sql in found.items():
        scope = scopes.get(what) or (
            ids if what in ("conversations", "messages", "turns") else book_ids
        )
        row = conn.execute(sql, (scope,)).fetchone()
        count = int(row[0]) if row else 0
        if count != wanted[what]:
            raise StorageError(
                f"The copy into {redacted(url)} holds {count} {what} where the library has"
                f" {wanted[what]}; nothing was copied.",
                code=StorageErrorCode.STORAGE,
            )
