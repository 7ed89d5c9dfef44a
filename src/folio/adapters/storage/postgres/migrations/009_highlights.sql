-- 009: the reader's highlights, notes and bookmarks per book and owner; see the SQLite migration
-- 015 for what each column holds.

CREATE TABLE highlights (
    id TEXT PRIMARY KEY,
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('highlight', 'note', 'bookmark')),
    text TEXT NOT NULL,
    note TEXT,
    chapter TEXT,
    location TEXT,
    char_start INTEGER,
    char_end INTEGER,
    created TEXT,
    source TEXT NOT NULL,
    key TEXT NOT NULL,
    UNIQUE (book_id, user_id, key)
);

CREATE INDEX highlights_by_book_user ON highlights (book_id, user_id);
