//! What a list shows of each session beside its title: the model it used most, what it cost
//! and how many tool calls failed, kept a row a session at ingest (`session_figures`, from the
//! usage rollups; migration 0031), so a page of 300 rows reads 300 narrow rows. Ranking and
//! filtering the listing stay `list`'s; this only adds figures to its rows.

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

const FIGURES_OF: &str = "
SELECT file_id, model, assistant, cost, tool_errors
FROM session_figures WHERE file_id IN (SELECT value FROM json_each(?1))";

/// The figures of the sessions `file_ids` (a session with no entries has none).
///
/// # Errors
/// Index errors only.
pub fn figures(
    conn: &Connection,
    file_ids: &[i64],
) -> rusqlite::Result<HashMap<i64, SessionFigures>> {
    let ids = serde_json::to_string(file_ids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(FIGURES_OF)?;
    let rows = stmt.query_map([ids], |r| {
        Ok((
            r.get(0)?,
            SessionFigures {
                model: r.get(1)?,
                assistant: r.get(2)?,
                cost: r.get(3)?,
                tool_errors: r.get(4)?,
            },
        ))
    })?;
    rows.collect()
}
