//! File touches (`migrations/0022_touches.sql`): the files an entry's tool calls touched, and
//! the results of calls of the tools that touch files, written with the entry in the caller's
//! transaction and removed with the file's entries.

use rusqlite::{params, Connection};

use crate::pi::model::EntryRow;

/// The tools whose results say whether a touch happened (`pi::touches`).
const TOOLS: [&str; 7] = ["read", "edit", "write", "ls", "grep", "find", "bash"];

/// Writes the touches of entry `rid` and, for a tool result of such a tool, its status.
///
/// # Errors
/// SQLite errors.
pub fn insert(tx: &Connection, rid: i64, file_id: i64, e: &EntryRow) -> rusqlite::Result<()> {
    if !e.touches.is_empty() {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO touches(rid, file_id, block, call_id, tool, kind, path, rel, ts_ms,
                                 added, removed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        for t in &e.touches {
            stmt.execute(params![
                rid,
                file_id,
                t.block,
                t.call_id,
                t.tool,
                t.kind.as_str(),
                t.path,
                t.rel,
                e.ts_ms,
                t.added,
                t.removed
            ])?;
        }
    }
    if let (Some(call), Some(tool)) = (&e.call_id, &e.tool_name) {
        if TOOLS.contains(&tool.as_str()) {
            tx.prepare_cached(
                "INSERT INTO touch_results(file_id, call_id, rid, is_error, line)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                file_id,
                call,
                rid,
                e.is_error.unwrap_or(false),
                e.first_changed
            ])?;
        }
    }
    Ok(())
}

/// Removes a file's touches and results (before its entries go).
pub fn clear(tx: &Connection, file_id: i64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM touches WHERE file_id = ?1", [file_id])?;
    tx.execute("DELETE FROM touch_results WHERE file_id = ?1", [file_id])?;
    Ok(())
}
