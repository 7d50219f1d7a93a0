//! Handles on the team server: the same shortest unique id prefixes, among the server's
//! sessions (of `--source` when given), so that what `list` prints names the session to `show`.

use std::collections::HashMap;

use postgres::Transaction;

use super::on::key;
use crate::pg::server_err;
use crate::pg::typed;
use pidx_core::error::Result;
use pidx_core::query::handle::{named, Around, Ids, Session};
use pidx_core::query::resolve::Resolved;

/// Up to this many sessions, [`handles`] looks their neighbours up without counting the
/// server's ids.
const LOOKUPS_UP_TO: usize = 64;

/// Ids read and sorted that cost about as much as one session's neighbours looked up, as
/// `query::handle`'s. On the benchmark server of 110,000 sessions (2026-11-29): 5,000 ids'
/// neighbours in 31 ms (6 µs each), every id read in 27 ms before it is sent and sorted.
const IDS_PER_LOOKUP: usize = 16;

/// The handle of each session, by file id (the server's file ids are unique across sources):
/// each id's neighbours looked up in byte order ([`AROUND`]), or, when that would cost more
/// (many sessions for the server's size), every id read and sorted: the same answers.
///
/// # Errors
/// Server errors.
pub fn handles<'a>(
    tx: &mut Transaction,
    source: Option<&str>,
    sessions: impl IntoIterator<Item = Session<'a>>,
) -> Result<HashMap<i64, String>> {
    let sessions: Vec<Session> = sessions.into_iter().collect();
    let read_all = sessions.len() > LOOKUPS_UP_TO && {
        let ids: i64 = tx.query_one(COUNT, &[&source]).map_err(server_err)?.get(0);
        sessions.len().saturating_mul(IDS_PER_LOOKUP) >= usize::try_from(ids).unwrap_or(0)
    };
    let ids = if read_all {
        Ids::All(every_id(tx, source)?)
    } else {
        Ids::Around(around(tx, source, &sessions)?)
    };
    Ok(named(&ids, sessions, &[])?)
}

/// The server's session ids (of `$1` when not NULL).
const COUNT: &str = "SELECT count(*) FROM sessions
                     WHERE session_id IS NOT NULL AND ($1::text IS NULL OR source = $1)";

/// Every session id on the server (of `source`), in byte order.
fn every_id(tx: &mut Transaction, source: Option<&str>) -> Result<Vec<String>> {
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
    Ok(ids)
}

/// For each id of `$1`: how many sessions have it (2 meaning two or more), the greatest id
/// below it and the least above it, in byte order (`COLLATE "C"`, as `str`'s and SQLite's
/// BINARY, whatever the server's collation), each from an index probe of
/// `sessions_by_id_bytes` (migration pg/0008), or `sessions_by_source_id_bytes` with
/// `{source}` as `AND s.source = $2`. Every session id read and sorted took 191 ms of `list
/// --all --limit 50` at 300,000 sessions; this is three probes a listed session.
const AROUND: &str = r#"SELECT i.id,
       (SELECT count(*) FROM (SELECT FROM sessions s
                              WHERE s.session_id COLLATE "C" = i.id {source} LIMIT 2) n),
       (SELECT s.session_id FROM sessions s WHERE s.session_id COLLATE "C" < i.id {source}
        ORDER BY s.session_id COLLATE "C" DESC LIMIT 1),
       (SELECT s.session_id FROM sessions s WHERE s.session_id COLLATE "C" > i.id {source}
        ORDER BY s.session_id COLLATE "C" LIMIT 1)
FROM unnest($1::text[]) AS i(id)"#;

/// The neighbours of each of `sessions`' ids among the server's sessions (of `source`).
fn around(
    tx: &mut Transaction,
    source: Option<&str>,
    sessions: &[Session],
) -> Result<HashMap<String, Around>> {
    let mut ids: Vec<&str> = sessions.iter().filter_map(|s| s.id).collect();
    ids.sort_unstable();
    ids.dedup();
    let rows = match source {
        Some(source) => typed::query(
            tx,
            &AROUND.replace("{source}", "AND s.source = $2"),
            &[&ids, &source],
        ),
        None => typed::query(tx, &AROUND.replace("{source}", ""), &[&ids]),
    }?;
    Ok(rows
        .iter()
        .map(|r| {
            let same: i64 = r.get(1);
            let around = (same <= 1).then(|| [r.get(2), r.get(3)]);
            (r.get(0), around)
        })
        .collect())
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
