-- 010: highlights waiting for their book, per owner; see the SQLite migration 016.

CREATE TABLE pending_highlights (
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (user_id, title, author, key)
);
