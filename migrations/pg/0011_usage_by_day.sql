-- pg 0011: `stats` and `stats --by source` at a million sessions (issue 52). Over the whole
-- time range they read every row of `usage_by_source` (pg 0009: a row per source, quarter hour
-- and copy flag, 2.9 million rows at a million sessions; 0.9 s and 4.2 s) and counted the rows
-- of `usage_sessions` (a row per transcript). Two rollups of those rollups, kept with them by
-- pg 0009's trigger function on `usage_rollup` (replaced below), answer a range that is not
-- cut (crates/team/src/reads/stats.rs, `by_source_sql`):
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
-- A day is computed again from `usage_by_source` whenever rows of it change (read by its
-- key; at most 96 rows a day and copy flag), so the first and last stay exact when rows go
-- away. Small tables (a row a source and day): not partitioned.
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

-- Computes again the days of `usage_by_source` listed in `touched` (source, day, copy flag; a
-- day may be listed twice): their sums and first and last quarter hours from the rows with
-- entries (a row left at 0 entries is deleted right after the statement that leaves it so).
CREATE FUNCTION pidx_days_again(touched jsonb) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
DELETE FROM usage_days d
    USING jsonb_to_recordset(touched) AS k(source text, day bigint, dup boolean)
    WHERE d.source = k.source AND d.day = k.day AND d.dup = k.dup;
INSERT INTO usage_days (source, day, dup, n, user_msgs, assistant_msgs, tool_results,
        tool_calls, input, output, cache_read, cache_write, cost, tool_errors, compactions,
        first_ms, last_ms)
    SELECT k.source, k.day, k.dup, sum(u.n), sum(u.user_msgs), sum(u.assistant_msgs),
           sum(u.tool_results), sum(u.tool_calls), sum(u.input), sum(u.output),
           sum(u.cache_read), sum(u.cache_write), sum(u.cost), sum(u.tool_errors),
           sum(u.compactions), min(u.ts_ms), max(u.ts_ms)
    FROM (SELECT DISTINCT * FROM jsonb_to_recordset(touched)
                                 AS j(source text, day bigint, dup boolean)) k
    CROSS JOIN LATERAL (
        SELECT * FROM usage_by_source u
        WHERE u.source = k.source AND u.dup = k.dup AND u.t >= k.day
          AND u.t < CASE WHEN k.day = -9223372036854775808 THEN k.day + 1
                         ELSE k.day + 86400000 END
          AND u.n <> 0) u
    GROUP BY k.source, k.day, k.dup;
END
$f$;

-- pg 0009's trigger function on `usage_rollup` again, now keeping these two as well, in one
-- place and in static SQL (PL/pgSQL plans it once a session; pg 0009 built each statement
-- with `format` and ran it by EXECUTE, planned every time). A push changes the rollups a few
-- statements for every transcript it rewrites, most of them touching few rows: triggers on
-- `usage_by_source` and `usage_sessions` for these tables fired four times as often and
-- took an incremental push of 100 transcripts at a million sessions from 1.2-1.8 s to 3.4 s.
CREATE OR REPLACE FUNCTION pidx_rollup_by_source() RETURNS trigger LANGUAGE plpgsql AS $f$
DECLARE
    touched jsonb;
BEGIN
    -- An update adds its new rows and takes its old ones away.
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO usage_by_source AS r (source, t, dup, n, user_msgs, assistant_msgs,
            tool_results, tool_calls, input, output, cache_read, cache_write, cost, tool_errors,
            compactions)
        SELECT source, t, dup, -sum(n), -sum(user_msgs), -sum(assistant_msgs),
               -sum(tool_results), -sum(tool_calls), -sum(input), -sum(output),
               -sum(cache_read), -sum(cache_write), -sum(cost), -sum(tool_errors),
               -sum(compactions)
        FROM old_rows GROUP BY source, t, dup
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
        SELECT source, fid, dup, -sum(n) FROM old_rows GROUP BY source, fid, dup
        ON CONFLICT (source, fid, dup) DO UPDATE SET n = r.n + excluded.n;
    SELECT coalesce(touched, '[]'::jsonb) || coalesce(jsonb_agg(DISTINCT jsonb_build_object(
               'source', source, 'day', pidx_day_of(t), 'dup', dup)), '[]'::jsonb)
    INTO touched FROM old_rows;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO usage_by_source AS r (source, t, dup, n, user_msgs, assistant_msgs,
            tool_results, tool_calls, input, output, cache_read, cache_write, cost, tool_errors,
            compactions)
        SELECT source, t, dup, sum(n), sum(user_msgs), sum(assistant_msgs),
               sum(tool_results), sum(tool_calls), sum(input), sum(output),
               sum(cache_read), sum(cache_write), sum(cost), sum(tool_errors),
               sum(compactions)
        FROM new_rows GROUP BY source, t, dup
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
    -- Transcripts counted for the first time.
    INSERT INTO usage_source_sessions AS r (source, dup, sessions)
        SELECT source, dup, count(DISTINCT fid) FROM new_rows o
        WHERE NOT EXISTS (SELECT FROM usage_sessions s
                          WHERE s.source = o.source AND s.fid = o.fid AND s.dup = o.dup)
        GROUP BY source, dup
        ON CONFLICT (source, dup) DO UPDATE SET sessions = r.sessions + excluded.sessions;
    INSERT INTO usage_sessions AS r (source, fid, dup, n)
        SELECT source, fid, dup, sum(n) FROM new_rows GROUP BY source, fid, dup
        ON CONFLICT (source, fid, dup) DO UPDATE SET n = r.n + excluded.n;
    SELECT coalesce(touched, '[]'::jsonb) || coalesce(jsonb_agg(DISTINCT jsonb_build_object(
               'source', source, 'day', pidx_day_of(t), 'dup', dup)), '[]'::jsonb)
    INTO touched FROM new_rows;
    END IF;
    DELETE FROM usage_by_source WHERE n = 0;
    -- Transcripts no longer counted.
    WITH gone AS (DELETE FROM usage_sessions WHERE n = 0 RETURNING source, dup)
    INSERT INTO usage_source_sessions AS r (source, dup, sessions)
        SELECT source, dup, -count(*) FROM gone GROUP BY source, dup
        ON CONFLICT (source, dup) DO UPDATE SET sessions = r.sessions + excluded.sessions;
    DELETE FROM usage_source_sessions WHERE sessions = 0;
    IF jsonb_array_length(touched) > 0 THEN
        PERFORM pidx_days_again(touched);
    END IF;
    RETURN NULL;
END
$f$;
DROP FUNCTION pidx_by_source_sql(text, int);

SELECT pidx_days_again(jsonb_agg(DISTINCT jsonb_build_object('source', source,
                                                             'day', pidx_day_of(t), 'dup', dup)))
FROM usage_by_source;
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
