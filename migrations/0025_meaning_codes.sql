-- 0025: search by meaning in tens of milliseconds at 10,000 sessions. Scanning 400,000
-- `passages` rows one by one took 270 ms a query; their sign codes (one bit a dimension,
-- meaning/codes.rs) are kept here packed in blocks of a few thousand, which a query reads in
-- a hundred row steps to pick the passages it scores exactly. A block lists each code's
-- full-text rowid (rid * 8 + kind), so filters apply before any passage row is read.
-- `passages` stays the truth: a code whose passage is gone (its entry rewritten or deleted)
-- finds no row when scored and is skipped; the embedding pass writes a block in the
-- transaction that inserts its passages and compacts the blocks when dead codes pile up.
-- The vectors embedded before this migration have no codes: they are dropped, and the next
-- `pidx sync --embed` embeds again (a derived table; until then words rank alone).
CREATE TABLE IF NOT EXISTS passage_codes (
    id      INTEGER PRIMARY KEY,
    n       INTEGER NOT NULL,   -- codes in the block
    rowids  BLOB NOT NULL,      -- n full-text rowids, i64 little-endian
    codes   BLOB NOT NULL       -- n sign codes, each ceil(dims / 64) u64 little-endian
);
-- The codes are signs about the mean of the vectors (the first embedded batch's), not about
-- zero: a static model's vectors share a large common part, which would set most bits alike.
-- A table of its own, not a column of embed_model: migrations run again over a newer schema.
CREATE TABLE IF NOT EXISTS embed_center (
    v  BLOB NOT NULL            -- f32 little-endian, one per dimension
);
DELETE FROM embed_center;
DELETE FROM passages;
DELETE FROM embedded;
DELETE FROM embed_model;
