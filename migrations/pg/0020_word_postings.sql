-- pg 0020: each source's texts of a word packed in a few rows, for a search of words
-- without a heap page per match (issue 52). A common word's search read every match's row of
-- `entry_text` for its key, time, length and count: about a page a match (each row holds its
-- body and its words, 3.6 KB on average), 89,533 pages for `function` at 190,000 sessions.
-- Here every text holding a word is a posting of about nine bytes (its key, its count of the
-- word, its length, its entry's time; crates/team/src/pg/postings.rs), a source's postings of a
-- word in one row per push (a push writes one row for each word it sent; push merges a word's
-- small rows, so a word has few rows whatever the number of pushes). A search reads the word's
-- rows of every source, scores each posting exactly, and looks up the best ones' entries under
-- its filters (`reads::postings`).
--
-- Postings are never updated: a transcript rewritten or removed loses its texts, and one sent
-- again whole gets a new file id (push), so a posting whose text is gone names a key no text
-- has, and the look-up drops it; a word no text of the source holds any more loses its rows
-- (below). A text's silence (a later `NO_REPLY`) is read at the look-up.
CREATE TABLE word_postings (
    source text NOT NULL,
    term   text NOT NULL,
    n      int NOT NULL,      -- postings in `data`
    data   bytea NOT NULL
) PARTITION BY HASH (source);
DO $$
BEGIN
    FOR n IN 0..7 LOOP
        EXECUTE format('CREATE TABLE pidx_parts.%I PARTITION OF word_postings
                            FOR VALUES WITH (MODULUS 8, REMAINDER %s)', 'word_postings_' || n, n);
        EXECUTE format('ALTER TABLE pidx_parts.%I ENABLE ROW LEVEL SECURITY', 'word_postings_' || n);
    END LOOP;
END $$;
CREATE INDEX word_postings_by_term ON word_postings (term, source);
-- Varints compress little; stored without a compression attempt, read without one.
ALTER TABLE word_postings ALTER COLUMN data SET STORAGE EXTERNAL;

-- Whether every text of a source has its postings: set by the first push after which no
-- transcript of the source is waiting to be sent again (below). Until every source a search
-- reads has them, it reads the matches as before.
ALTER TABLE sources ADD COLUMN postings boolean NOT NULL DEFAULT false;

-- Member rights as on `word_texts` (pg 0019): a member writes only its own sources' rows; a
-- limited reader reads none (its searches read the matches it sees, as before).
SELECT pidx_protect('word_postings', 'false', 'entry_text');

-- A word none of a source's texts holds any more leaves both tables: its count (pg 0019 kept a
-- row at 0) and its postings, all of texts gone. A forgotten or removed session's own words (a
-- codename, a path) leave the server with it; a word other texts still hold keeps the postings
-- of the gone ones, which name keys no text has.
CREATE OR REPLACE FUNCTION pidx_word_texts_deleted() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
    gone_sources text[];
    gone_terms text[];
BEGIN
    WITH u AS (
        UPDATE word_texts w SET n = w.n - d.n
        FROM (SELECT o.source, x.term, count(*) AS n
              FROM old_rows o, unnest(tsvector_to_array(o.tsv)) AS x(term)
              GROUP BY o.source, x.term) d
        WHERE w.term = d.term AND w.source = d.source
        RETURNING w.source, w.term, w.n)
    SELECT array_agg(u.source), array_agg(u.term) INTO gone_sources, gone_terms
    FROM u WHERE u.n <= 0;
    IF gone_terms IS NOT NULL THEN
        DELETE FROM word_texts w USING unnest(gone_sources, gone_terms) AS g(source, term)
        WHERE w.term = g.term AND w.source = g.source;
        DELETE FROM word_postings p USING unnest(gone_sources, gone_terms) AS g(source, term)
        WHERE p.term = g.term AND p.source = g.source;
    END IF;
    RETURN NULL;
END
$f$;
DELETE FROM word_texts WHERE n <= 0;

-- Texts pushed before have no postings: the next push of each source sends every transcript
-- again (`ino = -1` never matches a file, as pg 0002, 0005 and 0006 did).
UPDATE sessions SET ino = -1;
