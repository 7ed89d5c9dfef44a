-- 012: the imported book files, kept in the database so that every worker of a shared library
-- serves them (OPDS). One row per content hash (the books' sha256; two users' copies of the same
-- file share it), its bytes in parts of at most 1 MB: a file is written and read a part at a time,
-- never whole in memory. A file is removed once no book has its hash (BookFileStore.release).

CREATE TABLE book_files (
    content_hash TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    parts INTEGER NOT NULL,
    stored_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE book_file_parts (
    content_hash TEXT NOT NULL REFERENCES book_files(content_hash) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (content_hash, seq)
);

-- EPUB and PDF are compressed already: stored out of line as they are, not compressed again.
ALTER TABLE book_file_parts ALTER COLUMN data SET STORAGE EXTERNAL;
