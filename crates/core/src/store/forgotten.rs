//! Sessions the user told pidx to forget (migration 0023): removed from the index in the same
//! transaction that remembers them, so no reader ever sees one half-forgotten, and left out of
//! every later stat pass (`ingest::sync`, `ingest::behind`) by their path. The JSONL files are
//! pi's and are never touched.

use std::collections::HashSet;

use rusqlite::{params, Connection};
use serde::Serialize;

use super::schema::{MODIFIED, TITLE};
use super::writer;

/// A forgotten session, as it was when it was forgotten.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgotten {
    pub path: String,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub name: Option<String>,
    pub modified_ms: Option<i64>,
    pub forgotten_ms: i64,
    pub batch: i64,
}

impl Forgotten {
    fn from_row(r: &rusqlite::Row) -> rusqlite::Result<Forgotten> {
        Ok(Forgotten {
            path: r.get(0)?,
            session_id: r.get(1)?,
            cwd: r.get(2)?,
            name: r.get(3)?,
            modified_ms: r.get(4)?,
            forgotten_ms: r.get(5)?,
            batch: r.get(6)?,
        })
    }
}

const COLUMNS: &str = "path, session_id, cwd, name, modified_ms, forgotten_ms, batch";

/// The paths a stat pass leaves out.
///
/// # Errors
/// SQLite errors.
pub fn paths(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare_cached("SELECT path FROM forgotten")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Every forgotten session, the latest run first.
///
/// # Errors
/// SQLite errors.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<Forgotten>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM forgotten ORDER BY batch DESC, modified_ms DESC, path"
    ))?;
    let rows = stmt.query_map([], Forgotten::from_row)?;
    rows.collect()
}

/// The indexed sessions in project `cwd` (exactly: pi's project is its cwd) and/or last active
/// before `before_ms`, as file ids; `None` for both selects nothing.
///
/// # Errors
/// SQLite errors.
pub fn matching(
    conn: &Connection,
    cwd: Option<&str>,
    before_ms: Option<i64>,
) -> rusqlite::Result<Vec<i64>> {
    if cwd.is_none() && before_ms.is_none() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT f.id FROM files f JOIN sessions s ON s.file_id = f.id
         WHERE (?1 IS NULL OR s.cwd = ?1) AND (?2 IS NULL OR {MODIFIED} < ?2)
         ORDER BY f.path"
    ))?;
    let rows = stmt.query_map(params![cwd, before_ms], |r| r.get(0))?;
    rows.collect()
}

/// Removes the files' rows from the index and remembers them as one run; returns what was
/// forgotten. Run it inside the writer's transaction.
///
/// # Errors
/// SQLite errors.
pub fn forget(tx: &Connection, file_ids: &[i64], now_ms: i64) -> rusqlite::Result<Vec<Forgotten>> {
    let batch: i64 = tx.query_row(
        "SELECT coalesce(max(batch), 0) + 1 FROM forgotten",
        [],
        |r| r.get(0),
    )?;
    let mut done = Vec::new();
    for &id in file_ids {
        let row = tx.query_row(
            &format!(
                "SELECT f.path, s.session_id, s.cwd, {TITLE}, {MODIFIED}, ?2, ?3
                 FROM files f LEFT JOIN sessions s ON s.file_id = f.id WHERE f.id = ?1"
            ),
            params![id, now_ms, batch],
            Forgotten::from_row,
        );
        let f = match row {
            Ok(f) => f,
            Err(rusqlite::Error::QueryReturnedNoRows) => continue,
            Err(e) => return Err(e),
        };
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO forgotten ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ),
            params![
                f.path,
                f.session_id,
                f.cwd,
                f.name,
                f.modified_ms,
                f.forgotten_ms,
                f.batch
            ],
        )?;
        writer::delete_file(tx, id)?;
        done.push(f);
    }
    Ok(done)
}

/// Takes back the latest run (or every run, `all`): the next sync indexes those files again.
/// Returns what was restored.
///
/// # Errors
/// SQLite errors.
pub fn undo(tx: &Connection, all: bool) -> rusqlite::Result<Vec<Forgotten>> {
    let which = if all {
        "1"
    } else {
        "batch = (SELECT max(batch) FROM forgotten)"
    };
    let mut stmt = tx.prepare(&format!(
        "DELETE FROM forgotten WHERE {which} RETURNING {COLUMNS}"
    ))?;
    let rows = stmt.query_map([], Forgotten::from_row)?;
    let mut restored: Vec<Forgotten> = rows.collect::<rusqlite::Result<_>>()?;
    restored.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(restored)
}
