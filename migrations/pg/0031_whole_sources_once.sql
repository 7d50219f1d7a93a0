-- pg 0031: a reader limited to whole sources reads the words' counts, postings and gone files
-- of those sources (pg 0027) without a function call per row. pg 0027's policy called
-- `pidx_reader_sees_whole_source(current_user, source)` on every row the reader's statement
-- touched, and a look-up that cannot use an index under the policy (a literal inside a word,
-- `term LIKE '%piece%'`, not leakproof) scanned every word with it: 1.1-1.3 s at 10,000
-- sessions where the writer takes 68 ms (docs/performance.md). The sources are now listed once
-- a statement (each scalar subquery below is evaluated once, as an InitPlan) and each row's
-- source compared with them. Who sees what is unchanged: a row of `pidx_readers` without a
-- project names a source read whole, or every source when it names none.
CREATE FUNCTION pidx_sources_read_whole(r name) RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT coalesce(array_agg(g.source) FILTER (WHERE g.source IS NOT NULL), '{}')
    FROM pidx_readers g WHERE g.role = r AND g.cwd IS NULL
$f$;

CREATE FUNCTION pidx_reads_every_source_whole(r name) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT EXISTS (SELECT 1 FROM pidx_readers g WHERE g.role = r
                   AND g.source IS NULL AND g.cwd IS NULL)
$f$;

ALTER POLICY pidx_limited_read ON word_texts
    USING (NOT (SELECT pidx_read_limited(current_user))
           OR (SELECT pidx_reads_every_source_whole(current_user))
           OR source = ANY ((SELECT pidx_sources_read_whole(current_user))::text[]));
ALTER POLICY pidx_limited_read ON word_postings
    USING (NOT (SELECT pidx_read_limited(current_user))
           OR (SELECT pidx_reads_every_source_whole(current_user))
           OR source = ANY ((SELECT pidx_sources_read_whole(current_user))::text[]));
-- The ids found missing by pg 0022 name no source: ids alone, every reader may read them.
ALTER POLICY pidx_limited_read ON stale_files
    USING (NOT (SELECT pidx_read_limited(current_user)) OR source IS NULL
           OR (SELECT pidx_reads_every_source_whole(current_user))
           OR source = ANY ((SELECT pidx_sources_read_whole(current_user))::text[]));
