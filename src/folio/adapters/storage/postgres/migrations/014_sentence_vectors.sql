-- 014: the vectors of each chunk's sentences, one matrix per chunk (one row per sentence), for the
-- offline answer to pick the sentences it quotes without embedding them on every turn. They go
-- with their chunk: a deleted book or a new edition (its chunks replaced) drops them, and an
-- import fills in those of the chunks without a row here.

CREATE TABLE chunk_sentence_vectors (
    seq BIGINT PRIMARY KEY REFERENCES chunks(seq) ON DELETE CASCADE,
    dimensions INTEGER NOT NULL,  -- a row's width; the rows: len(vectors) / (2 * dimensions)
    vectors BYTEA NOT NULL  -- float16, little-endian, row after row, L2-normalised
);
