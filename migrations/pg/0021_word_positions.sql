-- pg 0021: each posting's positions of its word, so that a search of a phrase finds its texts
-- from the postings too (issue 52). A phrase read every text holding its words (a heap page
-- each, its `tsvector` rechecked by the phrase operator, or its body where the `tsvector`
-- cannot tell): `"the borrow"` took about a second at 100,000 sessions and ten at a million,
-- the slowest search left. Beside `data`, `pos` holds, for each posting in `data`'s order, its
-- token numbers of the word (crates/team/src/pg/postings.rs); merged rows concatenate both.
ALTER TABLE word_postings ADD COLUMN pos bytea;
ALTER TABLE word_postings ALTER COLUMN pos SET STORAGE EXTERNAL;

-- Rows written before hold no positions: they go, and every transcript is sent again by the
-- next push of its source (`ino = -1` never matches a file, as pg 0020 did), which writes
-- rows with both. Until a source has pushed so, its searches read the matches as before
-- (`sources.postings`). The words' counts (`word_texts`) stay: the texts sent again are
-- deleted and added, and the triggers count both.
TRUNCATE word_postings;
UPDATE sources SET postings = false;
UPDATE sessions SET ino = -1;
