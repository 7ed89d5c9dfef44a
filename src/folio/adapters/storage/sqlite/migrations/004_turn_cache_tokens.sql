-- 004: prompt-cache accounting per turn. Of a turn's input_tokens, cache_read_tokens were served from
-- the provider's prompt cache and cache_write_tokens were written to it (0 where not reported).

ALTER TABLE turns ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0
    CHECK (cache_read_tokens >= 0);

ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0
    CHECK (cache_write_tokens >= 0);
