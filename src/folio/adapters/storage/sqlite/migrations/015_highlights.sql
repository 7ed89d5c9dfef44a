-- 015: the reader's highlights, notes and bookmarks imported from their e-reader (KOReader,
-- Kindle), per book and owner. ``char_start``/``char_end``: where the highlighted text lies in the
-- book's extracted text (NULL: not found there). ``key``: the entry's identity across imports.

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
