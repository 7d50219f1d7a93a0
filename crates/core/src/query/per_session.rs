//! What a list shows of each session beside its title: the model it used most, what it cost
//! and how many tool calls failed, summed from the usage rollups (`usage_rollup`, kept at
//! ingest) rather than the entries, so a page of 300 rows reads a few hundred narrow rows.
//! Ranking and filtering the listing stay `list`'s; this only adds figures to its rows.

use std::collections::HashMap;

use rusqlite::Connection;

/// A session's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFigures {
    /// The model of most of its assistant messages (`None`: none answered).
    pub model: Option<String>,
    pub cost: f64,
    pub tool_errors: i64,
    pub assistant: i64,
}

/// Per session and model: the rollups' unique key leads with `file_id`, so each id is a range
/// of that index. Copies of a parent's entries (`dup`) count: the figures are what the session's
/// own page shows, not a share of the total (`stats` skips copies).
const FIGURES_OF: &str = "
SELECT file_id, model, sum(assistant), sum(cost), sum(tool_errors)
FROM usage_rollup WHERE file_id IN (SELECT value FROM json_each(?1))
GROUP BY file_id, model";

/// The figures of the sessions `file_ids` (a session with no rollup row has none).
///
/// # Errors
/// Index errors only.
pub fn figures(
    conn: &Connection,
    file_ids: &[i64],
) -> rusqlite::Result<HashMap<i64, SessionFigures>> {
    let ids = serde_json::to_string(file_ids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(FIGURES_OF)?;
    let mut rows = stmt.query([ids])?;
    let mut out: HashMap<i64, SessionFigures> = HashMap::new();
    let mut best: HashMap<i64, i64> = HashMap::new();
    while let Some(r) = rows.next()? {
        let (id, model, assistant): (i64, String, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let f = out.entry(id).or_default();
        f.cost += r.get::<_, f64>(3)?;
        f.tool_errors += r.get::<_, i64>(4)?;
        f.assistant += assistant;
        let most = best.entry(id).or_insert(0);
        if assistant > *most {
            *most = assistant;
            f.model = Some(model);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_sum_each_session_and_name_its_most_used_model() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE usage_rollup(file_id, t, model, provider, dup, assistant, cost, tool_errors);
             INSERT INTO usage_rollup VALUES
               (1, 0, 'opus', 'a', 0, 3, 1.5, 0), (1, 900000, 'opus', 'a', 0, 1, 0.5, 1),
               (1, 0, 'haiku', 'a', 0, 2, 0.25, 0), (1, 0, '(no model)', '-', 0, 0, 0.0, 2),
               (2, 0, 'gpt', 'o', 0, 1, 0.1, 0), (3, 0, 'x', 'o', 0, 9, 9.0, 9);",
        )?;
        let f = figures(&conn, &[1, 2, 4])?;
        assert_eq!(
            f[&1],
            SessionFigures {
                model: Some("opus".into()),
                cost: 2.25,
                tool_errors: 3,
                assistant: 6
            }
        );
        assert_eq!(f[&2].model.as_deref(), Some("gpt"));
        assert!(!f.contains_key(&3) && !f.contains_key(&4));
        Ok(())
    }
}
