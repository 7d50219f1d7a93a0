-- pg 0023: each word's postings in blocks of at most 64, with each block's range of file ids,
-- so that a phrase's common word is read and decoded only in the blocks that may hold a rarer
-- word's texts (issue 52): a phrase read every posting of `the` (millions at a million
-- sessions) to keep those of the texts holding its other word. At 300,000 sessions `"the
-- jalapeño"` went 153 to 95 ms; a phrase of two words both in many files (`"the borrow"`)
-- reads nearly every block anyway (docs/performance.md). A row's `skips` holds, for each block
-- in order, its bytes of postings and of positions, its least file and its greatest
-- (crates/team/src/pg/postings.rs); merged rows concatenate it as they do `data` and `pos`.
ALTER TABLE word_postings ADD COLUMN skips bytea;
ALTER TABLE word_postings ALTER COLUMN skips SET STORAGE EXTERNAL;

-- Rows written before have no blocks' entries and are read whole, as before. The next push of
-- each source rewrites its rows without them into blocks (`pg::writer::reblock`), once: a
-- source pushed from now on writes blocks from the start.
ALTER TABLE sources ADD COLUMN postings_blocked boolean NOT NULL DEFAULT true;
UPDATE sources SET postings_blocked = false;
