-- pg 0017: each source's count of transcripts (`usage_source_sessions`, pg 0011) is right again
-- after a transcript is rewritten or removed. Taking a transcript's entries away leaves its
-- rollup rows at n = 0, then deletes them; that delete ran pidx_rollup_by_source a second time
-- with rows of n = 0, which put the transcript's `usage_sessions` row back at n = 0, and the
-- sweep of rows at 0 counted it gone a second time. Every rewritten transcript so counted -1
-- (a push that rewrote 223 of 229 transcripts left the source at 6; pg 0016's push sends
-- most transcripts again). Rows of n = 0 now leave `usage_sessions` alone; both tables are
-- counted again from the rollups.
-- pg 0011's function, but for the HAVING.
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
    -- Rows at n = 0 (the sweep of rows an earlier statement emptied) count for nothing.
    INSERT INTO usage_sessions AS r (source, fid, dup, n)
        SELECT source, fid, dup, -sum(n) FROM old_rows GROUP BY source, fid, dup
        HAVING sum(n) <> 0
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

DELETE FROM usage_sessions;
INSERT INTO usage_sessions (source, fid, dup, n)
    SELECT source, fid, dup, sum(n) FROM usage_rollup GROUP BY source, fid, dup HAVING sum(n) <> 0;
DELETE FROM usage_source_sessions;
INSERT INTO usage_source_sessions (source, dup, sessions)
    SELECT source, dup, count(*) FROM usage_sessions GROUP BY source, dup;
ANALYZE usage_sessions, usage_source_sessions;
