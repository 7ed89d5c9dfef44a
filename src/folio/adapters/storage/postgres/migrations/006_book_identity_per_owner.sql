-- 006: a book's content is unique per owner, not across the library: the same file may be in two
-- users' libraries, and adding it never tells one user that another holds it. As in SQLite's 012:
-- owner_content ("OWNER:HASH", written on insert from the owners table) is the unique key, and
-- content_hash a plain, indexed column.

ALTER TABLE books DROP CONSTRAINT books_content_hash_key;

ALTER TABLE books ADD COLUMN owner_content TEXT;

UPDATE books SET owner_content = coalesce(
    (SELECT o.user_id FROM owners o WHERE o.kind = 'book' AND o.resource_id = books.id), 'local'
) || ':' || content_hash;

ALTER TABLE books ALTER COLUMN owner_content SET NOT NULL;

ALTER TABLE books ADD CONSTRAINT books_owner_content_key UNIQUE (owner_content);

CREATE INDEX books_by_content_hash ON books (content_hash);

-- A row inserted without it (a script, an older client) gets it from its owner, as folio does.
CREATE FUNCTION books_owner_content() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.owner_content IS NULL THEN
        NEW.owner_content := coalesce(
            (SELECT o.user_id FROM owners o WHERE o.kind = 'book' AND o.resource_id = NEW.id),
            'local'
        ) || ':' || NEW.content_hash;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER books_owner_content BEFORE INSERT ON books
    FOR EACH ROW EXECUTE FUNCTION books_owner_content();
