-- 002: the reader may choose to read the front and back matter before their position (an editor's
-- introduction, notes) before finishing the book; off unless they ask (it may discuss the story).
-- 0/1 as in SQLite, so that `folio db copy` copies the column as it is.

ALTER TABLE books ADD COLUMN position_include_matter SMALLINT NOT NULL DEFAULT 0
    CHECK (position_include_matter IN (0, 1));
