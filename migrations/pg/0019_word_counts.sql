-- pg 0019: each source's count of texts holding each word, for bm25's idf. A search counted a
-- word's texts with `count(*)` over the words index, which reads every heap page holding a
-- match (PostgreSQL 15 fetches each page of a bitmap scan even for a count over pages all
-- visible): 334 of the ~1,200 ms of `search function` at 100,000 sessions on the server,
-- growing with the matches. Push adds each batch's counts from the words it sends (the
-- lexemes of each text's `tsvector`, each once); a trigger takes away the counts of the texts a
-- statement deletes (a rewritten or removed transcript, `forget`, a removed source), from their
-- `tsvector`s. A row that falls to 0 stays (the word may come back; a search ignores it).
-- Keyed by word first, so one word's rows of every source are one index probe a partition;
-- partitioned by source as the other large tables (pg 0010).
CREATE TABLE word_texts (
    source text NOT NULL,
    term   text NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (term, source)
) PARTITION BY HASH (source);
DO $$
BEGIN
    FOR n IN 0..7 LOOP
        EXECUTE format('CREATE TABLE pidx_parts.%I PARTITION OF word_texts
                            FOR VALUES WITH (MODULUS 8, REMAINDER %s)', 'word_texts_' || n, n);
        EXECUTE format('ALTER TABLE pidx_parts.%I ENABLE ROW LEVEL SECURITY', 'word_texts_' || n);
    END LOOP;
END $$;

INSERT INTO word_texts (source, term, n)
SELECT t.source, w.term, count(*)
FROM entry_text t, unnest(tsvector_to_array(t.tsv)) AS w(term)
GROUP BY t.source, w.term;
ANALYZE word_texts;

CREATE FUNCTION pidx_word_texts_deleted() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    UPDATE word_texts w SET n = w.n - d.n
    FROM (SELECT o.source, x.term, count(*) AS n
          FROM old_rows o, unnest(tsvector_to_array(o.tsv)) AS x(term)
          GROUP BY o.source, x.term) d
    WHERE w.term = d.term AND w.source = d.source;
    RETURN NULL;
END
$f$;
CREATE TRIGGER entry_text_words_delete AFTER DELETE ON entry_text
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_word_texts_deleted();

-- Member rights as on `entry_text` (pg 0011's `pidx_protect`): a member writes only its own
-- sources' counts; a limited reader reads none (a source's count cannot be cut to the projects
-- it may read; its searches count the texts it sees, as before).
SELECT pidx_protect('word_texts', 'false', 'entry_text');
