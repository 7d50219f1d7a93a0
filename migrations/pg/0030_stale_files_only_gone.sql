-- pg 0030: a file id is listed as gone only while no session has it (issue 52). A push deletes
-- and copies again the `sessions` row of every transcript it changes, and a grown transcript
-- keeps its file id: pg 0022's trigger listed each grown transcript as gone, and a phrase's or
-- a prefix's count of texts (its idf, `reads::matching::live`) left out every text of every
-- transcript that had grown since its first push, so its scores drifted from the local ones.
-- A session's row copied in takes its id off the list; the ids listed wrongly go now.
CREATE FUNCTION pidx_sessions_inserted() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    DELETE FROM stale_files s USING new_rows n WHERE s.fid = n.fid;
    RETURN NULL;
END
$f$;
CREATE TRIGGER sessions_inserted AFTER INSERT ON sessions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_sessions_inserted();

DELETE FROM stale_files s WHERE EXISTS (SELECT 1 FROM sessions x WHERE x.fid = s.fid);
