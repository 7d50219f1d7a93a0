//! `pidx files`: the touches of matching files, newest first, and without a pattern the files
//! of a project that sessions changed most.

use std::fs::File;
use std::path::Path;

use rusqlite::{params_from_iter, Connection};
use serde::Serialize;

use super::{absolute, name_sessions, Who};
use crate::pi::touches::{changes_in_line, kept_ends, lines};
use crate::store::filter::{self, Where};
use crate::store::jsonl;

/// Which touches.
#[derive(Debug, Clone, Default)]
pub struct FilesOptions {
    /// A file, a folder (everything under it) or a glob (`*`, `?`, `[...]`), relative to the
    /// process's cwd or absolute.
    pub pattern: Option<String>,
    /// Only these kinds (`read`, `edit`, `write`, `list`, `search`, `bash`).
    pub kinds: Vec<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only sessions started in this folder or below.
    pub cwd: Option<String>,
    pub limit: usize,
    /// Read each edit's text back for a compact diff.
    pub diffs: bool,
}

/// One file one call touched.
#[derive(Debug, Clone, Serialize)]
pub struct TouchRow {
    #[serde(flatten)]
    pub by: Who,
    pub tool: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<String>,
    /// `ok`, `error`, or `None` while the call has no result.
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<i64>,
    /// Edits and writes: the changed lines, `-` taken out and `+` put in, a few of each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<String>,
}

/// Where a touch's call is in its transcript: (block, call id, line offset, line length).
type CallAt = (i64, Option<String>, i64, i64);

/// Touches with their entry, session and status; the caller's conditions follow `WHERE`.
const TOUCHES: &str = "
SELECT t.tool, t.kind, t.path, t.rel, t.ts_ms, t.added, t.removed, t.block, t.call_id,
       e.id, e.offset, e.len, f.id, f.path, s.session_id, s.name,
       CASE r.is_error WHEN 0 THEN 'ok' WHEN 1 THEN 'error' END
FROM touches t JOIN entries e ON e.rid = t.rid JOIN files f ON f.id = t.file_id
LEFT JOIN sessions s ON s.file_id = t.file_id
LEFT JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id
WHERE e.dup = 0 AND ";

/// The touches `opts` asks for, newest first.
///
/// # Errors
/// Index errors only.
pub fn touches(conn: &Connection, opts: &FilesOptions) -> rusqlite::Result<Vec<TouchRow>> {
    let mut w = Where::default();
    if let Some(p) = &opts.pattern {
        match_path(&mut w, p);
    }
    if !opts.kinds.is_empty() {
        w.and(
            format!("t.kind IN ({})", filter::placeholders(opts.kinds.len())),
            opts.kinds.iter().map(|k| filter::text(k.as_str())),
        );
    }
    restrict(&mut w, opts);
    let limit = w.limit(Some(opts.limit));
    let sql = format!(
        "{TOUCHES} {} ORDER BY t.ts_ms DESC, t.rid DESC {limit}",
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows: Vec<(TouchRow, CallAt)> = stmt
        .query_map(params_from_iter(w.values()), |r| {
            Ok((
                TouchRow {
                    tool: r.get(0)?,
                    path: r.get(2)?,
                    rel: r.get(3)?,
                    added: r.get(5)?,
                    removed: r.get(6)?,
                    status: r.get(16)?,
                    diff: Vec::new(),
                    by: Who {
                        session: String::new(),
                        kind: r.get(1)?,
                        ts_ms: r.get(4)?,
                        entry_id: r.get(9)?,
                        file_id: r.get(12)?,
                        session_path: r.get(13)?,
                        session_id: r.get(14)?,
                        name: r.get(15)?,
                    },
                },
                (r.get(7)?, r.get(8)?, r.get(10)?, r.get(11)?),
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if opts.diffs {
        for (row, (block, call_id, offset, len)) in &mut rows {
            if matches!(row.by.kind.as_str(), "edit" | "write") {
                row.diff = diff_of(&row.by.session_path, *offset, *len, *block, call_id);
            }
        }
    }
    let mut rows: Vec<TouchRow> = rows.into_iter().map(|(r, _)| r).collect();
    name_sessions(conn, rows.iter_mut().map(|r| &mut r.by))?;
    Ok(rows)
}

/// Files changed most, by successful edit and write calls.
#[derive(Debug, Clone, Serialize)]
pub struct TopFile {
    pub path: String,
    pub changes: i64,
    pub sessions: i64,
    pub last_ms: Option<i64>,
}

/// The files under `opts.cwd` (else everywhere) that successful edits and writes changed
/// most.
///
/// # Errors
/// Index errors only.
pub fn top_files(conn: &Connection, opts: &FilesOptions) -> rusqlite::Result<Vec<TopFile>> {
    let mut w = Where::default();
    if let Some(cwd) = &opts.cwd {
        under(&mut w, cwd);
    }
    let mut scoped = opts.clone();
    scoped.cwd = None;
    restrict(&mut w, &scoped);
    let limit = w.limit(Some(opts.limit));
    let sql = format!(
        "SELECT t.path, count(*), count(DISTINCT t.file_id), max(t.ts_ms)
         FROM touches t JOIN entries e ON e.rid = t.rid
         JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id
         WHERE e.dup = 0 AND r.is_error = 0 AND t.kind IN ('edit', 'write') AND {}
         GROUP BY t.path ORDER BY count(*) DESC, t.path {limit}",
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(w.values()), |r| {
        Ok(TopFile {
            path: r.get(0)?,
            changes: r.get(1)?,
            sessions: r.get(2)?,
            last_ms: r.get(3)?,
        })
    })?;
    rows.collect()
}

/// The session files (paths) whose successful edits or writes changed a file matching
/// `pattern` (a file, a folder or a glob, as `pidx files` takes it): the picker's `--file`.
///
/// # Errors
/// Index errors only.
pub fn sessions_changing(
    conn: &Connection,
    pattern: &str,
) -> rusqlite::Result<std::collections::HashSet<String>> {
    let mut w = Where::default();
    match_path(&mut w, pattern);
    let sql = format!(
        "SELECT DISTINCT f.path FROM touches t JOIN files f ON f.id = t.file_id
         JOIN touch_results r ON r.file_id = t.file_id AND r.call_id = t.call_id
         WHERE r.is_error = 0 AND t.kind IN ('edit', 'write') AND {}",
        w.sql()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(w.values()), |r| r.get(0))?;
    rows.collect()
}

fn restrict(w: &mut Where, opts: &FilesOptions) {
    if let Some(s) = opts.since_ms {
        w.and("t.ts_ms >= ?", [filter::int(s)]);
    }
    if let Some(u) = opts.until_ms {
        w.and("t.ts_ms < ?", [filter::int(u)]);
    }
    if let Some(cwd) = &opts.cwd {
        let dir = absolute(Path::new(cwd)).to_string_lossy().into_owned();
        w.and(
            "t.file_id IN (SELECT file_id FROM sessions WHERE cwd = ? OR cwd GLOB ?)",
            [
                filter::text(dir.as_str()),
                filter::text(format!("{}/*", glob_escape(&dir))),
            ],
        );
    }
}

/// A file, a folder or a glob.
fn match_path(w: &mut Where, pattern: &str) {
    let globbed = pattern.contains(['*', '?', '[']);
    let abs = absolute(Path::new(pattern)).to_string_lossy().into_owned();
    if globbed {
        w.and("t.path GLOB ?", [filter::text(abs)]);
    } else if pattern.ends_with('/') || Path::new(&abs).is_dir() {
        under(w, &abs);
    } else {
        w.and("t.path = ?", [filter::text(abs)]);
    }
}

/// `t.path` is `dir` or below it (a range the path index answers).
fn under(w: &mut Where, dir: &str) {
    let dir = absolute(Path::new(dir)).to_string_lossy().into_owned();
    let base = dir.trim_end_matches('/');
    w.and(
        "(t.path = ? OR (t.path >= ? AND t.path < ?))",
        [
            filter::text(base),
            filter::text(format!("{base}/")),
            filter::text(format!("{base}0")), // '0' follows '/'
        ],
    );
}

fn glob_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '*' | '?' | '[' => format!("[{c}]"),
            c => c.to_string(),
        })
        .collect()
}

/// Most lines a compact diff shows of each side of an edit.
const DIFF_LINES: usize = 3;

/// The compact diff of the call at `block` of a transcript line.
fn diff_of(path: &str, offset: i64, len: i64, block: i64, call_id: &Option<String>) -> Vec<String> {
    let Some(line) = File::open(path)
        .ok()
        .and_then(|f| jsonl::read_at(&f, offset as u64, len as usize).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in changes_in_line(&line, block, call_id.as_deref()) {
        let old = c.old.as_deref().map(lines).unwrap_or_default();
        let new = lines(&c.new);
        let (head, tail) = kept_ends(&old, &new);
        for (sign, side) in [("-", &old), ("+", &new)] {
            let changed = &side[head..side.len() - tail];
            for l in changed.iter().take(DIFF_LINES) {
                out.push(format!("{sign}{l}"));
            }
            if changed.len() > DIFF_LINES {
                out.push(format!("{sign}... {} more", changed.len() - DIFF_LINES));
            }
        }
    }
    out
}
