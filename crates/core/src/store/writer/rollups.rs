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

/// A session's figures (`migrations/0031_session_figures.sql`) summed again from its usage
/// rollups: a few rows a file, read through their unique key.
const FIGURES: &str = "
INSERT OR REPLACE INTO session_figures(file_id, model, cost, tool_errors, assistant, tokens,
                                       tool_calls)
SELECT ?1,
       (SELECT m.model FROM usage_rollup m WHERE m.file_id = ?1 GROUP BY m.model
        HAVING sum(m.assistant) > 0 ORDER BY sum(m.assistant) DESC, m.model LIMIT 1),
       sum(cost), sum(tool_errors), sum(assistant),
       sum(input) + sum(output) + sum(cache_read) + sum(cache_write), sum(tool_calls)
FROM usage_rollup WHERE file_id = ?1 HAVING count(*) > 0";

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
        tx.prepare_cached(FIGURES)?.execute([file_id])?;
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
    tx.prepare_cached("DELETE FROM session_figures WHERE file_id = ?1")?
        .execute([file_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    type Figures = (i64, Option<String>, f64, i64, i64, i64, i64);

    #[test]
    fn figures_sum_each_session_and_name_its_most_used_model() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE usage_rollup(file_id, t, model, provider, dup, assistant, cost, tool_errors,
                                        input, output, cache_read, cache_write, tool_calls);
             CREATE TABLE session_figures(file_id PRIMARY KEY, model, cost, tool_errors, assistant,
                                          tokens, tool_calls);
             INSERT INTO usage_rollup VALUES
               (1, 0, 'opus', 'a', 0, 3, 1.5, 0, 1, 2, 3, 4, 5),
               (1, 900000, 'opus', 'a', 1, 1, 0.5, 1, 10, 0, 0, 0, 1),
               (1, 0, 'haiku', 'a', 0, 2, 0.25, 0, 0, 0, 0, 0, 0),
               (1, 0, '(no model)', '-', 0, 0, 0.0, 2, 0, 0, 0, 0, 0),
               (2, 0, 'gpt', 'o', 0, 2, 0.1, 0, 0, 0, 0, 0, 0),
               (2, 0, 'abc', 'o', 0, 2, 0.1, 0, 0, 0, 0, 0, 0),
               (3, 0, '(no model)', '-', 0, 0, 0.0, 1, 0, 0, 0, 0, 0);",
        )?;
        for id in 1..=4 {
            conn.execute(FIGURES, [id])?;
        }
        let mut stmt = conn.prepare("SELECT * FROM session_figures ORDER BY file_id")?;
        let rows: Vec<Figures> = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        assert_eq!(
            rows,
            [
                // Copies (dup 1) count: the figures are the session's own page's.
                (1, Some("opus".into()), 2.25, 3, 6, 20, 6),
                // A tie goes to the first model in binary order.
                (2, Some("abc".into()), 0.2, 0, 4, 0, 0),
                // No assistant message: no model.
                (3, None, 0.0, 1, 0, 0, 0),
                // File 4 has no rollups, so no row.
            ]
        );
        Ok(())
    }
}
