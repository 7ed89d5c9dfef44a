-- 003: a model's recap of a whole chapter, written once and kept with the book (deleted with it).

CREATE TABLE chapter_recaps (
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    chapter_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (book_id, chapter_index)
);
