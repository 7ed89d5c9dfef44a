"""Sync logins, KOReader's document ids of each book, and the last push per document, in SQLite
or PostgreSQL (tables of SQLite migration 011 / PostgreSQL migration 005; one SQL text, written
with ``?`` marks that the PostgreSQL runner turns into ``%s``).

Invariant: one push per (user, document), the latest replacing the earlier; a push is kept
whether or not a book with that document exists yet.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from folio.adapters.storage.row_values import encode_datetime, json_value, moment
from folio.adapters.storage.sqlite.db import Database, transaction
from folio.domain.ports import SyncAccount
from folio.domain.sync import DocumentIds, Fragment, PushedDocument, PushedProgress
from folio.domain.users import UserError, UserErrorCode

if TYPE_CHECKING:
    from folio.adapters.storage.postgres.db import PgDatabase

Run = Callable[[str, tuple[Any, ...]], list[Any]]  # (sql with ?, params) -> rows


class SqlSyncStore:
    """Implements ``SyncRepository`` on one SQL runner (see ``sqlite_sync_store`` and
    ``postgres_sync_store``); ``duplicate`` is the driver's unique-violation exception."""

    def __init__(self, run: Run, duplicate: type[Exception]) -> None:
        self._run = run
        self._duplicate = duplicate

    def save_account(self, account: SyncAccount) -> None:
        try:
            self._run(
                "INSERT INTO sync_accounts (user_id, username, key_hash, created_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE"
                " SET username = excluded.username, key_hash = excluded.key_hash",
                (account.user_id, account.username, account.key_hash, _now()),
            )
        except self._duplicate as e:
            raise UserError(
                f"Another user has the sync login {account.username!r}",
                code=UserErrorCode.DUPLICATE,
            ) from e

    def account(self, username: str) -> SyncAccount | None:
        rows = self._run(
            "SELECT user_id, username, key_hash FROM sync_accounts WHERE username = ?", (username,)
        )
        return SyncAccount(str(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None

    def save_documents(self, book_id: str, ids: DocumentIds, fragments: Sequence[Fragment]) -> None:
        encoded = json.dumps(
            [[f.index, f.char_start, f.char_end, f.density, f.anchors] for f in fragments],
            separators=(",", ":"),
        )
        self._run(
            "INSERT INTO book_documents (book_id, partial_md5, filename_md5, fragments,"
            " structure_md5) VALUES (?, ?, ?, ?, ?) ON CONFLICT (book_id) DO UPDATE SET"
            " partial_md5 = excluded.partial_md5, filename_md5 = excluded.filename_md5,"
            " fragments = excluded.fragments, structure_md5 = excluded.structure_md5",
            (book_id, ids.partial_md5, ids.filename_md5, encoded, ids.structure_md5 or None),
        )

    def books_for_document(self, document: str) -> builtins.list[str]:
        rows = self._run(
            "SELECT book_id FROM book_documents WHERE partial_md5 = ? OR filename_md5 = ?"
            " ORDER BY book_id",
            (document, document),
        )
        return [str(r[0]) for r in rows]

    def books_for_structure(self, structure_md5: str) -> builtins.list[str]:
        rows = self._run(
            "SELECT book_id FROM book_documents WHERE structure_md5 = ? ORDER BY book_id",
            (structure_md5,),
        )
        return [str(r[0]) for r in rows]

    def documents_of(self, book_id: str) -> DocumentIds | None:
        rows = self._run(
            "SELECT partial_md5, filename_md5, structure_md5 FROM book_documents WHERE book_id = ?",
            (book_id,),
        )
        return (
            DocumentIds(str(rows[0][0]), str(rows[0][1]), str(rows[0][2] or "")) if rows else None
        )

    def fragments_of(self, book_id: str) -> builtins.list[Fragment]:
        rows = self._run("SELECT fragments FROM book_documents WHERE book_id = ?", (book_id,))
        if not rows:
            return []
        return [
            Fragment(int(i), int(s), int(e), {str(k): int(v) for k, v in a.items()}, float(d))
            for i, s, e, d, a in json_value(rows[0][0])
        ]

    def save_progress(self, user_id: str, progress: PushedProgress) -> None:
        self._run(
            "INSERT INTO sync_progress (user_id, document, progress, percentage, device,"
            " device_id, pushed_at, described, structure_md5) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, document) DO UPDATE SET progress = excluded.progress,"
            " percentage = excluded.percentage, device = excluded.device,"
            " device_id = excluded.device_id, pushed_at = excluded.pushed_at,"
            " described = excluded.described, structure_md5 = excluded.structure_md5",
            (
                user_id,
                progress.document,
                progress.progress,
                progress.percentage,
                progress.device,
                progress.device_id,
                encode_datetime(progress.pushed_at),
                _encode_described(progress.described),
                progress.described.structure_md5 or None,
            ),
        )

    def progress(self, user_id: str, document: str) -> PushedProgress | None:
        rows = self._run(
            f"SELECT {_PROGRESS} FROM sync_progress WHERE user_id = ? AND document = ?",
            (user_id, document),
        )
        return _progress(rows[0]) if rows else None

    def progress_for_structure(self, user_id: str, structure_md5: str) -> PushedProgress | None:
        rows = self._run(
            f"SELECT {_PROGRESS} FROM sync_progress WHERE user_id = ? AND structure_md5 = ?"
            " ORDER BY pushed_at DESC LIMIT 1",
            (user_id, structure_md5),
        )
        return _progress(rows[0]) if rows else None


_PROGRESS = "document, progress, percentage, device, device_id, pushed_at, described"


def _progress(row: Sequence[Any]) -> PushedProgress:
    d, p, pct, device, device_id, at, described = row
    return PushedProgress(str(d), str(p), float(pct), str(device), str(device_id), moment(at),
                          _decode_described(described))  # fmt: skip


def _encode_described(described: PushedDocument) -> str:
    if described == PushedDocument():
        return "{}"
    fields = {
        "filename": described.filename,
        "title": described.title,
        "authors": list(described.authors),
        "content": described.content_md5,
        "structure": described.structure_md5,
        "filename_md5": described.filename_md5,
    }
    return json.dumps({k: v for k, v in fields.items() if v}, separators=(",", ":"))


def _decode_described(value: Any) -> PushedDocument:
    found = json_value(value) if value else {}
    if not isinstance(found, dict):
        return PushedDocument()
    text = {k: str(v) for k, v in found.items() if isinstance(v, str)}
    authors = found.get("authors")
    return PushedDocument(
        filename=text.get("filename", ""),
        title=text.get("title", ""),
        authors=tuple(str(a) for a in authors) if isinstance(authors, list) else (),
        content_md5=text.get("content", ""),
        structure_md5=text.get("structure", ""),
        filename_md5=text.get("filename_md5", ""),
    )


def _now() -> str:
    return encode_datetime(datetime.now(UTC))


def sqlite_runner(db: Database) -> Run:
    """SQL on the SQLite library: a connection per call (a write takes the lock at once)."""

    def run(sql: str, params: tuple[Any, ...]) -> list[Any]:
        with closing(db.connect()) as conn:
            if sql.lstrip().upper().startswith("SELECT"):
                return conn.execute(sql, params).fetchall()
            with transaction(conn, immediate=True):
                conn.execute(sql, params)
            return []

    return run


def sqlite_sync_store(db: Database) -> SqlSyncStore:
    return SqlSyncStore(sqlite_runner(db), sqlite3.IntegrityError)


def postgres_runner(db: PgDatabase) -> Run:
    """SQL on PostgreSQL: a pooled connection per call, one short transaction."""

    def run(sql: str, params: tuple[Any, ...]) -> list[Any]:
        with db.connection() as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

    return run


def postgres_sync_store(db: PgDatabase) -> SqlSyncStore:
    import psycopg

    return SqlSyncStore(postgres_runner(db), psycopg.errors.UniqueViolation)


class SqlIdentifierStore:
    """Implements ``BookIdentifierRepository`` on one SQL runner (``book_identifiers``)."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def set_identifiers(self, book_id: str, identifiers: Mapping[str, str]) -> None:
        for scheme, value in identifiers.items():
            self._run(
                "INSERT INTO book_identifiers (book_id, scheme, value) VALUES (?, ?, ?)"
                " ON CONFLICT (book_id, scheme) DO UPDATE SET value = excluded.value",
                (book_id, scheme[:64], value[:500]),
            )

    def identifiers_of(self, book_id: str) -> dict[str, str]:
        rows = self._run(
            "SELECT scheme, value FROM book_identifiers WHERE book_id = ? ORDER BY scheme",
            (book_id,),
        )
        return {str(r[0]): str(r[1]) for r in rows}

    def books_with(self, scheme: str, value: str) -> builtins.list[str]:
        rows = self._run(
            "SELECT book_id FROM book_identifiers WHERE scheme = ? AND value = ? ORDER BY book_id",
            (scheme, value),
        )
        return [str(r[0]) for r in rows]
