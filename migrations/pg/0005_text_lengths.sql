-- pg 0005: the local ranking on the server (`pidx --pg URL search`). bm25 needs each text's
-- length in the local index's tokens (FTS5 `unicode61 remove_diacritics 2`: runs of letters and
-- digits), and its mean over every text; the server's `tsvector` cannot give it (positions stop
-- at 16,383 and at 256 per word, a word over 2,047 bytes is not kept). Push now sends it,
-- counted with the same tokenizer as the words (crates/team/src/pg/words.rs).
-- Rows pushed before have no length until pushed again: `ino = -1` never matches a file, so the
-- next push sends every transcript again (as pg 0002 did).
ALTER TABLE entry_text ADD COLUMN ntok int;
UPDATE sessions SET ino = -1;

-- bm25's table-wide facts, each source's count of texts and of their tokens, kept as push
-- writes (statement triggers over the rows each statement inserts or deletes, as pg 0003's usage
-- rollups): summing every text's length at each search took 150 ms at 1,000 sessions.
ALTER TABLE sources ADD COLUMN texts bigint NOT NULL DEFAULT 0,
                    ADD COLUMN tokens bigint NOT NULL DEFAULT 0;
CREATE FUNCTION pidx_text_totals() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE sources s SET texts = s.texts + d.n, tokens = s.tokens + d.t
        FROM (SELECT source, count(*) AS n, coalesce(sum(ntok), 0) AS t
              FROM new_rows GROUP BY source) d
        WHERE s.name = d.source;
    ELSE
        UPDATE sources s SET texts = s.texts - d.n, tokens = s.tokens - d.t
        FROM (SELECT source, count(*) AS n, coalesce(sum(ntok), 0) AS t
              FROM old_rows GROUP BY source) d
        WHERE s.name = d.source;
    END IF;
    RETURN NULL;
END
$f$;
CREATE TRIGGER entry_text_totals_insert AFTER INSERT ON entry_text
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_text_totals();
CREATE TRIGGER entry_text_totals_delete AFTER DELETE ON entry_text
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_text_totals();
UPDATE sources s SET texts = d.n, tokens = d.t
FROM (SELECT source, count(*) AS n, coalesce(sum(ntok), 0) AS t FROM entry_text GROUP BY source) d
WHERE s.name = d.source;
