-- 0029: every fact an entry contributes to the rollups is a number, never NULL. In SQL,
-- `type = 'message' AND role = 'user'` is NULL when `role` is NULL (a line like
-- `{"type":"message","message":null}`), and the sum of a group holding only such entries is
-- NULL: alone in its quarter hour, one of them failed usage_rollup's NOT NULL columns and, before
-- a file's failed write was isolated (src/ingest/pipeline.rs), aborted the whole sync. Each
-- boolean fact is `coalesce`d to 0 and each key has a value, as the team server's
-- `pidx_usage_facts` already does. `tool_facts` reads this view, so both are made again.
DROP VIEW IF EXISTS tool_facts;
DROP VIEW IF EXISTS usage_facts;

CREATE VIEW usage_facts AS
SELECT rid, file_id, seq, dup,
       coalesce(ts_ms - ((ts_ms % 900000) + 900000) % 900000, -9223372036854775808) AS t,
       CASE WHEN input IS NULL AND role IS NOT 'assistant'
              THEN '(no model: user messages / tool results / compactions)'
            WHEN type IS 'message' AND role IS 'assistant'
              THEN coalesce(response_model, model, '?')
            WHEN type IS 'usage' THEN coalesce(model, '?')
            ELSE 'tools/summaries' END AS model,
       coalesce(provider, '-') AS provider,
       coalesce(type = 'message' AND role = 'user', 0) AS user,
       coalesce(type = 'message' AND role = 'assistant', 0) AS assistant,
       coalesce(type = 'message' AND role = 'toolResult', 0) AS tool_results,
       CASE WHEN type IS 'message' AND role IS 'assistant' THEN coalesce(tool_calls, 0) ELSE 0 END
         AS tool_calls,
       coalesce(input, 0) AS input, coalesce(output, 0) AS output,
       coalesce(cache_read, 0) AS cache_read, coalesce(cache_write, 0) AS cache_write,
       coalesce(cost, 0.0) AS cost,
       coalesce(type = 'message' AND role = 'toolResult' AND is_error, 0) AS tool_errors,
       coalesce(type = 'compaction', 0) AS compactions
FROM entries;

CREATE VIEW tool_facts AS
SELECT u.rid, u.file_id, u.seq, u.dup, u.t, u.model, u.provider, t.name AS tool,
       1 AS calls, 0 AS results, 0 AS errors
FROM tool_uses t JOIN usage_facts u ON u.rid = t.rid
UNION ALL
SELECT u.rid, u.file_id, u.seq, u.dup, u.t, u.model, u.provider,
       coalesce(e.tool_name, '?'), 0, 1, coalesce(e.is_error, 0)
FROM usage_facts u JOIN entries e ON e.rid = u.rid
WHERE e.type = 'message' AND e.role = 'toolResult';
