-- 0027: impact blocks of the frequent words (src/store/impacts.rs). A word in at least 20,000
-- texts has its texts, in rowid order, in blocks of 128, each with the most its texts can
-- score before the idf (bm25's term-frequency and length part, at the mean text length
-- `impacts.avgdl`) and its newest entry's time: a ranked search of the word scores only the
-- blocks that can still reach its top (src/query/search/blocked.rs) instead of every text,
-- from the block's own list of its texts with their counts of the word and lengths.
-- Texts past `impacts.through` have no blocks yet and are scored one by one; a removed text
-- may stay in its block (a bound of more texts is still a bound).
CREATE TABLE IF NOT EXISTS impact_blocks (
    term   TEXT NOT NULL,
    last   INTEGER NOT NULL, -- the block's last full-text rowid
    first  INTEGER NOT NULL,
    impact REAL NOT NULL,
    newest INTEGER,          -- ts_ms of its newest entry (NULL: none has a time)
    texts  BLOB NOT NULL,    -- per text, LEB128: rowid - the previous one's (first: - first),
                             -- the word's count in it, its length in tokens
    PRIMARY KEY (term, last)
) WITHOUT ROWID;
-- How many texts hold each blocked word, up to `impacts.through` (bm25's idf counts them; FTS5
-- walks every text of the word to count them).
CREATE TABLE IF NOT EXISTS impact_terms (
    term  TEXT PRIMARY KEY,
    texts INTEGER NOT NULL
) WITHOUT ROWID;
-- One row once blocks are built (none: not yet, the next sync builds them).
CREATE TABLE IF NOT EXISTS impacts (
    through INTEGER NOT NULL,          -- every text up to this rowid is in its words' blocks
    avgdl   REAL NOT NULL,             -- the mean text length the impacts were computed at
    counted INTEGER NOT NULL DEFAULT 1, -- 0: texts left the index since `impact_terms` was counted
    scanned INTEGER NOT NULL DEFAULT 0  -- `through` when the vocabulary was last walked for
                                        -- words that became frequent
);
