-- pg 0027: a reader limited to whole sources (`pidx team add-member --reads SOURCE`, no
-- `--reads-project`) reads those sources' counts of texts per word, postings and gone files, as
-- every other reader does, so its searches are answered from the postings (`reads::postings`,
-- `reads::matching`) instead of reading every text it sees (7.2 s for a word at 10,000
-- sessions, docs/performance.md). A source it reads whole holds nothing it may not see: the
-- postings' keys and times are of texts it reads anyway. A reader limited to projects still
-- reads none of these rows of a source it does not read whole (their keys and times would
-- tell of texts outside its projects) and is answered as before.
CREATE FUNCTION pidx_reader_sees_whole_source(r name, src text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT EXISTS (SELECT 1 FROM pidx_readers g WHERE g.role = r
                   AND (g.source IS NULL OR g.source = src) AND g.cwd IS NULL)
$f$;

ALTER POLICY pidx_limited_read ON word_texts
    USING (NOT (SELECT pidx_read_limited(current_user))
           OR pidx_reader_sees_whole_source(current_user, source));
ALTER POLICY pidx_limited_read ON word_postings
    USING (NOT (SELECT pidx_read_limited(current_user))
           OR pidx_reader_sees_whole_source(current_user, source));
-- The ids found missing by pg 0022 name no source: ids alone, every reader may read them.
ALTER POLICY pidx_limited_read ON stale_files
    USING (NOT (SELECT pidx_read_limited(current_user)) OR source IS NULL
           OR pidx_reader_sees_whole_source(current_user, source));
