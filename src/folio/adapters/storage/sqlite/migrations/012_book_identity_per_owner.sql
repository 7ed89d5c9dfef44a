-- 012: a book's content is unique per owner, not across the library: the same file may be in two
-- users' libraries, and adding it never tells one user that another holds it. SQLite cannot drop
-- the UNIQUE constraint of 001 on content_hash without rebuilding the table (and every column other
-- migrations add to it), so the constrained column is renamed to owner_content ("OWNER:HASH",
-- written on insert from the owners table) and content_hash becomes a plain, indexed column.

ALTER TABLE books RENAME COLUMN content_hash TO owner_content;

ALTER TABLE books ADD COLUMN content_hash TEXT NOT NULL DEFAULT '';

UPDATE books SET content_hash = owner_content;

UPDATE books SET owner_content = coalesce(
    (SELECT user_id FROM owners WHERE kind = 'book' AND resource_id = books.id), 'local'
) || ':' || content_hash;

CREATE INDEX books_by_content_hash ON books (content_hash);
