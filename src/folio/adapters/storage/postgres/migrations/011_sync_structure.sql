-- 011: matching a push to a book beyond its exact file; see the SQLite migration 017.

ALTER TABLE book_documents ADD COLUMN structure_md5 TEXT;

CREATE INDEX book_documents_by_structure_md5 ON book_documents (structure_md5);

ALTER TABLE sync_progress ADD COLUMN described JSONB NOT NULL DEFAULT '{}';

ALTER TABLE sync_progress ADD COLUMN structure_md5 TEXT;

CREATE INDEX sync_progress_by_structure_md5 ON sync_progress (user_id, structure_md5);
