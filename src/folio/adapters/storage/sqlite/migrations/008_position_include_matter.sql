-- 008: the reader may choose to read the front and back matter before their position (an editor's
-- introduction, notes) before finishing the book; off unless they ask (it may discuss the story).

ALTER TABLE books ADD COLUMN position_include_matter INTEGER NOT NULL DEFAULT 0
    CHECK (position_include_matter IN (0, 1));
