-- pg 0009: `stats` without distinct counts over every rollup row (issue 52). `pidx --pg URL
-- stats` and `stats --by source` joined the 929,160 usage rollup rows (pg 0003) of 300,000
-- sessions with the sessions and sorted them on disk for two `count(DISTINCT ...)`: 4.4 s. Two
-- smaller rollups of the rollups, kept by statement triggers on `usage_rollup` (so by every
-- change the triggers of pg 0003 make there), answer them when no project, session, model or
-- other key is asked for (crates/team/src/reads/stats.rs, `by_source_sql`):
--
-- * `usage_by_source`: the figures per (source, quarter hour, copy flag). Sums, and active
--   days in any zone whose days begin on a quarter hour, come out as from `usage_rollup`.
-- * `usage_sessions`: the entries per (source, transcript, copy flag), so that the sessions
--   with any counted entry are counted without a distinct over the rollup rows.
--
-- A row at 0 entries is deleted, as in `usage_rollup`. Both are exact aggregates of
-- `usage_rollup` (tests/it/pg_scale.rs checks it after the migration and after a push).
CREATE TABLE usage_by_source (
    source         text NOT NULL,
    t              bigint NOT NULL,  -- start of the quarter hour (epoch ms); i64::MIN: no time
    dup            boolean NOT NULL,
    n              bigint NOT NULL,
    user_msgs      bigint NOT NULL,
    assistant_msgs bigint NOT NULL,
    tool_results   bigint NOT NULL,
    tool_calls     bigint NOT NULL,
    input          bigint NOT NULL,
    output         bigint NOT NULL,
    cache_read     bigint NOT NULL,
    cache_write    bigint NOT NULL,
    cost           numeric NOT NULL,
    tool_errors    bigint NOT NULL,
    compactions    bigint NOT NULL,
    ts_ms          bigint GENERATED ALWAYS AS (nullif(t, -9223372036854775808)) STORED,
    PRIMARY KEY (source, t, dup)
);
CREATE INDEX usage_by_source_empty ON usage_by_source (source) WHERE n = 0;

CREATE TABLE usage_sessions (
    source text NOT NULL,
    fid    bigint NOT NULL,
    dup    boolean NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (source, fid, dup)
);
CREATE INDEX usage_sessions_empty ON usage_sessions (source) WHERE n = 0;

-- The statements adding `usage_rollup` rows of relation `rel` (a trigger's transition table, or
-- the table itself), times `sign`, to both.
CREATE FUNCTION pidx_by_source_sql(rel text, sign int) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT format($q$
INSERT INTO usage_by_source AS r (source, t, dup, n, user_msgs, assistant_msgs, tool_results,
        tool_calls, input, output, cache_read, cache_write, cost, tool_errors, compactions)
    SELECT source, t, dup, %1$s * sum(n), %1$s * sum(user_msgs), %1$s * sum(assistant_msgs),
           %1$s * sum(tool_results), %1$s * sum(tool_calls), %1$s * sum(input),
           %1$s * sum(output), %1$s * sum(cache_read), %1$s * sum(cache_write),
           %1$s * sum(cost), %1$s * sum(tool_errors), %1$s * sum(compactions)
    FROM %2$s GROUP BY source, t, dup
    ON CONFLICT (source, t, dup) DO UPDATE SET
        n = r.n + excluded.n,
        user_msgs = r.user_msgs + excluded.user_msgs,
        assistant_msgs = r.assistant_msgs + excluded.assistant_msgs,
        tool_results = r.tool_results + excluded.tool_results,
        tool_calls = r.tool_calls + excluded.tool_calls,
        input = r.input + excluded.input,
        output = r.output + excluded.output,
        cache_read = r.cache_read + excluded.cache_read,
        cache_write = r.cache_write + excluded.cache_write,
        cost = r.cost + excluded.cost,
        tool_errors = r.tool_errors + excluded.tool_errors,
        compactions = r.compactions + excluded.compactions;
INSERT INTO usage_sessions AS r (source, fid, dup, n)
    SELECT source, fid, dup, %1$s * sum(n) FROM %2$s GROUP BY source, fid, dup
    ON CONFLICT (source, fid, dup) DO UPDATE SET n = r.n + excluded.n$q$, sign, rel)
$f$;

-- pg 0003's triggers change `usage_rollup` by upserts (an INSERT statement firing the insert
-- and the update triggers) and delete its rows at 0; an update adds its new rows and takes
-- its old ones away.
CREATE FUNCTION pidx_rollup_by_source() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE pidx_by_source_sql('new_rows', 1);
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE pidx_by_source_sql('old_rows', -1);
    ELSE
        EXECUTE pidx_by_source_sql('old_rows', -1);
        EXECUTE pidx_by_source_sql('new_rows', 1);
    END IF;
    DELETE FROM usage_by_source WHERE n = 0;
    DELETE FROM usage_sessions WHERE n = 0;
    RETURN NULL;
END
$f$;

CREATE TRIGGER usage_rollup_by_source_insert AFTER INSERT ON usage_rollup
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();
CREATE TRIGGER usage_rollup_by_source_delete AFTER DELETE ON usage_rollup
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();
CREATE TRIGGER usage_rollup_by_source_update AFTER UPDATE ON usage_rollup
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pidx_rollup_by_source();

DO $$ BEGIN EXECUTE pidx_by_source_sql('usage_rollup', 1); END $$;
-- Filled from a large server's rollups: statistics now, not at autovacuum's next round.
ANALYZE usage_by_source, usage_sessions;

-- Member rights as on the other tables (pg 0004's policies, as pg 0006 sets them). A limited
-- reader reads no row of either: a source's sums cannot be cut to the projects it may read, so
-- its `stats` are summed from `usage_rollup` through its sessions, as before.
DO $$
DECLARE
    tbl text;
    mine text := '((SELECT pidx_write_sources(current_user)) IS NULL
                   OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]))';
    g record;
BEGIN
    FOREACH tbl IN ARRAY ARRAY['usage_by_source', 'usage_sessions'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tbl);
        EXECUTE format('CREATE POLICY pidx_open ON %I USING (true) WITH CHECK (true)', tbl);
        EXECUTE format('CREATE POLICY pidx_member_insert ON %I AS RESTRICTIVE FOR INSERT
                        WITH CHECK %s', tbl, mine);
        EXECUTE format('CREATE POLICY pidx_member_update ON %I AS RESTRICTIVE FOR UPDATE
                        USING %s WITH CHECK %s', tbl, mine, mine);
        EXECUTE format('CREATE POLICY pidx_member_delete ON %I AS RESTRICTIVE FOR DELETE
                        USING %s', tbl, mine);
        EXECUTE format('CREATE POLICY pidx_limited_read ON %I AS RESTRICTIVE FOR SELECT
                        USING (NOT (SELECT pidx_read_limited(current_user)))', tbl);
        -- Roles given rights on the rollups before (`pidx team add-member`) get the same here.
        FOR g IN SELECT DISTINCT grantee, privilege_type FROM information_schema.role_table_grants
                 WHERE table_name = 'usage_rollup' AND table_schema = current_schema()
                   AND grantee <> current_user
                   AND privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE') LOOP
            EXECUTE format('GRANT %s ON %I TO %I', g.privilege_type, tbl, g.grantee);
        END LOOP;
    END LOOP;
END $$;
