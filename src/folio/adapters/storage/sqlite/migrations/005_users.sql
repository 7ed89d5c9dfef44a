-- 005: users and ownership. A user is known by a bearer token stored only as its SHA-256 hash.
-- Every book and conversation has an owner; a resource without an ``owners`` row belongs to the
-- local user (what the CLI and a user-less ``folio serve`` use), and existing data is given to it.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE owners (
    kind TEXT NOT NULL CHECK (kind IN ('book', 'conversation')),
    resource_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (kind, resource_id)
);

CREATE INDEX owners_by_user ON owners (user_id, kind);

INSERT INTO owners (kind, resource_id, user_id) SELECT 'book', id, 'local' FROM books;

INSERT INTO owners (kind, resource_id, user_id) SELECT 'conversation', id, 'local' FROM conversations;
