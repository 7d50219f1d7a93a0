-- pg 0003: pi's `allMessagesText` (what `pidx --pg URL list --query` matches) joins a
-- transcript's texts in line order, and one physical line can hold several JSON values, each
-- with its own listing text. Their order within the line was not sent, so the server could not
-- rebuild the text exactly: `n` is the text's position among its line's (0 for most lines).
-- Transcripts with such lines are sent again by the next push (`ino = -1` never matches a
-- file, so each counts as rewritten).
ALTER TABLE listing_text ADD COLUMN n int NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS listing_text_by_file;
CREATE INDEX listing_text_by_file ON listing_text (source, fid, line, n);
UPDATE sessions SET ino = -1
WHERE (source, fid) IN (SELECT source, fid FROM listing_text GROUP BY source, fid, line
                        HAVING count(*) > 1);
