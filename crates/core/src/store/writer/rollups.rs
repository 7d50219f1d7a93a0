//! Usage rollups (`migrations/0009_usage_rollup.sql`): the figures `stats` sums, kept per
//! (file, quarter hour, model, provider, copy flag) as entries arrive and go; tool rollups
//! (`migrations/0012_tool_rollup.sql`): tool calls, results and errors per (file, quarter hour,
//! model, provider, tool, copy flag). The views `usage_facts` and `tool_facts` say what one
//! entry contributes; the migrations' triggers follow fork-copy flags that change later.

use rusqlite::{params, Connection};

/// Adds the entries of `file_id` from `from_seq` on (a batch just inserted) to the rollups.
const ADD: &str = "
INSERT INTO usage_rollup(file_id, t, model, provider, dup, n, user, assistant, tool_results,
                         tool_calls, input, output, cache_read, cache_write, cost, tool_errors,
                         compactions)
SELECT file_id, t, model, provider, dup, count(*), sum(user), sum(assistant), sum(tool_results),
       sum(tool_calls), sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost),
       sum(tool_errors), sum(compactions)
FROM usage_facts WHERE file_id = ?1 AND seq >= ?2
GROUP BY t, model, provider, dup
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
    compactions = usage_rollup.compactions + excluded.compactions";

/// Adds the tool calls and results of `file_id` from `from_seq` on to the tool rollups.
const ADD_TOOLS: &str = "
INSERT INTO tool_rollup(file_id, t, model, provider, tool, dup, n, calls, results, errors)
SELECT file_id, t, model, provider, tool, dup, count(*), sum(calls), sum(results), sum(errors)
FROM tool_facts WHERE file_id = ?1 AND seq >= ?2
GROUP BY t, model, provider, tool, dup
ON CONFLICT DO UPDATE SET
    n = tool_rollup.n + excluded.n,
    calls = tool_rollup.calls + excluded.calls,
    results = tool_rollup.results + excluded.results,
    errors = tool_rollup.errors + excluded.errors";

/// Adds a batch of new entries of `file_id` (those with `seq >= from_seq`) to the rollups, in
/// the batch's transaction.
///
/// # Errors
/// SQLite errors.
pub fn add(tx: &Connection, file_id: i64, from_seq: Option<i64>) -> rusqlite::Result<()> {
    if let Some(seq) = from_seq {
        tx.prepare_cached(ADD)?.execute(params![file_id, seq])?;
        tx.prepare_cached(ADD_TOOLS)?
            .execute(params![file_id, seq])?;
    }
    Ok(())
}

/// Drops a file's rollups, when its entries go.
///
/// # Errors
/// SQLite errors.
pub fn clear(tx: &Connection, file_id: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM usage_rollup WHERE file_id = ?1")?
        .execute([file_id])?;
    tx.prepare_cached("DELETE FROM tool_rollup WHERE file_id = ?1")?
        .execute([file_id])?;
    Ok(())
}
