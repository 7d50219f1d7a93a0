//! Handles on the team server: the same shortest unique id prefixes, among the server's
//! sessions (of `--source` when given), so that what `list` prints names the session to `show`.

use std::collections::HashMap;

use postgres::Transaction;

use super::on::key;
use crate::pg::server_err;
use pidx_core::error::Result;
use pidx_core::query::handle::{named, Ids, Session};
use pidx_core::query::resolve::Resolved;

/// The handle of each session, by file id (the server's file ids are unique across sources).
///
/// # Errors
/// Server errors.
pub fn handles<'a>(
    tx: &mut Transaction,
    source: Option<&str>,
    sessions: impl IntoIterator<Item = Session<'a>>,
) -> Result<HashMap<i64, String>> {
    let rows = tx
        .query(
            "SELECT session_id FROM sessions
             WHERE session_id IS NOT NULL AND ($1::text IS NULL OR source = $1)",
            &[&source],
        )
        .map_err(server_err)?;
    // In byte order, as `str`'s (and SQLite's BINARY), whatever the server's collation.
    let mut ids: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    ids.sort_unstable();
    Ok(named(&Ids::All(ids), sessions.into_iter().collect(), &[])?)
}

/// The handle of one session.
///
/// # Errors
/// Server errors.
pub fn handle_of(tx: &mut Transaction, source: Option<&str>, s: &Resolved) -> Result<String> {
    let (from, fid) = key(s);
    let id: Option<String> = tx
        .query_one(
            "SELECT session_id FROM sessions WHERE source = $1 AND fid = $2",
            &[&from, &fid],
        )
        .map_err(server_err)?
        .get(0);
    let one = Session {
        file_id: fid,
        id: id.as_deref(),
        path: &s.path,
    };
    Ok(handles(tx, source, [one])?.remove(&fid).unwrap_or_default())
}

/// What a person reads for each session in `paths` (`stats --by session` rows): its handle
/// and its name or first message, as `query::handle::labels_by_path` gives them locally.
///
/// # Errors
/// Server errors.
pub fn labels_by_path<'a>(
    tx: &mut Transaction,
    source: Option<&str>,
    paths: impl IntoIterator<Item = &'a str>,
) -> Result<HashMap<String, String>> {
    let paths: Vec<&str> = paths.into_iter().collect();
    let rows = tx
        .query(
            "SELECT fid, session_id, substr(coalesce(name, first_message), 1, 1000), path
             FROM sessions WHERE path = ANY($1) AND ($2::text IS NULL OR source = $2)",
            &[&paths, &source],
        )
        .map_err(server_err)?;
    let found: Vec<(i64, Option<String>, Option<String>, String)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let handles = handles(
        tx,
        source,
        found.iter().map(|(fid, id, _, path)| Session {
            file_id: *fid,
            id: id.as_deref(),
            path,
        }),
    )?;
    Ok(found
        .into_iter()
        .map(|(fid, _, title, path)| {
            let title = title.as_deref().unwrap_or("(no messages)");
            (path, format!("{}  {title}", handles[&fid]))
        })
        .collect())
}
