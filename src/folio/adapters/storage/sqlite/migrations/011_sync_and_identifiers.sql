-- 011: reading progress synced from e-readers (KOReader's kosync protocol). A book's position may
-- come from a device (``position_source``, ``position_set_at``; NULL when the reader set it in
-- folio). ``book_documents`` holds the ids KOReader gives the book's file (partial MD5 of its bytes,
-- MD5 of its name) and, for an EPUB, where each spine document lies in folio's text.
-- ``sync_accounts``: a user's sync login (the key KOReader sends, stored only as a scrypt hash).
-- ``sync_progress``: the last push per user and document, kept even for a book not added yet.
-- ``book_identifiers``: a book's identifiers from its source (Calibre's isbn, goodreads..., and the
-- Calibre book's uuid, by which a Calibre library is imported only once).

ALTER TABLE books ADD COLUMN position_source TEXT;

ALTER TABLE books ADD COLUMN position_set_at TEXT;

CREATE TABLE sync_accounts (
    user_id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 64),
    key_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE book_documents (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    partial_md5 TEXT NOT NULL,
    filename_md5 TEXT NOT NULL,
    fragments TEXT NOT NULL DEFAULT '[]'
);

CREATE INDEX book_documents_by_partial_md5 ON book_documents (partial_md5);

CREATE INDEX book_documents_by_filename_md5 ON book_documents (filename_md5);

CREATE TABLE sync_progress (
    user_id TEXT NOT NULL,
    document TEXT NOT NULL,
    progress TEXT NOT NULL,
    percentage REAL NOT NULL CHECK (percentage BETWEEN 0 AND 1),
    device TEXT NOT NULL,
    device_id TEXT NOT NULL,
    pushed_at TEXT NOT NULL,
    PRIMARY KEY (user_id, document)
);

CREATE TABLE book_identifiers (
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    scheme TEXT NOT NULL CHECK (length(scheme) BETWEEN 1 AND 64),
    value TEXT NOT NULL CHECK (length(value) BETWEEN 1 AND 500),
    PRIMARY KEY (book_id, scheme)
);

CREATE INDEX book_identifiers_by_value ON book_identifiers (scheme, value);
