-- pg 0011: `stats` and `stats --by source` at a million sessions (issue 52). Over the whole
-- time range they read every row of `usage_by_source` (pg 0009: a row per source, quarter hour
-- and copy flag, 2.9 million rows at a million sessions; 0.9 s and 4.2 s) and counted the rows
-- of `usage_sessions` (a row per transcript). Two rollups of those rollups, kept by statement
-- triggers on them, answer a range that is not cut (crates/team/src/reads/stats.rs,
-- `by_source_sql`):
--
-- * `usage_days`: the figures per (source, UTC day, copy flag), and the first and the last
--   quarter hour of the day holding an entry. The active days in a zone are the distinct
--   local dates of those two quarter hours: a UTC day's quarter hours fall on at most two
--   local dates, in order (local time only moves forward across a day, but for a shift back
--   of an hour, which never crosses two midnights), so the dates between its first and its
--   last are theirs. Three dates would need a zone between UTC-01:00 and UTC, exclusive, with
--   a shift forward (none since 1972). The sums are exact; the dates as exact as the
--   quarter hours (`rollups_answer`: a zone whose days begin on a quarter hour).
-- * `usage_source_sessions`: per (source, copy flag), the transcripts with a counted entry
--   (the rows of `usage_sessions`).
--
-- A day is computed again from `usage_by_source` whenever one of its rows changes (read by
-- its key; at most 96 rows a day and copy flag), so the first and last stay exact when rows
-- go away. Small tables (a row a source and day): not partitioned.
CREATE TABLE usage_days (
    source         text NOT NULL,
    day            bigint NOT NULL,  -- UTC day start (epoch ms); i64::MIN: no time
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
    first_ms       bigint,           -- the day's first and last quarter hour with an entry
    last_ms        bigint,
    PRIMARY KEY (source, day, dup)
);

CREATE TABLE usage_source_sessions (
    source   text NOT NULL,
    dup      boolean NOT NULL,
    sessions bigint NOT NULL,
    PRIMARY KEY (source, dup)
);

-- The UTC day a quarter hour `t` of `usage_by_source` is in (i64::MIN, no time, stays).
CREATE FUNCTION pidx_day_of(t bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $f$
SELECT CASE WHEN t = -9223372036854775808 THEN t
            ELSE t - ((t % 86400000) + 86400000) % 86400000 END
$f$;

-- The statements computing again every day that rows of `usage_by_source` in relation `rel`
-- (a trigger's transition table, or the table itself) fall on. Rows at 0 entries are left
-- out: they are deleted right after the statement that leaves them so (pg 0009).
CREATE FUNCTION pidx_days_sql(rel text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
SELECT format($q$
DELETE FROM usage_days d
    USING (SELECT DISTINCT source, pidx_day_of(t) AS day, dup FROM %1$s) k
    WHERE d.source = k.source AND d.day = k.day AND d.dup = k.dup;
INSERT INTO usage_days (source, day, dup, n, user_msgs, assistant_msgs, tool_results,
        tool_calls, input, output, cache_read, cache_write, cost, tool_errors, compactions,
        first_ms, last_ms)
    SELECT u.source, k.day, u.dup, sum(u.n), sum(u.user_msgs), sum(u.assistant_msgs),
           sum(u.tool_results), sum(u.tool_calls), sum(u.input), sum(u.output),
           sum(u.cache_read), sum(u.cache_write), sum(u.cost), sum(u.tool_errors),
           sum(u.compactions), min(u.ts_ms), max(u.ts_ms)
    FROM (SELECT DISTINCT source, pidx_day_of(t) AS day, dup FROM %1$s) k
    JOIN usage_by_source u ON u.source = k.source AND u.dup = k.dup AND u.t >= k.day
         AND u.t < CASE WHEN k.day = -9223372036854775808 THEN k.day + 1
                        ELSE k.day + 86400000 END
    WHERE u.n <> 0
    GROUP BY u.source, k.day, u.dup$q$, rel)
$f$;

CREATE FUNCTION pidx_usage_days() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE pidx_days_sql(CASE TG_OP
        WHEN 'INSERT' THEN 'new_rows'
        WHEN 'DELETE' THEN 'old_rows'
        ELSE '(SELECT source, t, dup FROM old_rows
               UNION ALL SELECT source, t, dup FROM new_rows) x' END);
    RETURN NULL;
END
$f$;

-- A row of `usage_sessions` exists while its transcript has a counted entry (pg 0009 deletes
-- it at 0); an update changes its count, not whether it is there.
CREATE FUNCTION pidx_source_sessions() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format($q$
        INSERT INTO usage_source_sessions AS r (source, dup, sessions)
            SELECT source, dup, %s * count(*) FROM %s GROUP BY source, dup
            ON CONFLICT (source, dup) DO UPDATE SET sessions = r.sessions + excluded.sessions$q$,
        CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END,
        CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END);
    DELETE FROM usage_source_sessions WHERE sessions = 0;
    RETURN NULL;
END
$f$;

CREATE TRIGGER usage_by_source_days_insert AFTER INSERT ON usage_by_source
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_usage_days();
CREATE TRIGGER usage_by_source_days_delete AFTER DELETE ON usage_by_source
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_usage_days();
CREATE TRIGGER usage_by_source_days_update AFTER UPDATE ON usage_by_source
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pidx_usage_days();
CREATE TRIGGER usage_sessions_count_insert AFTER INSERT ON usage_sessions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_source_sessions();
CREATE TRIGGER usage_sessions_count_delete AFTER DELETE ON usage_sessions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pidx_source_sessions();

DO $$ BEGIN EXECUTE pidx_days_sql('usage_by_source'); END $$;
INSERT INTO usage_source_sessions (source, dup, sessions)
    SELECT source, dup, count(*) FROM usage_sessions GROUP BY source, dup;
ANALYZE usage_days, usage_source_sessions;

-- Member rights on a table, as pg 0004, 0006, 0009 and 0010 set them, once, for this table and
-- the next: every role reads every row but a limited reader (`pidx team add-member --reads`),
-- who reads the rows `sees` allows (SQL over the table's columns; `false`: none); a member
-- writes only the rows of its own sources. The roles given rights on `like` get the same.
CREATE FUNCTION pidx_protect(tbl text, sees text, "like" text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    mine text := '((SELECT pidx_write_sources(current_user)) IS NULL
                   OR source = ANY ((SELECT pidx_write_sources(current_user))::text[]))';
    g record;
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
    FOR g IN SELECT a.grantee, a.privilege_type
             FROM pg_class c, aclexplode(c.relacl) a
             WHERE c.oid = to_regclass("like") AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON %I TO %s', g.privilege_type, tbl,
                       CASE WHEN g.grantee = 0 THEN 'PUBLIC'
                            ELSE quote_ident(g.grantee::regrole::text) END);
    END LOOP;
END
$f$;

-- A source's sums cannot be cut to the projects a limited reader may read: none of these rows
-- (its `stats` are summed from `usage_rollup` through its sessions, as before).
SELECT pidx_protect('usage_days', 'false', 'usage_by_source');
SELECT pidx_protect('usage_source_sessions', 'false', 'usage_sessions');
