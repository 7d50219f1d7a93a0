//! Turns a SESSION argument into one indexed file, as pi's `--session` does (docs/pi-format.md
//! §8.4): a value with a path separator or ending in `.jsonl` is a path (a bare file name that
//! is no file here is an indexed file's name: the handle `query::handle` gives a copied id);
//! anything else is an exact session id, then a unique id prefix. Several matches are an error
//! listing at most ten candidates by handle, age and first message.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::error::{Error, Result};
use crate::pi::layout::absolute;
use crate::pi::picker;
use crate::query::{handle, Reader};
use crate::store::filter::{text, Where};
use crate::store::schema::{MODIFIED, TITLE};
use crate::store::Scope;

/// An indexed session file.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub file_id: i64,
    pub path: String,
    /// The machine it came from, on the team server (`None`: the local index).
    pub source: Option<String>,
}

/// Finds the session a user means, in the local index or on the team server.
///
/// # Errors
/// As [`resolve_session`]; server errors.
pub fn resolve(reader: &mut Reader, arg: &str) -> Result<Resolved> {
    match reader {
        Reader::Local { conn, scope, .. } => resolve_session(conn, scope, arg),
        Reader::Server(server) => server.resolve(arg),
    }
}

/// Finds the session a user means.
///
/// # Errors
/// `NotFound`; `Ambiguous` with the first candidates; `Invalid` for an empty argument.
pub fn resolve_session(conn: &Connection, scope: &Scope, arg: &str) -> Result<Resolved> {
    // A session named by its id or path is reached even when its key was deleted.
    let mut named = scope.clone();
    named.hide_deleted = false;
    let scope = &named;
    if arg.trim().is_empty() {
        return Err(Error::Invalid(
            "empty session id: give a session file, an id or a unique id prefix (`pidx list` shows them)"
                .into(),
        ));
    }
    let bare_name = arg.ends_with(".jsonl") && !arg.contains(['/', '\\']);
    let found = if bare_name && !Path::new(arg).exists() {
        candidates(conn, scope, "f.name = ?", arg)?
    } else if arg.contains(['/', '\\']) || arg.ends_with(".jsonl") {
        return by_path(conn, scope, arg);
    } else {
        let exact = candidates(conn, scope, "s.session_id = ?", arg)?;
        if exact.is_empty() {
            let pattern = format!(
                "{}%",
                arg.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            );
            candidates(conn, scope, "s.session_id LIKE ? ESCAPE '\\'", &pattern)?
        } else {
            exact
        }
    };
    match found.len() {
        0 => Err(Error::NotFound(arg.to_string())),
        1 => Ok(found.into_iter().next().expect("one candidate").resolved),
        n => Err(Error::Ambiguous {
            query: arg.to_string(),
            count: n,
            shown: describe(conn, &found[..n.min(SHOWN)])?,
        }),
    }
}

/// How many candidates an ambiguous argument lists.
const SHOWN: usize = 10;

/// A session an argument may mean.
struct Candidate {
    resolved: Resolved,
    id: Option<String>,
    title: String,
    modified_ms: i64,
}

fn candidates(conn: &Connection, scope: &Scope, cond: &str, arg: &str) -> Result<Vec<Candidate>> {
    let mut w = Where::default();
    w.and(cond, [text(arg)]);
    scope.restrict(&mut w);
    let sql = format!(
        "SELECT f.id, f.path, s.session_id, coalesce({TITLE}, '(no messages)'),
                {MODIFIED}
         FROM sessions s JOIN files f ON f.id = s.file_id
         WHERE {} ORDER BY 5 DESC, f.path",
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok(Candidate {
            resolved: Resolved {
                file_id: r.get(0)?,
                path: r.get(1)?,
                source: None,
            },
            id: r.get(2)?,
            title: r.get(3)?,
            modified_ms: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// One line per candidate: its handle, how long ago it was active, and what it is about.
fn describe(conn: &Connection, found: &[Candidate]) -> Result<Vec<String>> {
    let handles = handle::handles(
        conn,
        found.iter().map(|c| handle::Session {
            file_id: c.resolved.file_id,
            id: c.id.as_deref(),
            path: &c.resolved.path,
        }),
    )?;
    let now = chrono::Utc::now().timestamp_millis();
    Ok(found
        .iter()
        .map(|c| candidate_line(&handles[&c.resolved.file_id], c.modified_ms, &c.title, now))
        .collect())
}

/// A candidate as an ambiguous argument lists it: `who` (its handle; on the team server with
/// its source), how long ago it was active, and the start of what it is about.
pub fn candidate_line(who: &str, modified_ms: i64, title: &str, now_ms: i64) -> String {
    let title: String = title.chars().take(60).collect();
    format!("{who}  {}  {title}", picker::age(modified_ms, now_ms))
}

/// A path as given, or any indexed file that is the same file on disk.
fn by_path(conn: &Connection, scope: &Scope, arg: &str) -> Result<Resolved> {
    let abs = absolute(Path::new(arg));
    let lookup = |p: &str| -> Result<Option<Resolved>> {
        let mut w = Where::default();
        w.and("f.path = ?", [text(p)]);
        scope.restrict(&mut w);
        let sql = format!("SELECT f.id, f.path FROM files f WHERE {}", w.sql());
        Ok(conn
            .query_row(&sql, w.params(), |r| {
                Ok(Resolved {
                    file_id: r.get(0)?,
                    path: r.get(1)?,
                    source: None,
                })
            })
            .optional()?)
    };
    if let Some(r) = lookup(&abs.to_string_lossy())? {
        return Ok(r);
    }
    let Ok(real) = std::fs::canonicalize(&abs) else {
        return Err(Error::NotFound(arg.to_string()));
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut w = Where::default();
    w.and("f.name = ?", [text(name)]);
    scope.restrict(&mut w);
    let sql = format!("SELECT f.id, f.path FROM files f WHERE {}", w.sql());
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (file_id, path) = row?;
        if std::fs::canonicalize(&path).is_ok_and(|p| p == real) {
            return Ok(Resolved {
                file_id,
                path,
                source: None,
            });
        }
    }
    Err(Error::Invalid(format!(
        "{arg} is not an indexed session file (is it under one of the roots? see `pidx status`)"
    )))
}
