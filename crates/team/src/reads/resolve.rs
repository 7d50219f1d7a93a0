//! SESSION arguments on the team server: a path, a file name, a full session id or a unique
//! id prefix, within `--source` when given.

use postgres::Transaction;

use super::on as server;
use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::query::resolve::Resolved;
use pidx_core::store::filter::text;

/// A session on the server: (source, fid), its key there.
///
/// # Panics
/// For a session of the local index (no source): a server query was given a local session.
pub fn key(s: &Resolved) -> (&str, i64) {
    let source = s
        .source
        .as_deref()
        .expect("a session on the team server has a source");
    (source, s.file_id)
}

/// A session on the server, as a row names it.
struct Candidate {
    source: String,
    fid: i64,
    path: String,
}

/// Finds the session SESSION means: a path, a file name (the handle of a copied id), a full
/// session id or a unique id prefix.
///
/// # Errors
/// `NotFound`, `Ambiguous` (naming source and path), server errors.
pub fn resolve(tx: &mut Transaction, source: Option<&str>, arg: &str) -> Result<Resolved> {
    if arg.trim().is_empty() {
        return Err(Error::Invalid(
            "empty session id: give a session file, an id or a unique id prefix".into(),
        ));
    }
    let mut c = server::source(source);
    let prefix = format!(
        "{}%",
        arg.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    c.and(
        "(s.path = ? OR s.file_name = ? OR s.session_id = ? OR s.session_id LIKE ?)",
        [text(arg), text(arg), text(arg), text(prefix)],
    );
    let sql = format!(
        "SELECT s.source, s.fid, s.path, s.path = ${n} OR s.file_name = ${n} OR s.session_id = ${n} AS exact
         FROM sessions s WHERE {} ORDER BY exact DESC, s.source, s.path LIMIT 11",
        c.pg_sql(),
        n = c.values().len() + 1
    );
    let mut params = server::params(&c);
    let arg_owned = arg.to_string();
    params.push(&arg_owned);
    let rows = tx.query(&sql, &params).map_err(server_err)?;
    let found: Vec<(Candidate, bool)> = rows
        .iter()
        .map(|r| {
            (
                Candidate {
                    source: r.get(0),
                    fid: r.get(1),
                    path: r.get(2),
                },
                r.get(3),
            )
        })
        .collect();
    let exact: Vec<&Candidate> = found.iter().filter(|f| f.1).map(|f| &f.0).collect();
    let candidates: Vec<&Candidate> = if exact.is_empty() {
        found.iter().map(|f| &f.0).collect()
    } else {
        exact
    };
    match candidates.as_slice() {
        [] => Err(Error::NotFound(arg.to_string())),
        [one] => Ok(Resolved {
            file_id: one.fid,
            path: one.path.clone(),
            source: Some(one.source.clone()),
        }),
        many => Err(Error::Ambiguous {
            query: arg.to_string(),
            count: many.len(),
            shown: many
                .iter()
                .map(|f| format!("{}  {}", f.source, f.path))
                .collect(),
        }),
    }
}
