//! What a list shows of each session beside its title: the model it used most, what it cost
//! and how many tool calls failed, kept a row a session at ingest (`session_figures`, from the
//! usage rollups; migration 0031), so a page of 300 rows reads 300 narrow rows. Ranking and
//! filtering the listing stay `list`'s; this only adds figures to its rows.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::store::Scope;

/// A session's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFigures {
    /// The model of most of its assistant messages (`None`: none answered).
    pub model: Option<String>,
    pub cost: f64,
    pub tool_errors: i64,
    pub assistant: i64,
    /// Input, output, cache read and cache write tokens.
    pub tokens: i64,
    pub tool_calls: i64,
}

const FIGURES_OF: &str = "
SELECT file_id, model, assistant, cost, tool_errors, tokens, tool_calls
FROM session_figures WHERE file_id IN (SELECT value FROM json_each(?1))";

fn read(r: &rusqlite::Row, at: usize) -> rusqlite::Result<SessionFigures> {
    Ok(SessionFigures {
        model: r.get(at)?,
        assistant: r.get(at + 1)?,
        cost: r.get(at + 2)?,
        tool_errors: r.get(at + 3)?,
        tokens: r.get(at + 4)?,
        tool_calls: r.get(at + 5)?,
    })
}

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
    let rows = stmt.query_map([ids], |r| Ok((r.get(0)?, read(r, 1)?)))?;
    rows.collect()
}

/// The `n` most expensive sessions in `scope`, with their paths, in `stats --by session`'s
/// order of them (cost, then tokens, then tool calls, highest first; then path): read from
/// `session_figures` (one narrow row a session, through `session_figures_by_cost`), where
/// `stats --by session` summed every rollup row of every session to keep ten.
///
/// # Errors
/// Index errors only.
pub fn most_expensive(
    conn: &Connection,
    scope: &Scope,
    n: usize,
) -> rusqlite::Result<Vec<(String, SessionFigures)>> {
    // A session has a figures row when it has rollup rows: what `stats` lists.
    let mut w = crate::query::list::project_files(scope, None);
    let limit = w.limit(Some(n));
    let sql = format!(
        "SELECT f.path, g.model, g.assistant, g.cost, g.tool_errors, g.tokens, g.tool_calls
         FROM session_figures g
         CROSS JOIN files f ON f.id = g.file_id CROSS JOIN sessions s ON s.file_id = f.id
         WHERE {}
         ORDER BY g.cost DESC, g.tokens DESC, g.tool_calls DESC, f.path {limit}",
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| Ok((r.get(0)?, read(r, 1)?)))?;
    rows.collect()
}
