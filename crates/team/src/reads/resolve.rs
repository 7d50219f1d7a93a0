//! SESSION arguments on the team server: a path, a file name, a full session id or a unique
//! id prefix, within `--source` when given.

use postgres::Transaction;

use super::handle;
use super::on::{self as server, MODIFIED};
use crate::pg::typed;
use pidx_core::error::{Error, Result};
use pidx_core::query::handle::Session;
use pidx_core::query::resolve::{candidate_line, Resolved};
use pidx_core::store::filter::text;
use pidx_core::store::schema::TITLE;

/// A session on the server, as a row names it.
struct Candidate {
    source: String,
    fid: i64,
    path: String,
    id: Option<String>,
    title: String,
    modified_ms: i64,
}

/// How many candidates an ambiguous argument lists (as locally).
const SHOWN: usize = 10;

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
        "SELECT s.source, s.fid, s.path, s.path = ${n} OR s.file_name = ${n} OR s.session_id = ${n} AS exact,
                s.session_id, coalesce({TITLE}, '(no messages)'), {MODIFIED}
         FROM sessions s WHERE {} ORDER BY exact DESC, 7 DESC, s.source, s.path LIMIT {}",
        c.pg_sql(),
        SHOWN + 1,
        n = c.values().len() + 1
    );
    let arg_owned = arg.to_string();
    let rows = typed::query(tx, &sql, &typed::where_params(&c, &[&arg_owned]))?;
    let found: Vec<(Candidate, bool)> = rows
        .iter()
        .map(|r| {
            (
                Candidate {
                    source: r.get(0),
                    fid: r.get(1),
                    path: r.get(2),
                    id: r.get(4),
                    title: r.get(5),
                    modified_ms: r.get(6),
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
            shown: describe(tx, source, &many[..many.len().min(SHOWN)])?,
        }),
    }
}

/// One line per candidate, as the local index writes it (its handle, how long ago it was
/// active, what it is about) with the machine it came from.
fn describe(
    tx: &mut Transaction,
    source: Option<&str>,
    found: &[&Candidate],
) -> Result<Vec<String>> {
    let handles = handle::handles(
        tx,
        source,
        found.iter().map(|c| Session {
            file_id: c.fid,
            id: c.id.as_deref(),
            path: &c.path,
        }),
    )?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Ok(found
        .iter()
        .map(|c| {
            let handle = handles.get(&c.fid).map_or("", String::as_str);
            candidate_line(
                &format!("{handle}  {}", c.source),
                c.modified_ms,
                &c.title,
                now,
            )
        })
        .collect())
}
