//! File history from the transcripts (issue 34): which sessions touched a file (`list`), which
//! session last produced each line of it (`blame`), and which sessions a git commit's added
//! lines came from (`commits`). Touches are rows written at ingest (`migrations/0022`); the
//! text of an edit or write is read back from its transcript line here, only for the files
//! asked about. Git is read in `git.rs` alone; the attribution rule is `attribute.rs`.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

use rusqlite::{params, Connection};
use serde::Serialize;

use crate::pi::touches::{changes_in_line, Change};
use crate::query::handle::{self, Session};
use crate::store::jsonl;

pub mod attribute;
pub mod blame;
pub mod commits;
pub mod git;
pub mod list;

/// The session and entry behind a touch, as every answer names it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Who {
    /// The session's handle (`query::handle`), to copy into `pidx show`.
    pub session: String,
    pub session_id: Option<String>,
    pub name: Option<String>,
    #[serde(rename = "entryId")]
    pub entry_id: Option<String>,
    pub ts_ms: Option<i64>,
    pub kind: String,
    #[serde(skip)]
    pub file_id: i64,
    #[serde(skip)]
    pub session_path: String,
}

/// One successful edit or write of a file, oldest first, with its changes read back.
pub struct Step {
    pub who: Who,
    pub changes: Vec<Change>,
    /// pi's `firstChangedLine` from the edit's result (`details`), when it gave one.
    pub line: Option<usize>,
}

impl Step {
    pub fn replay(&self) -> attribute::Replay<'_> {
        attribute::Replay {
            changes: &self.changes,
            line: self.line,
        }
    }
}

/// The successful edits and writes of `path` (absolute), oldest first; fork copies once.
/// A result is joined by call id whenever it arrived: a call without one yet is left out.
const STEPS: &str = "
SELECT t.block, t.call_id, t.kind, t.ts_ms, e.offset, e.len, e.id, f.id, f.path,
       s.session_id, s.name, r.line
FROM touches t JOIN entries e ON e.rid = t.rid JOIN files f ON f.id = t.file_id
LEFT JOIN sessions s ON s.file_id = t.file_id
JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id AND r.is_error = 0
WHERE t.path = ?1 AND t.kind IN ('edit', 'write') AND e.dup = 0
ORDER BY t.ts_ms, t.rid, t.block";

/// The steps of `path`, their texts read from the session files (a line that no longer reads
/// as the call it was is skipped: the index is behind a rewritten file).
///
/// # Errors
/// Index errors only.
pub fn steps(conn: &Connection, path: &str) -> rusqlite::Result<Vec<Step>> {
    let mut stmt = conn.prepare_cached(STEPS)?;
    let rows = stmt.query_map(params![path], |r| {
        Ok((
            (
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<i64>>(11)?,
            ),
            (r.get::<_, i64>(4)?, r.get::<_, i64>(5)?),
            Who {
                session: String::new(),
                kind: r.get(2)?,
                ts_ms: r.get(3)?,
                entry_id: r.get(6)?,
                file_id: r.get(7)?,
                session_path: r.get(8)?,
                session_id: r.get(9)?,
                name: r.get(10)?,
            },
        ))
    })?;
    let mut files: HashMap<i64, Option<File>> = HashMap::new();
    let mut out = Vec::new();
    for row in rows {
        let ((block, call_id, first_line), (offset, len), who) = row?;
        let file = files
            .entry(who.file_id)
            .or_insert_with(|| File::open(&who.session_path).ok());
        let Some(line) = file
            .as_ref()
            .and_then(|f| jsonl::read_at(f, offset as u64, len as usize).ok())
        else {
            continue;
        };
        let changes = changes_in_line(&line, block, call_id.as_deref());
        if !changes.is_empty() {
            out.push(Step {
                who,
                changes,
                line: first_line.and_then(|l| usize::try_from(l).ok()),
            });
        }
    }
    name_sessions(conn, out.iter_mut().map(|s| &mut s.who))?;
    Ok(out)
}

/// Fills each `Who`'s handle.
///
/// # Errors
/// Index errors only.
pub fn name_sessions<'a>(
    conn: &Connection,
    whos: impl IntoIterator<Item = &'a mut Who>,
) -> rusqlite::Result<()> {
    let whos: Vec<&mut Who> = whos.into_iter().collect();
    let mut seen: HashMap<i64, (Option<String>, String)> = HashMap::new();
    for w in &whos {
        seen.entry(w.file_id)
            .or_insert_with(|| (w.session_id.clone(), w.session_path.clone()));
    }
    let handles = handle::handles(
        conn,
        seen.iter().map(|(&file_id, (id, path))| Session {
            file_id,
            id: id.as_deref(),
            path,
        }),
    )?;
    for w in whos {
        if let Some(h) = handles.get(&w.file_id) {
            w.session.clone_from(h);
        }
    }
    Ok(())
}

/// `path` made absolute against the process's cwd and folded lexically (`.` and `..`), as
/// touches store their paths.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}
