-- pg 0004: per-member rights (`pidx team add-member`). Until now one shared writer role could
-- overwrite any machine's sessions. A role registered in `pidx_members` writes only the rows
-- of its own sources; one registered in `pidx_readers` reads only the sources and projects
-- listed for it. Both are enforced by row-level security, so hand-written SQL is held to them
-- too. A role registered in neither (the shared writer and reader of a server set up before
-- this, and the tables' owner, whom row-level security does not bind) keeps every right it had:
-- existing servers work unchanged.
--
-- The checks are written `(SELECT f(current_user))`: an uncorrelated subquery PostgreSQL runs
-- once per statement, so an unregistered role pays one lookup per query, not one per row.
-- The functions are SECURITY DEFINER (they read the two tables, which no member may read or
-- change) and take the role as an argument (inside them current_user is their owner).

CREATE TABLE pidx_members (
    role   name NOT NULL,
    source text NOT NULL,   -- a source this role may write
    PRIMARY KEY (role, source)
);

CREATE TABLE pidx_readers (
    role   name NOT NULL,
    source text,            -- NULL: every source
    cwd    text             -- NULL: every project; else this folder and the folders under it
);
CREATE INDEX pidx_readers_by_role ON pidx_readers (role);

REVOKE ALL ON pidx_members, pidx_readers FROM PUBLIC;

-- NULL for a role that is not a member (no limit), else the sources it may write.
CREATE FUNCTION pidx_write_sources(r name) RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT array_agg(source) FROM pidx_members WHERE role = r
$f$;

CREATE FUNCTION pidx_read_limited(r name) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT EXISTS (SELECT 1 FROM pidx_readers WHERE role = r)
$f$;

CREATE FUNCTION pidx_reader_sees(r name, src text, dir text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT EXISTS (
        SELECT 1 FROM pidx_readers g
        WHERE g.role = r
          AND (g.source IS NULL OR g.source = src)
          AND (g.cwd IS NULL OR (dir IS NOT NULL AND (dir = g.cwd
               OR left(dir, length(rtrim(g.cwd, '/')) + 1) = rtrim(g.cwd, '/') || '/'))))
$f$;

-- The policies of one table: open to everyone (permissive), then narrowed (restrictive) for
-- members' writes and limited readers' reads. `col` is the table's source column; `sees` what
-- a limited reader may read of a row.
CREATE FUNCTION pidx_protect(tbl text, col text, sees text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    mine text := format('((SELECT pidx_write_sources(current_user)) IS NULL
                          OR %I = ANY ((SELECT pidx_write_sources(current_user))::text[]))', col);
BEGIN
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tbl);
    EXECUTE format('CREATE POLICY pidx_open ON %I USING (true) WITH CHECK (true)', tbl);
    EXECUTE format('CREATE POLICY pidx_member_insert ON %I AS RESTRICTIVE FOR INSERT
                    WITH CHECK %s', tbl, mine);
    EXECUTE format('CREATE POLICY pidx_member_update ON %I AS RESTRICTIVE FOR UPDATE
                    USING %s WITH CHECK %s', tbl, mine, mine);
    EXECUTE format('CREATE POLICY pidx_member_delete ON %I AS RESTRICTIVE FOR DELETE
                    USING %s', tbl, mine);
    EXECUTE format('CREATE POLICY pidx_limited_read ON %I AS RESTRICTIVE FOR SELECT
                    USING (NOT (SELECT pidx_read_limited(current_user)) OR %s)', tbl, sees);
END
$f$;

-- A limited reader sees a source when one of its grants names it or names no source.
CREATE FUNCTION pidx_reader_sees_source(r name, src text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    SELECT EXISTS (SELECT 1 FROM pidx_readers g WHERE g.role = r
                   AND (g.source IS NULL OR g.source = src))
$f$;

SELECT pidx_protect('sources', 'name', 'pidx_reader_sees_source(current_user, name)');
SELECT pidx_protect('sessions', 'source', 'pidx_reader_sees(current_user, source, cwd)');
SELECT pidx_protect(t, 'source',
    format('EXISTS (SELECT 1 FROM sessions s WHERE s.source = %I.source AND s.fid = %I.fid)', t, t))
FROM unnest(ARRAY['entries', 'entry_text', 'tool_uses', 'listing_text', 'bad_lines',
                  'usage_rollup']) AS t;
DROP FUNCTION pidx_protect(text, text, text);

-- Views read their tables as the querying role (PostgreSQL 15 and newer), so a limited reader's
-- `pidx sql` over a view sees what its policies allow. `pidx team add-member --reader` with
-- limits refuses an older server.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW v_sessions SET (security_invoker = true);
        ALTER VIEW v_entries SET (security_invoker = true);
        ALTER VIEW v_messages SET (security_invoker = true);
        ALTER VIEW v_usage SET (security_invoker = true);
        ALTER VIEW v_tool_calls SET (security_invoker = true);
    END IF;
END $$;
