-- 001: the library: books, their extracted text, chunks with vectors, and the FTS5 index over chunks.

CREATE TABLE books (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT,
    format TEXT NOT NULL,
    source_name TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    page_count INTEGER NOT NULL,
    char_count INTEGER NOT NULL,
    chapters TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(chapters)),
    pages TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(pages)),
    position_char_offset INTEGER CHECK (position_char_offset IS NULL OR position_char_offset >= 0),
    position_kind TEXT NOT NULL DEFAULT 'none'
        CHECK (position_kind IN ('none', 'page', 'chapter', 'percent')),
    position_value REAL,
    created_at TEXT NOT NULL
);

CREATE TABLE book_texts (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    text TEXT NOT NULL
);

-- seq is the integer rowid the FTS index points at, never reused (AUTOINCREMENT) so that a cache
-- keyed on a book's seqs notices a re-added book; id is the chunk's stable identifier.
CREATE TABLE chunks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    chapter TEXT,
    chapter_index INTEGER,
    embedding BLOB NOT NULL,  -- float32, little-endian, L2-normalised
    UNIQUE (book_id, ordinal),
    CHECK (char_start >= 0 AND char_end >= char_start)
);

CREATE INDEX chunks_book_start ON chunks (book_id, char_start);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text,
    content = 'chunks',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.seq, new.text);
END;

CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;

CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO chunks_fts (rowid, text) VALUES (new.seq, new.text);
END;
