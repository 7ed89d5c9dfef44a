"""Reads a Calibre library: ``metadata.db`` (Calibre's SQLite schema, resources/metadata_sqlite.sql
in kovidgoyal/calibre) and the book files beside it (``<library>/<books.path>/<data.name>.<ext>``).

Safe while Calibre runs: the database is opened read-only (``mode=ro``) and copied at once with
SQLite's online backup API into memory (it waits for Calibre's write to finish, retrying), then
closed; every query reads the copy, so no lock on Calibre's file outlives the copy.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote

from folio.domain.calibre import CalibreBook, CalibreError, CalibreErrorCode, CalibreLibrary

METADATA_DB = "metadata.db"
_REQUIRED = frozenset({"books", "authors", "books_authors_link", "data"})
_BUSY_TIMEOUT_S = 5.0


def is_calibre_library(path: Path) -> bool:
    return (path / METADATA_DB).is_file() if path.is_dir() else path.name == METADATA_DB


def read_calibre_library(path: Path) -> CalibreLibrary:
    """The Calibre library at ``path`` (its folder or its ``metadata.db``): its id and books.

    Raises:
        CalibreError: ``NOT_FOUND`` without a ``metadata.db``, ``DAMAGED`` for a file SQLite
            cannot read, ``NOT_CALIBRE`` for a database without Calibre's tables.
    """
    db = path if path.name == METADATA_DB and not path.is_dir() else path / METADATA_DB
    if not db.is_file():
        raise CalibreError(
            f"{path} is not a Calibre library: it has no {METADATA_DB}",
            code=CalibreErrorCode.NOT_FOUND,
        )
    with closing(_snapshot(db)) as conn:
        _check_schema(conn, db)
        try:
            return CalibreLibrary(_library_id(conn, db), tuple(_books(conn, db.parent)))
        except sqlite3.Error as e:
            raise _damaged(db, e) from e


def _snapshot(db: Path) -> sqlite3.Connection:
    copy = sqlite3.connect(":memory:")
    try:
        uri = f"file:{quote(str(db.resolve()))}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)) as source:
            source.backup(copy)
    except sqlite3.Error as e:
        copy.close()
        raise _damaged(db, e) from e
    return copy


def _damaged(db: Path, error: sqlite3.Error) -> CalibreError:
    return CalibreError(
        f"{db} cannot be read as a Calibre library ({error}); check it with Calibre"
        " (Library maintenance > Check library) or point folio at another library",
        code=CalibreErrorCode.DAMAGED,
    )


def _check_schema(conn: sqlite3.Connection, db: Path) -> None:
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.Error as e:
        raise _damaged(db, e) from e
    missing = _REQUIRED - {str(r[0]) for r in rows}
    if missing:
        raise CalibreError(
            f"{db} is not a Calibre library database (it has no {', '.join(sorted(missing))}"
            " table)",
            code=CalibreErrorCode.NOT_CALIBRE,
        )


def _library_id(conn: sqlite3.Connection, db: Path) -> str:
    """Calibre's uuid of the library (it survives the library being moved), else its folder."""
    rows = _rows(conn, "SELECT uuid FROM library_id ORDER BY id LIMIT 1", "library_id")
    return str(rows[0][0]) if rows and rows[0][0] else str(db.parent.resolve())


def _books(conn: sqlite3.Connection, root: Path) -> list[CalibreBook]:
    authors = _grouped(
        conn,
        "SELECT l.book, a.name FROM books_authors_link AS l JOIN authors AS a ON a.id = l.author"
        " ORDER BY l.id",
    )
    tags = _grouped(
        conn,
        "SELECT l.book, t.name FROM books_tags_link AS l JOIN tags AS t ON t.id = l.tag"
        " ORDER BY t.name",
        table="books_tags_link",
    )
    series = dict(
        _pairs(
            conn,
            "SELECT l.book, s.name FROM books_series_link AS l JOIN series AS s ON s.id = l.series",
            table="books_series_link",
        )
    )
    identifiers: dict[int, dict[str, str]] = defaultdict(dict)
    for book, scheme, value in _rows(
        conn, "SELECT book, type, val FROM identifiers", "identifiers"
    ):
        identifiers[int(book)][str(scheme)] = str(value)
    files: dict[int, dict[str, str]] = defaultdict(dict)
    for book, fmt, name in conn.execute("SELECT book, format, name FROM data"):
        files[int(book)][str(fmt).upper()] = str(name)
    out = []
    modified = "last_modified" if "last_modified" in _columns(conn, "books") else "NULL"
    for book_id, title, path, index, uuid, changed in conn.execute(
        f"SELECT id, title, path, series_index, uuid, {modified} FROM books ORDER BY id"
    ):
        folder = root / str(path)
        named = series.get(book_id)
        out.append(
            CalibreBook(
                calibre_id=int(book_id),
                uuid=str(uuid) if uuid else None,
                title=str(title),
                authors=tuple(authors.get(book_id, ())),
                series=str(named) if named else None,
                series_index=float(index) if named and index is not None else None,
                tags=tuple(tags.get(book_id, ())),
                identifiers=dict(identifiers.get(book_id, {})),
                formats={
                    fmt: folder / f"{name}.{fmt.lower()}"
                    for fmt, name in files.get(book_id, {}).items()
                },
                last_modified=str(changed) if changed is not None else None,
            )
        )
    return out


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def _rows(conn: sqlite3.Connection, sql: str, table: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql``, or none when an older library lacks ``table``."""
    return conn.execute(sql).fetchall() if table in _tables(conn) else []


def _pairs(conn: sqlite3.Connection, sql: str, *, table: str) -> list[tuple[int, str]]:
    return [(int(a), str(b)) for a, b in _rows(conn, sql, table)]


def _grouped(
    conn: sqlite3.Connection, sql: str, *, table: str = "books_authors_link"
) -> dict[int, list[str]]:
    grouped: dict[int, list[str]] = defaultdict(list)
    for book, name in _pairs(conn, sql, table=table):
        grouped[book].append(name)
    return grouped
