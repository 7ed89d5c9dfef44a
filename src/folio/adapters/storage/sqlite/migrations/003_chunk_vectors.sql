-- 003: vectors move to their own table, so that a book's chunks can be stored (and searched by
-- keywords) at once, and its vectors filled in afterwards, batch by batch. A chunk without a row
-- here is found by the lexical index only until its vector arrives.

CREATE TABLE chunk_vectors (
    seq INTEGER PRIMARY KEY REFERENCES chunks(seq) ON DELETE CASCADE,
    embedding BLOB NOT NULL  -- float32, little-endian, L2-normalised
);

INSERT INTO chunk_vectors (seq, embedding) SELECT seq, embedding FROM chunks;

ALTER TABLE chunks DROP COLUMN embedding;
