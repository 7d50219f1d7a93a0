-- pg 0002: push at tens of MB/s instead of 2. On the first push of 1,000 sessions (101 MiB),
-- the server spent 23 s computing `to_tsvector` and about 35 s keeping the trigram index of
-- every text (16.6 million trigram keys for 71 MiB of text; a bulk CREATE INDEX alone took
-- 32 s), out of 51 s. So, as the local index did in its migration 0005:
-- - `tsv` is no longer computed by the server: pidx sends it, words split and folded as the
--   local FTS5 index splits them (src/store/pg/words.rs);
-- - the trigram index goes: `--literal` takes its candidates from the words index and checks
--   the text itself (src/query/pg/search.rs).
-- Rows pushed before keep their old words until the next push, which sends every transcript
-- again (`ino = -1` never matches a file, so each counts as rewritten).
DROP INDEX IF EXISTS entry_text_trigrams;
ALTER TABLE entry_text ALTER COLUMN tsv DROP EXPRESSION;
UPDATE sessions SET ino = -1;
-- The raw lines, texts and words compress with lz4 where the server has it (PostgreSQL 14 and
-- newer built with lz4, as Debian's): several times faster to write than the default pglz.
DO $$
BEGIN
    ALTER TABLE entries ALTER COLUMN raw SET COMPRESSION lz4;
    ALTER TABLE entry_text ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE entry_text ALTER COLUMN tsv SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    NULL;
END $$;
