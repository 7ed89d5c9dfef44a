-- 013: where each book imported from Calibre came from, as of its last import: the library
-- (Calibre's library uuid), the Calibre book (its uuid), Calibre's last_modified then, and the
-- file read (path, size, modification time in ns). A later import applies what changed since
-- and reports the books no longer in the library.

CREATE TABLE calibre_sources (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    library_id TEXT NOT NULL,
    calibre_uuid TEXT NOT NULL,
    last_modified TEXT,
    file TEXT,
    file_size BIGINT,
    file_mtime_ns BIGINT
);

CREATE INDEX calibre_sources_by_library ON calibre_sources (library_id);
