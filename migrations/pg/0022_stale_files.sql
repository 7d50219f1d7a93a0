-- pg 0022: the file ids no session has any more, for a phrase's count of texts (issue 52).
-- Postings are never updated (pg 0020): a transcript rewritten or removed leaves its postings
-- behind, naming a file id no session has. A phrase's count of texts (its idf) counts only the
-- texts of files still on the server, so a search asked `sessions` about every file holding
-- the phrase: at a million sessions the 13,200 texts of `"the borrow"` took 573 ms of probes
-- through the partitions (docs/performance.md). File ids come from one identity sequence for
-- every source, so the ids no session has are few and can be listed: this table, kept by the
-- trigger below as sessions are deleted, read by a search for the files it holds
-- (`reads::postings::live`).
CREATE TABLE stale_files (
    fid    bigint PRIMARY KEY,
    source text    -- whose session it was; NULL for the ids found missing below
);
-- A member writes the rows of its own sources (its push deletes its own sessions); a limited
-- reader reads none (it reads no postings either).
SELECT pidx_protect('stale_files', 'false', 'word_postings');

CREATE FUNCTION pidx_sessions_deleted() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO stale_files (fid, source) SELECT o.fid, o.source FROM old_rows o
    ON CONFLICT (fid) DO NOTHING;
    RETURN NULL;
END
$f$;
CREATE TRIGGER sessions_deleted AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_sessions_deleted();

-- The ids gone before this schema: every id the sequence has given that no session holds (a
-- push rolled back leaves ids no posting names either; listing them is harmless).
INSERT INTO stale_files (fid)
SELECT g.fid
FROM generate_series(1, coalesce(pg_sequence_last_value(pg_get_serial_sequence('sessions', 'fid')::regclass), 0)) AS g(fid)
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.fid = g.fid);
