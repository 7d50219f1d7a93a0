-- Tool rollups: `stats --by tool` joined every tool call to its entry and scanned every tool
-- result (899 ms on 325k entries). These rows hold the same counts per (session file, quarter
-- hour, model key, provider key, tool name, copy flag), like the usage rollups of 0009 (whose
-- `usage_facts` view gives the time, model and provider keys), so every grouping with a tool
-- reads a few tens of thousands of narrow rows.
--
-- Kept right at ingest by src/store/writer/rollups.rs (the same transaction as the entries);
-- the trigger below follows fork-copy flags that change later.

-- One tool call (of an assistant message) or one tool result, with its group keys.
CREATE VIEW tool_facts AS
SELECT u.rid, u.file_id, u.seq, u.dup, u.t, u.model, u.provider, t.name AS tool,
       1 AS calls, 0 AS results, 0 AS errors
FROM tool_uses t JOIN usage_facts u ON u.rid = t.rid
UNION ALL
SELECT u.rid, u.file_id, u.seq, u.dup, u.t, u.model, u.provider,
       coalesce(e.tool_name, '?'), 0, 1, coalesce(e.is_error, 0)
FROM usage_facts u JOIN entries e ON e.rid = u.rid
WHERE e.type = 'message' AND e.role = 'toolResult';

CREATE TABLE tool_rollup (
    file_id   INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    t         INTEGER NOT NULL,
    model     TEXT NOT NULL,
    provider  TEXT NOT NULL,
    tool      TEXT NOT NULL,
    dup       INTEGER NOT NULL,
    n         INTEGER NOT NULL, -- calls and results summed here (a row at 0 is deleted)
    calls     INTEGER NOT NULL,
    results   INTEGER NOT NULL,
    errors    INTEGER NOT NULL,
    ts_ms     INTEGER GENERATED ALWAYS AS (nullif(t, -9223372036854775808)) VIRTUAL,
    UNIQUE (file_id, t, model, provider, tool, dup)
);

INSERT INTO tool_rollup(file_id, t, model, provider, tool, dup, n, calls, results, errors)
SELECT file_id, t, model, provider, tool, dup, count(*), sum(calls), sum(results), sum(errors)
FROM tool_facts GROUP BY file_id, t, model, provider, tool, dup;

-- A fork made this entry a copy, or made it the canonical one again: its tool calls and its
-- result move from the old flag's rows to the new one's.
CREATE TRIGGER tool_rollup_dup AFTER UPDATE OF dup ON entries WHEN OLD.dup <> NEW.dup
BEGIN
    INSERT INTO tool_rollup(file_id, t, model, provider, tool, dup, n, calls, results, errors)
    SELECT file_id, t, model, provider, tool, dup, count(*), sum(calls), sum(results),
           sum(errors)
    FROM tool_facts WHERE rid = NEW.rid GROUP BY tool
    ON CONFLICT DO UPDATE SET
        n = tool_rollup.n + excluded.n,
        calls = tool_rollup.calls + excluded.calls,
        results = tool_rollup.results + excluded.results,
        errors = tool_rollup.errors + excluded.errors;
    UPDATE tool_rollup SET
        n = tool_rollup.n - f.n,
        calls = tool_rollup.calls - f.calls,
        results = tool_rollup.results - f.results,
        errors = tool_rollup.errors - f.errors
    FROM (SELECT file_id, t, model, provider, tool, count(*) AS n, sum(calls) AS calls,
                 sum(results) AS results, sum(errors) AS errors
          FROM tool_facts WHERE rid = NEW.rid GROUP BY tool) f
    WHERE tool_rollup.file_id = f.file_id AND tool_rollup.t = f.t
      AND tool_rollup.model = f.model AND tool_rollup.provider = f.provider
      AND tool_rollup.tool = f.tool AND tool_rollup.dup = OLD.dup;
    DELETE FROM tool_rollup
    WHERE file_id = NEW.file_id AND dup = OLD.dup AND n = 0;
END;

-- The files active in one quarter hour: `stats` reads the entries of those files when a range
-- ends inside that quarter hour (`--since 30d`).
CREATE INDEX tool_rollup_by_t ON tool_rollup(t);
CREATE INDEX usage_rollup_by_t ON usage_rollup(t);
