-- 013: each book's lexicon (the names it uses, with aliases and mentions), built once from its
-- text at import and kept with the book (deleted with it). ``data``: the JSON of
-- ``Lexicon.to_json``; ``version``: its ``LEXICON_VERSION`` (another version is built again).
-- Books imported before this migration have none until their first use builds and stores it.

CREATE TABLE book_lexicons (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    data TEXT NOT NULL
);
