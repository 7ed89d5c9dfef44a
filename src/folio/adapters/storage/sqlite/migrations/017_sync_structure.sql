-- 017: matching a push to a book beyond its exact file. ``book_documents.structure_md5``: an EPUB's
-- structure digest (MD5 of its package's unique identifier and spine hrefs; NULL for other formats
-- and for books imported before this migration), the same for a copy whose metadata Calibre
-- rewrote. ``sync_progress.described``: what the push said of its file (KOReader's ``metadata``:
-- filename, title, authors; its ``identifiers``), as JSON; ``structure_md5`` the structure digest
-- it named, so that a push waiting for its book finds it by that digest too.

ALTER TABLE book_documents ADD COLUMN structure_md5 TEXT;

CREATE INDEX book_documents_by_structure_md5 ON book_documents (structure_md5);

ALTER TABLE sync_progress ADD COLUMN described TEXT NOT NULL DEFAULT '{}';

ALTER TABLE sync_progress ADD COLUMN structure_md5 TEXT;

CREATE INDEX sync_progress_by_structure_md5 ON sync_progress (user_id, structure_md5);
