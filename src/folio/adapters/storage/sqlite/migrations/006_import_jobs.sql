-- 006: book imports run as background jobs; their state is stored so that any server process
-- can answer GET /api/v1/jobs/{id}.

CREATE TABLE import_jobs (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    book_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    stage TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER,
    error_code TEXT,
    error_message TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX import_jobs_by_user ON import_jobs (user_id, created_at);
