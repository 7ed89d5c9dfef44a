-- 002: conversations, their messages and per-turn metadata. Deleting a book deletes its conversations;
-- deleting a conversation deletes its messages and turns. Datetimes are ISO-8601 UTC strings of fixed
-- width (microseconds always present), so text order is time order.

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    book_id TEXT NOT NULL REFERENCES books(id) ON DELETE CASCADE,
    title TEXT NOT NULL CHECK (length(trim(title)) > 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
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
    tool_invocations TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tool_invocations)),
    tool_name TEXT,
    is_error INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    created_at TEXT NOT NULL,
    UNIQUE (conversation_id, turn_number, seq)
);

CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id);

CREATE TABLE turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    turn_number INTEGER NOT NULL CHECK (turn_number >= 1),
    created_at TEXT NOT NULL,
    queries TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(queries)),
    retrieval_attempts INTEGER NOT NULL DEFAULT 0,
    sources TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sources)),
    reasoning_steps TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(reasoning_steps)),
    guardrail_score REAL,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    llm_calls INTEGER NOT NULL DEFAULT 0,
    latency_ms REAL NOT NULL DEFAULT 0,
    strategy TEXT NOT NULL DEFAULT '',
    extra TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(extra)),
    UNIQUE (conversation_id, turn_number)
);
