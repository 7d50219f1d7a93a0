-- pg 0006: the top of a words search without scoring every match (issue 52). `pidx --pg URL
-- search the` read back and split every text holding the word (2.9 s at 1,000 sessions). Push
-- now also sends, for each text, the words whose share of bm25 in it is high: their impact
-- (FTS5's term-frequency and length part, `store::fts5::impact`, at the fixed mean length
-- 256 tokens; at most 2.2) is at least 1.65, three quarters of the most. A ranked search of one
-- word (crates/team/src/reads/heads.rs) reads the word's rows (no text body), scores each
-- exactly from its count, length and time, and looks up the best ones' entries until its top
-- is full of texts that beat the most a text not listed can score (1.65, scaled by the
-- reader's mean length over 256 when above 1, the idf and the recency weight of the newest
-- entry). When the top cannot be settled so (too few listed texts pass the filters, a rare
-- word), the search scores every match as before: the answer is the same either way.
-- Rows go with their text (a rewritten or removed transcript's rows are deleted with it).
CREATE TABLE text_heads (
    source text NOT NULL,
    fid    bigint NOT NULL,
    seq    bigint NOT NULL,
    kind   smallint NOT NULL,
    term   text NOT NULL,      -- the word as pg::words splits and folds it
    tf     int NOT NULL,       -- its count in the text
    ntok   int NOT NULL,       -- the text's length in tokens (entry_text.ntok)
    ts_ms  bigint              -- its entry's time (entries.ts_ms)
);
CREATE INDEX text_heads_by_term ON text_heads (term);
CREATE INDEX text_heads_by_file ON text_heads (source, fid);
DO $$
BEGIN
    ALTER TABLE text_heads ALTER COLUMN term SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    NULL;
END $$;

-- Member rights as on the other tables (pg 0004's policies, `pidx_protect`).
ALTER TABLE text_heads ENABLE ROW LEVEL SECURITY;
CREATE POLICY pidx_open ON text_heads USING (true) WITH CHECK (true);
CREATE POLICY pidx_member_insert ON text_heads AS RESTRICTIVE FOR INSERT
    WITH CHECK ((SELECT pidx_write_sources(current_user)) IS NULL
                OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]));
CREATE POLICY pidx_member_update ON text_heads AS RESTRICTIVE FOR UPDATE
    USING ((SELECT pidx_write_sources(current_user)) IS NULL
           OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]))
    WITH CHECK ((SELECT pidx_write_sources(current_user)) IS NULL
                OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]));
CREATE POLICY pidx_member_delete ON text_heads AS RESTRICTIVE FOR DELETE
    USING ((SELECT pidx_write_sources(current_user)) IS NULL
           OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]));
CREATE POLICY pidx_limited_read ON text_heads AS RESTRICTIVE FOR SELECT
    USING (NOT (SELECT pidx_read_limited(current_user))
           OR EXISTS (SELECT 1 FROM sessions s
                      WHERE s.source = text_heads.source AND s.fid = text_heads.fid));
-- Roles given rights on the texts before (`pidx team add-member`) get the same on the heads.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT grantee, privilege_type FROM information_schema.role_table_grants
             WHERE table_name = 'entry_text' AND table_schema = current_schema()
               AND grantee <> current_user
               AND privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE') LOOP
        EXECUTE format('GRANT %s ON text_heads TO %I', g.privilege_type, g.grantee);
    END LOOP;
END $$;
-- Texts pushed before have no heads: the next push sends every transcript again (`ino = -1`
-- never matches a file, as pg 0002 and 0005 did).
UPDATE sessions SET ino = -1;
