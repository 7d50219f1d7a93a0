-- Usage rollups: `stats` (and the report and the MCP usage tool, which call it) summed every
-- entry row (1.1 s on 800k entries, most of it reading wide rows that carry text). These rows
-- hold the same figures summed per (session file, quarter hour, model key, provider key, copy
-- flag): about a tenth of the rows, a handful of narrow columns. A quarter hour lies inside one
-- calendar day in every real time zone (offsets are whole quarter hours), so any day, week or
-- month grouping in any such zone, distinct sessions and active days all come out exact.
-- src/query/stats.rs falls back to the entries for what rollups cannot answer (tools, a range
-- boundary inside a quarter hour, an odd fixed offset).
--
-- Kept right at ingest: src/store/writer/rollups.rs adds each batch of new entries and drops a
-- file's rows when its entries go; the trigger below moves an entry between the copy and
-- canonical rows when a fork changes which copy counts (src/store/copies.rs).

-- One entry's contribution, with its group keys. `t` is the start of its quarter hour (epoch
-- ms, floored) or i64::MIN when the entry has no valid time.
CREATE VIEW usage_facts AS
SELECT rid, file_id, seq, dup,
       coalesce(ts_ms - ((ts_ms % 900000) + 900000) % 900000, -9223372036854775808) AS t,
       CASE WHEN input IS NULL AND role IS NOT 'assistant'
              THEN '(no model: user messages / tool results / compactions)'
            WHEN type = 'message' AND role = 'assistant'
              THEN coalesce(response_model, model, '?')
            WHEN type = 'usage' THEN coalesce(model, '?')
            ELSE 'tools/summaries' END AS model,
       CASE WHEN provider IS NULL THEN '-' ELSE provider END AS provider,
       type = 'message' AND role = 'user' AS user,
       type = 'message' AND role = 'assistant' AS assistant,
       type = 'message' AND role = 'toolResult' AS tool_results,
       CASE WHEN type = 'message' AND role = 'assistant' THEN coalesce(tool_calls, 0) ELSE 0 END
         AS tool_calls,
       coalesce(input, 0) AS input, coalesce(output, 0) AS output,
       coalesce(cache_read, 0) AS cache_read, coalesce(cache_write, 0) AS cache_write,
       coalesce(cost, 0.0) AS cost,
       coalesce(type = 'message' AND role = 'toolResult' AND is_error, 0) AS tool_errors,
       type = 'compaction' AS compactions
FROM entries;

CREATE TABLE usage_rollup (
    file_id      INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    t            INTEGER NOT NULL,
    model        TEXT NOT NULL,
    provider     TEXT NOT NULL,
    dup          INTEGER NOT NULL,
    n            INTEGER NOT NULL, -- entries summed here (a row at 0 is deleted)
    user         INTEGER NOT NULL,
    assistant    INTEGER NOT NULL,
    tool_results INTEGER NOT NULL,
    tool_calls   INTEGER NOT NULL,
    input        INTEGER NOT NULL,
    output       INTEGER NOT NULL,
    cache_read   INTEGER NOT NULL,
    cache_write  INTEGER NOT NULL,
    cost         REAL NOT NULL,
    tool_errors  INTEGER NOT NULL,
    compactions  INTEGER NOT NULL,
    ts_ms        INTEGER GENERATED ALWAYS AS (nullif(t, -9223372036854775808)) VIRTUAL,
    UNIQUE (file_id, t, model, provider, dup)
);

INSERT INTO usage_rollup(file_id, t, model, provider, dup, n, user, assistant, tool_results,
                         tool_calls, input, output, cache_read, cache_write, cost, tool_errors,
                         compactions)
SELECT file_id, t, model, provider, dup, count(*), sum(user), sum(assistant), sum(tool_results),
       sum(tool_calls), sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost),
       sum(tool_errors), sum(compactions)
FROM usage_facts GROUP BY file_id, t, model, provider, dup;

-- A fork made this entry a copy, or made it the canonical one again: its figures move from the
-- old flag's row to the new one's.
CREATE TRIGGER usage_rollup_dup AFTER UPDATE OF dup ON entries WHEN OLD.dup <> NEW.dup
BEGIN
    INSERT INTO usage_rollup(file_id, t, model, provider, dup, n, user, assistant, tool_results,
                             tool_calls, input, output, cache_read, cache_write, cost,
                             tool_errors, compactions)
    SELECT file_id, t, model, provider, dup, 1, user, assistant, tool_results, tool_calls,
           input, output, cache_read, cache_write, cost, tool_errors, compactions
    FROM usage_facts WHERE rid = NEW.rid
    ON CONFLICT DO UPDATE SET
        n = usage_rollup.n + excluded.n,
        user = usage_rollup.user + excluded.user,
        assistant = usage_rollup.assistant + excluded.assistant,
        tool_results = usage_rollup.tool_results + excluded.tool_results,
        tool_calls = usage_rollup.tool_calls + excluded.tool_calls,
        input = usage_rollup.input + excluded.input,
        output = usage_rollup.output + excluded.output,
        cache_read = usage_rollup.cache_read + excluded.cache_read,
        cache_write = usage_rollup.cache_write + excluded.cache_write,
        cost = usage_rollup.cost + excluded.cost,
        tool_errors = usage_rollup.tool_errors + excluded.tool_errors,
        compactions = usage_rollup.compactions + excluded.compactions;
    UPDATE usage_rollup SET
        n = usage_rollup.n - 1,
        user = usage_rollup.user - f.user,
        assistant = usage_rollup.assistant - f.assistant,
        tool_results = usage_rollup.tool_results - f.tool_results,
        tool_calls = usage_rollup.tool_calls - f.tool_calls,
        input = usage_rollup.input - f.input,
        output = usage_rollup.output - f.output,
        cache_read = usage_rollup.cache_read - f.cache_read,
        cache_write = usage_rollup.cache_write - f.cache_write,
        cost = usage_rollup.cost - f.cost,
        tool_errors = usage_rollup.tool_errors - f.tool_errors,
        compactions = usage_rollup.compactions - f.compactions
    FROM (SELECT * FROM usage_facts WHERE rid = NEW.rid) f
    WHERE usage_rollup.file_id = f.file_id AND usage_rollup.t = f.t
      AND usage_rollup.model = f.model AND usage_rollup.provider = f.provider
      AND usage_rollup.dup = OLD.dup;
    DELETE FROM usage_rollup
    WHERE file_id = NEW.file_id AND dup = OLD.dup AND n = 0;
END;
