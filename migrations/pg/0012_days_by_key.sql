-- pg 0012: pg 0011's `pidx_days_again` computes the touched days again by their keys. Planned
-- once a session for a `jsonb` argument of unknown length (taken as 100 rows), its two
-- statements joined the days by hash, and the `INSERT`'s hash join read every row of
-- `usage_by_source` each time a rollup changed: 948,200 rows, 488 ms of an incremental push's
-- 0.8 s at a million sessions (`auto_explain` of the push's trigger statements), for the one
-- day a push of 100 grown transcripts touches. Nested loops are the only joins left to it, so
-- each day is read through the primary keys: at most 96 rows of `usage_by_source` a day and
-- copy flag, one row of `usage_days`, however large the tables grow. Same function body.
CREATE OR REPLACE FUNCTION pidx_days_again(touched jsonb) RETURNS void LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off AS $f$
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
