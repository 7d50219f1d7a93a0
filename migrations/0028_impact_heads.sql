-- 0028: only the texts of a frequent word that can reach the top of its search stay in its
-- impact blocks (src/store/impacts.rs). Many of a frequent word's texts hold it once in a long
-- text and can never be among its best: a text whose impact is below the word's `cut` (two
-- thirds of its 100th best impact, as the build has seen them) is left out of the lists, and
-- `tail` keeps the most any text left out scores, so a search that would need one of them
-- (a filter that rejects most of the top, a long limit) ranks the word with FTS5 instead.
-- The blocks built before hold every text; they are dropped here and built again by the next
-- sync (at about 5 s per GB of sessions), to give back half their space.
DELETE FROM impact_blocks;
DELETE FROM impacts;
DROP TABLE IF EXISTS impact_terms;
CREATE TABLE impact_terms (
    term  TEXT PRIMARY KEY,
    texts INTEGER NOT NULL,
    cut   REAL NOT NULL DEFAULT 0,
    tail  REAL              -- NULL: no text left out
) WITHOUT ROWID;
