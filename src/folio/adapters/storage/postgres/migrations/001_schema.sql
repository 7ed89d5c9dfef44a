-- 001: the whole folio schema in PostgreSQL, equal in meaning to SQLite's migrations 001-007:
-- books with their text, chunks with a full-text column and their pgvector embeddings, conversations,
-- messages and turns, users and ownership, and import jobs. Datetimes are timestamptz; JSON is jsonb.

CREATE EXTENSION IF NOT EXISTS vector;

-- Porter-style stemming like SQLite's FTS5 tokenizer, WITHOUT the stopword list of the built-in
-- 'english' configuration: the domain already drops function words from queries, and keeps them
-- when a query has nothing else ("it"), which the built-in configuration would turn into nothing.
CREATE TEXT SEARCH DICTIONARY folio_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION folio_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION folio_english
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH folio_stem;

CREATE TABLE books (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT,
    format TEXT NOT NULL,
    source_name TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    page_count INTEGER NOT NULL,
    char_count INTEGER NOT NULL,
    chapters JSONB NOT NULL DEFAULT '[]',
    pages JSONB NOT NULL DEFAULT '[]',
    position_char_offset BIGINT CHECK (position_char_offset IS NULL OR position_char_offset >= 0),
    position_kind TEXT NOT NULL DEFAULT 'none'
        CHECK (position_kind IN ('none', 'page', 'chapter', 'percent')),
    position_value DOUBLE PRECISION,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE book_texts (
    book_id TEXT PRIMARY KEY REFERENCES books(id) ON DELETE CASCADE,
    text TEXT NOT NULL
);

CREATE TABLE chunks (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    char_start BIGINT NOT NULL,
    char_end BIGINT NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    chapter TEXT,
    chapter_index INTEGER,
    tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('folio_english'::regconfig, text)) STORED,
    UNIQUE (book_id, ordinal),
    CHECK (char_start >= 0 AND char_end >= char_start)
);

CREATE INDEX chunks_book_start ON chunks (book_id, char_start);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

-- The vector column has no fixed dimension (books indexed by different embedders may coexist), so
-- no HNSW index can be built on it; searches are exact scans of one book's visible chunks (see
-- postgres_library.py for why that is the right choice at library scale).
CREATE TABLE chunk_vectors (
    seq BIGINT PRIMARY KEY REFERENCES chunks(seq) ON DELETE CASCADE,
    embedding vector NOT NULL  -- L2-normalised
);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    title TEXT NOT NULL CHECK (length(trim(title)) > 0),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    auto_title BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE INDEX conversations_book ON conversations (book_id, updated_at);

CREATE TABLE chat_messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    turn_number INTEGER NOT NULL CHECK (turn_number >= 1),
    seq INTEGER NOT NULL CHECK (seq >= 0),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool_result')),
    content TEXT NOT NULL,
    tool_use_id TEXT,
    tool_invocations JSONB NOT NULL DEFAULT '[]',
    tool_name TEXT,
    is_error BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (conversation_id, turn_number, seq)
);

CREATE TABLE turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    turn_number INTEGER NOT NULL CHECK (turn_number >= 1),
    created_at TIMESTAMPTZ NOT NULL,
    queries JSONB NOT NULL DEFAULT '[]',
    retrieval_attempts INTEGER NOT NULL DEFAULT 0,
    sources JSONB NOT NULL DEFAULT '[]',
    reasoning_steps JSONB NOT NULL DEFAULT '[]',
    guardrail_score DOUBLE PRECISION,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    llm_calls INTEGER NOT NULL DEFAULT 0,
    latency_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
    strategy TEXT NOT NULL DEFAULT '',
    extra JSONB NOT NULL DEFAULT '{}',
    cache_read_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cache_read_tokens >= 0),
    cache_write_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
    UNIQUE (conversation_id, turn_number)
);

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
