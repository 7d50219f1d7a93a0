-- pg 0025: the pairs the commonest words make, as terms of their own in `word_postings`
-- ("common grams", issue 52). A phrase holding a very common word read every posting of that
-- word: `"the borrow"` read `the`'s million postings at 300,000 sessions (0.3 s, a second at
-- 750,000), because `borrow` is in so many texts that nearly every block of `the` holds one of
-- its files. Now push writes, for each text, a posting under `the borrow` (two words and a
-- space: no word holds a space) for each pair of words one right after the other of which one
-- is common, with the first word's positions; a phrase reads those instead
-- (crates/team/src/pg/words.rs, `COMMON` and `grams`; `reads::postings`). Grams have no count
-- in `word_texts` (a phrase's count of texts is counted from its postings).
--
-- The common words, as pidx's list names them (a test compares the two).
CREATE OR REPLACE FUNCTION pidx_common_words() RETURNS text[] LANGUAGE sql IMMUTABLE AS $f$
    SELECT ARRAY['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'can', 'do', 'for', 'from',
                 'have', 'i', 'if', 'in', 'is', 'it', 'no', 'not', 'of', 'on', 'or', 's', 't',
                 'that', 'the', 'this', 'to', 'was', 'we', 'will', 'with', 'you', 'your']
$f$;

-- A word none of a source's texts holds any more leaves with its grams too: a forgotten
-- session's codename leaves no `the codename` behind. The grams of a gone word are the pairs
-- it makes with each common word, looked up by term; a common word gone from every text of a
-- source (rare) takes every gram that starts or ends with it.
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
        DELETE FROM word_postings p
        USING (SELECT g.source, g.term FROM unnest(gone_sources, gone_terms) AS g(source, term)
               UNION ALL
               SELECT g.source, c.word || ' ' || g.term
               FROM unnest(gone_sources, gone_terms) AS g(source, term),
                    unnest(pidx_common_words()) AS c(word)
               UNION ALL
               SELECT g.source, g.term || ' ' || c.word
               FROM unnest(gone_sources, gone_terms) AS g(source, term),
                    unnest(pidx_common_words()) AS c(word)) AS t(source, term)
        WHERE p.term = t.term AND p.source = t.source;
        DELETE FROM word_postings p USING unnest(gone_sources, gone_terms) AS g(source, term)
        WHERE g.term = ANY(pidx_common_words()) AND p.source = g.source
          AND (p.term LIKE g.term || ' %' OR p.term LIKE '% ' || g.term);
    END IF;
    RETURN NULL;
END
$f$;

-- Postings written before hold no grams: they go, and the next push of each source sends
-- every transcript again (`ino = -1` never matches a file), as pg 0021 did; until a source
-- has, its searches read the matches as before (`sources.postings`). The words' counts stay:
-- the texts sent again are deleted and added, and the triggers count both.
TRUNCATE word_postings;
UPDATE sources SET postings = false;
UPDATE sessions SET ino = -1;
