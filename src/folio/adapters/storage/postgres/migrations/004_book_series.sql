-- 004: the series a book belongs to and its place in it (from EPUB metadata, Calibre or the reader).

ALTER TABLE books ADD COLUMN series TEXT;
ALTER TABLE books ADD COLUMN series_index DOUBLE PRECISION;
CREATE INDEX books_series ON books (series);
