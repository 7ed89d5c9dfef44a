-- 016: highlights imported for a book the reader has not added yet, kept per owner until that
-- book is added (then anchored into ``highlights`` and removed here). ``entry``: the device's
-- entry as JSON; one row per owner, title, author and entry ``key``.

CREATE TABLE pending_highlights (
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (user_id, title, author, key)
);
