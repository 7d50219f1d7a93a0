//! Turns a SESSION argument into one indexed file, as pi's `--session` does (docs/pi-format.md §8.4): a
//! value with a path separator or ending in `.jsonl` is a path; anything else is an exact
//! session id, then a unique id prefix. Several matches are an error listing the candidates.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::error::{Error, Result};
use crate::pi::layout::absolute;
use crate::query::filter::{text, Where};
use crate::query::Scope;

/// An indexed session file.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub file_id: i64,
    pub path: String,
}

/// Finds the session a user means.
///
/// # Errors
/// `NotFound`, or `Ambiguous` with every candidate path.
pub fn resolve_session(conn: &Connection, scope: &Scope, arg: &str) -> Result<Resolved> {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        return by_path(conn, scope, arg);
    }
    let exact = candidates(conn, scope, "s.session_id = ?", arg)?;
    let found = if exact.is_empty() {
        let pattern = format!(
            "{}%",
            arg.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        candidates(conn, scope, "s.session_id LIKE ? ESCAPE '\\'", &pattern)?
    } else {
        exact
    };
    match found.len() {
        0 => Err(Error::NotFound(arg.to_string())),
        1 => Ok(found.into_iter().next().expect("one candidate")),
        _ => Err(Error::Ambiguous {
            query: arg.to_string(),
            candidates: found.into_iter().map(|r| r.path).collect(),
        }),
    }
}

fn candidates(conn: &Connection, scope: &Scope, cond: &str, arg: &str) -> Result<Vec<Resolved>> {
    let mut w = Where::default();
    w.and(cond, [text(arg)]);
    scope.restrict(&mut w);
    let sql = format!(
        "SELECT f.id, f.path FROM sessions s JOIN files f ON f.id = s.file_id
         WHERE {} ORDER BY f.path",
        w.sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok(Resolved {
            file_id: r.get(0)?,
            path: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
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
            return Ok(Resolved { file_id, path });
        }
    }
    Err(Error::Invalid(format!(
        "{arg} is not an indexed session file (is it under one of the roots? see `pidx status`)"
    )))
}
