-- pg 0010: built to scale out (issue 52). Every large table becomes `PARTITION BY HASH
-- (source)` with 8 partitions, so each source's rows sit together with their own indexes (a
-- push writes one partition's indexes, a source's delete touches one partition) and a
-- distributed PostgreSQL (Citus, `source` as the distribution column) can take the tables as
-- they are. Hash, not a partition per source: a fixed set made here needs no DDL at push time
-- (`CREATE TABLE ... PARTITION OF` waits for every open read of the parent, and a member's role
-- may create nothing), at the price of sources sharing partitions. Changing the number of
-- partitions takes a migration that moves every row again.
--
-- Every key already begins with `source` (pg 0001), so each stays unique within a partition.
-- The partitions live in their own schema `pidx_parts`, on which no role but the owner has any
-- right: readers and members reach rows through the parents only, where row-level security
-- (pg 0004) binds them. PostgreSQL checks a parent's policies, not its partitions', for rows
-- read or written through the parent; a partition read directly would bypass them, so none can
-- be (no `USAGE` on the schema; `GRANT ... ON ALL TABLES IN SCHEMA public` does not reach it),
-- and each partition also has row-level security on with no policy (no row even if granted).
--
-- The rows are moved table by table inside the migration's one transaction: on a large server
-- it takes about as long as a first push of everything, and readers wait for it. The views are
-- re-pointed with CREATE OR REPLACE (their grants kept); triggers, policies and
-- grants are made again on the new tables as pg 0003-0009 made them.

CREATE SCHEMA IF NOT EXISTS pidx_parts;
REVOKE ALL ON SCHEMA pidx_parts FROM PUBLIC;

DO $$
DECLARE
    tbl text;
    tables text[] := ARRAY['sessions', 'entries', 'entry_text', 'text_heads', 'tool_uses',
                           'listing_text', 'bad_lines', 'usage_rollup', 'usage_by_source',
                           'usage_sessions'];
    cols text;
    g record;
    seq_old text;
    last_fid bigint;
    n int;
BEGIN
    FOREACH tbl IN ARRAY tables LOOP
        -- A table partitioned already is left as it is (a server taken back to an earlier
        -- schema by hand, as the tests do, and migrated again): so is every step below.
        CONTINUE WHEN (SELECT relkind FROM pg_class WHERE oid = to_regclass(tbl)) = 'p';
        EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, tbl || '_unpartitioned');
        -- Columns, defaults, identity, generated columns, NOT NULL and CHECK constraints,
        -- storage and compression as before; keys and indexes after the rows are in.
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING IDENTITY
                            INCLUDING GENERATED INCLUDING CONSTRAINTS INCLUDING STORAGE
                            INCLUDING COMPRESSION) PARTITION BY HASH (source)',
                       tbl, tbl || '_unpartitioned');
        FOR n IN 0..7 LOOP
            EXECUTE format('CREATE TABLE pidx_parts.%I PARTITION OF %I
                                FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                           tbl || '_' || n, tbl, n);
            EXECUTE format('ALTER TABLE pidx_parts.%I ENABLE ROW LEVEL SECURITY', tbl || '_' || n);
        END LOOP;
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
        FROM pg_attribute
        WHERE attrelid = to_regclass(tbl || '_unpartitioned') AND attnum > 0
          AND NOT attisdropped AND attgenerated = '';
        EXECUTE format('INSERT INTO %I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I',
                       tbl, cols, cols, tbl || '_unpartitioned');
        -- The same rights for every role that had them (`pidx team add-member`, hand grants).
        FOR g IN SELECT a.grantee, a.privilege_type
                 FROM pg_class c, aclexplode(c.relacl) a
                 WHERE c.oid = to_regclass(tbl || '_unpartitioned') AND a.grantee <> c.relowner LOOP
            EXECUTE format('GRANT %s ON %I TO %s', g.privilege_type, tbl,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.grantee::regrole::text) END);
        END LOOP;
    END LOOP;

    -- The file ids go on from where they were, under the same rights.
    seq_old := CASE WHEN to_regclass('sessions_unpartitioned') IS NOT NULL
                    THEN pg_get_serial_sequence('sessions_unpartitioned', 'fid') END;
    IF seq_old IS NOT NULL THEN
        last_fid := pg_sequence_last_value(seq_old::regclass);
        IF last_fid IS NOT NULL THEN
            PERFORM setval(pg_get_serial_sequence('sessions', 'fid'), last_fid);
        END IF;
        FOR g IN SELECT a.grantee, a.privilege_type
                 FROM pg_class c, aclexplode(c.relacl) a
                 WHERE c.oid = seq_old::regclass AND a.grantee <> c.relowner LOOP
            EXECUTE format('GRANT %s ON SEQUENCE %s TO %s', g.privilege_type,
                           pg_get_serial_sequence('sessions', 'fid'),
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.grantee::regrole::text) END);
        END LOOP;
    END IF;
END $$;

-- The views, re-pointed at the new tables (the same columns: their grants stay).
CREATE OR REPLACE VIEW v_sessions AS
SELECT s.source, s.path, s.session_id AS id, s.cwd, s.name, s.created_ms, s.last_activity_ms,
       s.message_count, s.first_message, s.entry_count, s.state = 1 AS listed, s.size AS bytes
FROM sessions s;

CREATE OR REPLACE VIEW v_entries AS
SELECT s.source, s.path, s.session_id, e.seq, e.line, e.id, e.parent_id, e.type, e.role, e.ts,
       e.ts_ms, e.provider, e.model, e.response_model, e.stop_reason, e.input, e.output,
       e.cache_read, e.cache_write, e.cost, e.tool_calls, e.tool_name, e.is_error, e.exit_code,
       e.label, e.dup AS is_copy
FROM entries e JOIN sessions s ON s.source = e.source AND s.fid = e.fid;

CREATE OR REPLACE VIEW v_tool_calls AS
SELECT s.source, s.path, s.session_id, e.id AS entry_id, e.ts, e.ts_ms, t.name
FROM tool_uses t
JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
JOIN sessions s ON s.source = t.source AND s.fid = t.fid
WHERE NOT e.dup;

-- CREATE OR REPLACE resets a view's options: reading as the querying role again (pg 0004).
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW v_sessions SET (security_invoker = true);
        ALTER VIEW v_entries SET (security_invoker = true);
        ALTER VIEW v_tool_calls SET (security_invoker = true);
    END IF;
END $$;

DROP TABLE IF EXISTS sessions_unpartitioned, entries_unpartitioned, entry_text_unpartitioned,
    text_heads_unpartitioned, tool_uses_unpartitioned, listing_text_unpartitioned,
    bad_lines_unpartitioned, usage_rollup_unpartitioned, usage_by_source_unpartitioned,
    usage_sessions_unpartitioned;

-- The keys and indexes of pg 0001-0009 under their names (`push` cleans `entry_text_words`'
-- pending words by name), built once the rows are in; each is one index per partition.
DO $$
DECLARE
    k record;
BEGIN
    FOR k IN SELECT * FROM (VALUES
        ('sessions', 'PRIMARY KEY (source, fid), ADD UNIQUE (source, path)'),
        ('entries', 'PRIMARY KEY (source, fid, seq)'),
        ('entry_text', 'PRIMARY KEY (source, fid, seq, kind)'),
        ('tool_uses', 'PRIMARY KEY (source, fid, seq, n)'),
        ('bad_lines', 'PRIMARY KEY (source, fid, line)'),
        ('usage_rollup', 'PRIMARY KEY (source, fid, t, model, provider, dup)'),
        ('usage_by_source', 'PRIMARY KEY (source, t, dup)'),
        ('usage_sessions', 'PRIMARY KEY (source, fid, dup)')) AS v(tbl, key) LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_constraint
                       WHERE conrelid = k.tbl::regclass AND contype = 'p') THEN
            EXECUTE format('ALTER TABLE %I ADD %s', k.tbl, k.key);
        END IF;
    END LOOP;
END $$;
CREATE INDEX IF NOT EXISTS sessions_by_session_id ON sessions (session_id);
CREATE INDEX IF NOT EXISTS sessions_by_modified ON sessions ((CASE WHEN last_activity_ms > 0 THEN last_activity_ms
    WHEN header_ts_ms IS NOT NULL THEN header_ts_ms ELSE mtime_ms END) DESC);
CREATE INDEX IF NOT EXISTS sessions_by_id_bytes ON sessions (session_id COLLATE "C");
CREATE INDEX IF NOT EXISTS sessions_by_source_id_bytes ON sessions (source, session_id COLLATE "C");
CREATE INDEX IF NOT EXISTS entries_by_id ON entries (source, fid, id) WHERE NOT shadowed;
-- The copies index leads with the entry's id now: push looks a copy group up within its source
-- (all three equal, as before), a search across every source (`reads::ranked::Copies`), which
-- had to probe it once a source.
CREATE INDEX IF NOT EXISTS entries_by_copy ON entries (id, ts, source) WHERE id IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_by_ts ON entries (ts_ms);
CREATE INDEX IF NOT EXISTS entry_text_words ON entry_text USING gin (tsv);
CREATE INDEX IF NOT EXISTS text_heads_by_term ON text_heads (term);
CREATE INDEX IF NOT EXISTS text_heads_by_file ON text_heads (source, fid);
-- The few texts holding a word more than 256 times (`reads::ranked::positions_kept` leaves them
-- out of the phrase operator's count): found through the word's every listed row, that set was
-- built once a partition, 290 ms each for `the` at 100,000 sessions.
CREATE INDEX IF NOT EXISTS text_heads_dense ON text_heads (term) WHERE tf > 256;
CREATE INDEX IF NOT EXISTS listing_text_by_file ON listing_text (source, fid, line, n);
CREATE INDEX IF NOT EXISTS usage_rollup_empty ON usage_rollup (source) WHERE n = 0;
CREATE INDEX IF NOT EXISTS usage_by_source_empty ON usage_by_source (source) WHERE n = 0;
CREATE INDEX IF NOT EXISTS usage_sessions_empty ON usage_sessions (source) WHERE n = 0;

-- The triggers of pg 0003, 0005 and 0009 (their functions are unchanged).
DROP TRIGGER IF EXISTS entries_rollup_insert ON entries;
CREATE TRIGGER entries_rollup_insert AFTER INSERT ON entries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();
DROP TRIGGER IF EXISTS entries_rollup_delete ON entries;
CREATE TRIGGER entries_rollup_delete AFTER DELETE ON entries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();
DROP TRIGGER IF EXISTS entries_rollup_update ON entries;
CREATE TRIGGER entries_rollup_update AFTER UPDATE ON entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_entries();
DROP TRIGGER IF EXISTS entry_text_totals_insert ON entry_text;
CREATE TRIGGER entry_text_totals_insert AFTER INSERT ON entry_text
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_text_totals();
DROP TRIGGER IF EXISTS entry_text_totals_delete ON entry_text;
CREATE TRIGGER entry_text_totals_delete AFTER DELETE ON entry_text
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_text_totals();
DROP TRIGGER IF EXISTS usage_rollup_by_source_insert ON usage_rollup;
CREATE TRIGGER usage_rollup_by_source_insert AFTER INSERT ON usage_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();
DROP TRIGGER IF EXISTS usage_rollup_by_source_delete ON usage_rollup;
CREATE TRIGGER usage_rollup_by_source_delete AFTER DELETE ON usage_rollup
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();
DROP TRIGGER IF EXISTS usage_rollup_by_source_update ON usage_rollup;
CREATE TRIGGER usage_rollup_by_source_update AFTER UPDATE ON usage_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();

-- Member rights on the parents, as pg 0004, 0006 and 0009 set them.
DO $$
DECLARE
    t record;
    mine text := '((SELECT pidx_write_sources(current_user)) IS NULL
                   OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]))';
BEGIN
    FOR t IN SELECT * FROM (VALUES
        ('sessions', 'pidx_reader_sees(current_user, source, cwd)'),
        ('entries', null), ('entry_text', null), ('text_heads', null), ('tool_uses', null),
        ('listing_text', null), ('bad_lines', null), ('usage_rollup', null),
        ('usage_by_source', 'false'), ('usage_sessions', 'false')) AS v(tbl, sees) LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = t.tbl::regclass);
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t.tbl);
        EXECUTE format('CREATE POLICY pidx_open ON %I USING (true) WITH CHECK (true)', t.tbl);
        EXECUTE format('CREATE POLICY pidx_member_insert ON %I AS RESTRICTIVE FOR INSERT
                        WITH CHECK %s', t.tbl, mine);
        EXECUTE format('CREATE POLICY pidx_member_update ON %I AS RESTRICTIVE FOR UPDATE
                        USING %s WITH CHECK %s', t.tbl, mine, mine);
        EXECUTE format('CREATE POLICY pidx_member_delete ON %I AS RESTRICTIVE FOR DELETE
                        USING %s', t.tbl, mine);
        EXECUTE format('CREATE POLICY pidx_limited_read ON %I AS RESTRICTIVE FOR SELECT
                        USING (NOT (SELECT pidx_read_limited(current_user)) OR %s)', t.tbl,
                       coalesce(t.sees, format('EXISTS (SELECT 1 FROM sessions s
                           WHERE s.source = %I.source AND s.fid = %I.fid)', t.tbl, t.tbl)));
    END LOOP;
END $$;

ANALYZE sessions, entries, entry_text, text_heads, tool_uses, listing_text, bad_lines,
    usage_rollup, usage_by_source, usage_sessions;
