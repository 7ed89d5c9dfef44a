"""A real Calibre library made for a test: a ``metadata.db`` with the tables of Calibre's schema
that a library's books live in (column for column as kovidgoyal/calibre resources/
metadata_sqlite.sql declares them, with its ``books_insert_trg`` trigger, which needs the SQL
functions ``title_sort`` and ``uuid4`` that Calibre registers on its own connections) and the
book files laid out as Calibre lays them out:
``<library>/<Author>/<Title> (<id>)/<Title> - <Author>.<ext>``.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = """
CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE,
    sort TEXT COLLATE NOCASE, link TEXT NOT NULL DEFAULT "", UNIQUE(name));
CREATE TABLE books (id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL DEFAULT 'Unknown' COLLATE NOCASE, sort TEXT COLLATE NOCASE,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, pubdate TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    series_index REAL NOT NULL DEFAULT 1.0, author_sort TEXT COLLATE NOCASE,
    isbn TEXT DEFAULT "" COLLATE NOCASE, lccn TEXT DEFAULT "" COLLATE NOCASE,
    path TEXT NOT NULL DEFAULT "", flags INTEGER NOT NULL DEFAULT 1, uuid TEXT,
    has_cover BOOL DEFAULT 0,
    last_modified TIMESTAMP NOT NULL DEFAULT "2000-01-01 00:00:00+00:00");
CREATE TABLE books_authors_link (id INTEGER PRIMARY KEY, book INTEGER NOT NULL,
    author INTEGER NOT NULL, UNIQUE(book, author));
CREATE TABLE books_series_link (id INTEGER PRIMARY KEY, book INTEGER NOT NULL,
    series INTEGER NOT NULL, UNIQUE(book));
CREATE TABLE books_tags_link (id INTEGER PRIMARY KEY, book INTEGER NOT NULL,
    tag INTEGER NOT NULL, UNIQUE(book, tag));
CREATE TABLE data (id INTEGER PRIMARY KEY, book INTEGER NON NULL,
    format TEXT NON NULL COLLATE NOCASE, uncompressed_size INTEGER NON NULL, name TEXT NON NULL,
    UNIQUE(book, format));
CREATE TABLE identifiers (id INTEGER PRIMARY KEY, book INTEGER NON NULL,
    type TEXT NON NULL DEFAULT "isbn" COLLATE NOCASE, val TEXT NON NULL COLLATE NOCASE,
    UNIQUE(book, type));
CREATE TABLE library_id (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL, UNIQUE(uuid));
CREATE TABLE series (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE,
    sort TEXT COLLATE NOCASE, UNIQUE (name));
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE, UNIQUE (name));
CREATE TRIGGER books_insert_trg AFTER INSERT ON books
BEGIN
    UPDATE books SET sort=title_sort(NEW.title),uuid=uuid4() WHERE id=NEW.id;
END;
PRAGMA user_version=25;
"""


@dataclass
class CalibreEntry:
    title: str
    authors: Sequence[str]
    files: dict[str, bytes]  # "EPUB" -> the file's bytes
    series: str | None = None
    series_index: float = 1.0
    tags: Sequence[str] = ()
    identifiers: dict[str, str] = field(default_factory=dict)


def calibre_connection(db: Path) -> sqlite3.Connection:
    """A connection to ``db`` with the functions Calibre's own connections have."""
    conn = sqlite3.connect(db)
    conn.create_function("title_sort", 1, lambda title: title)
    conn.create_function("uuid4", 0, lambda: str(uuid.uuid4()))
    return conn


def make_calibre_library(root: Path, entries: Sequence[CalibreEntry]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    conn = calibre_connection(root / "metadata.db")
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO library_id (uuid) VALUES (?)", (str(uuid.uuid4()),))
    for entry in entries:
        add_calibre_book(conn, root, entry)
    conn.commit()
    conn.close()
    return root


def _id(conn: sqlite3.Connection, table: str, name: str) -> int:
    conn.execute(f"INSERT OR IGNORE INTO {table} (name) VALUES (?)", (name,))
    return int(conn.execute(f"SELECT id FROM {table} WHERE name = ?", (name,)).fetchone()[0])


def add_calibre_book(conn: sqlite3.Connection, root: Path, entry: CalibreEntry) -> int:
    """Add ``entry`` as Calibre does (its row, links and files); returns its Calibre id."""
    author = entry.authors[0]
    cursor = conn.execute(
        "INSERT INTO books (title, series_index, author_sort) VALUES (?, ?, ?)",
        (entry.title, entry.series_index, author),
    )
    book = int(cursor.lastrowid or 0)
    folder = f"{author}/{entry.title} ({book})"
    conn.execute("UPDATE books SET path = ? WHERE id = ?", (folder, book))
    for name in entry.authors:
        conn.execute(
            "INSERT INTO books_authors_link (book, author) VALUES (?, ?)",
            (book, _id(conn, "authors", name)),
        )
    if entry.series:
        conn.execute(
            "INSERT INTO books_series_link (book, series) VALUES (?, ?)",
            (book, _id(conn, "series", entry.series)),
        )
    for tag in entry.tags:
        conn.execute(
            "INSERT INTO books_tags_link (book, tag) VALUES (?, ?)", (book, _id(conn, "tags", tag))
        )
    for scheme, value in entry.identifiers.items():
        conn.execute(
            "INSERT INTO identifiers (book, type, val) VALUES (?, ?, ?)", (book, scheme, value)
        )
    name = f"{entry.title} - {author}"
    (root / folder).mkdir(parents=True, exist_ok=True)
    for fmt, data in entry.files.items():
        (root / folder / f"{name}.{fmt.lower()}").write_bytes(data)
        conn.execute(
            "INSERT INTO data (book, format, uncompressed_size, name) VALUES (?, ?, ?, ?)",
            (book, fmt, len(data), name),
        )
    return book


def story(title: str, chapters: int = 3) -> bytes:
    """A small Markdown book with its own words (so that no two books share their bytes)."""
    parts = [f"# {title}\n"]
    for n in range(1, chapters + 1):
        words = " ".join(f"{title.split()[-1].lower()}{n}w{i}" for i in range(120))
        parts.append(f"## Chapter {n}\n\n{words}.\n")
    return "\n".join(parts).encode()
