-- 0031: one row of figures a session (what a list shows beside its title: the model of most
-- of its assistant messages, cost, failed tool calls; with tokens and tool calls, what the usage
-- page's most expensive sessions show), kept at ingest from the usage rollups
-- (src/store/writer/rollups.rs refreshes a file's row after each batch and drops it with the
-- file's entries). The sessions page filtered and ordered every project's sessions by these
-- figures after summing 41,000 rollup rows of 10,000 sessions on each request; with a row a
-- session, the filter and the order are one SQL query over narrow rows; the most expensive
-- sessions are the first rows of an index instead of `stats --by session` over every rollup row.
-- These are `stats --by session`'s figures: it counts copies too.
--
-- Copies of a parent's entries count (the sum over both copy flags): the figures are what the
-- session's own page shows, and a fork changing which copy counts (the `dup` trigger of 0009)
-- moves figures between rows of the same file, so this row does not change with it.
CREATE TABLE IF NOT EXISTS session_figures (
    file_id     INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    -- most assistant messages, ties to the first in binary order; NULL when none answered
    model       TEXT,
    cost        REAL NOT NULL,
    tool_errors INTEGER NOT NULL,
    assistant   INTEGER NOT NULL,
    tokens      INTEGER NOT NULL, -- input + output + cache read + cache write
    tool_calls  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS session_figures_by_cost
    ON session_figures(cost DESC, tokens DESC, tool_calls DESC);

INSERT OR REPLACE INTO session_figures(file_id, model, cost, tool_errors, assistant, tokens,
                                       tool_calls)
SELECT file_id,
       (SELECT m.model FROM usage_rollup m WHERE m.file_id = r.file_id GROUP BY m.model
        HAVING sum(m.assistant) > 0 ORDER BY sum(m.assistant) DESC, m.model LIMIT 1),
       sum(cost), sum(tool_errors), sum(assistant),
       sum(input) + sum(output) + sum(cache_read) + sum(cache_write), sum(tool_calls)
FROM usage_rollup r GROUP BY file_id;
