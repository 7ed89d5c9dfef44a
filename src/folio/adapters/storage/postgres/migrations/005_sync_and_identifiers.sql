-- 005: reading progress synced from e-readers (KOReader's kosync protocol); see the SQLite
-- migration 011 for what each table holds. ``book_identifiers``: a book's identifiers from Calibre.

ALTER TABLE books ADD COLUMN position_source TEXT;

ALTER TABLE books ADD COLUMN position_set_at TIMESTAMPTZ;

CREATE TABLE sync_accounts (
    user_id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 64),
    key_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE book_documents (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    partial_md5 TEXT NOT NULL,
    filename_md5 TEXT NOT NULL,
    fragments JSONB NOT NULL DEFAULT '[]'
);

CREATE INDEX book_documents_by_partial_md5 ON book_documents (partial_md5);

CREATE INDEX book_documents_by_filename_md5 ON book_documents (filename_md5);

CREATE TABLE sync_progress (
    user_id TEXT NOT NULL,
    document TEXT NOT NULL,
    progress TEXT NOT NULL,
    percentage DOUBLE PRECISION NOT NULL CHECK (percentage BETWEEN 0 AND 1),
    device TEXT NOT NULL,
    device_id TEXT NOT NULL,
    pushed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, document)
);

CREATE TABLE book_identifiers (
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    scheme TEXT NOT NULL CHECK (length(scheme) BETWEEN 1 AND 64),
    value TEXT NOT NULL CHECK (length(value) BETWEEN 1 AND 500),
    PRIMARY KEY (book_id, scheme)
);

CREATE INDEX book_identifiers_by_value ON book_identifiers (scheme, value);
