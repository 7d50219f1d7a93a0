//! `status`: where the index is and what it holds, per root, and who holds the writer lock.

use serde::Serialize;

use crate::error::Result;
use crate::ingest::discover::Root;
use crate::store::{Store, WriterLock};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RootStatus {
    pub path: String,
    pub layout: String,
    pub exists: bool,
    pub files: i64,
    pub listed_sessions: i64,
    pub entries: i64,
    pub bad_lines: i64,
    pub last_sync: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub db: String,
    pub db_bytes: u64,
    pub roots: Vec<RootStatus>,
    /// The process holding the writer lock (a `pidx watch`), if any.
    pub writer: Option<String>,
}

const PER_ROOT: &str = "
SELECT count(*), coalesce(sum(s.state = 1), 0), coalesce(sum(s.entry_count), 0),
       coalesce(sum(f.bad_lines), 0), max(f.synced_at)
FROM files f LEFT JOIN sessions s ON s.file_id = f.id
WHERE f.root_id = (SELECT id FROM roots WHERE path = ?1)";

/// Reports on the index for `roots`.
///
/// # Errors
/// Index errors only.
pub fn status(store: &Store, roots: &[Root]) -> Result<Status> {
    let mut out = Vec::new();
    for root in roots {
        let path = root.path.to_string_lossy().into_owned();
        let (files, listed, entries, bad, last): (i64, i64, i64, i64, Option<i64>) =
            store.conn.query_row(PER_ROOT, [&path], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
        out.push(RootStatus {
            exists: root.path.is_dir(),
            path,
            layout: root.layout.as_str().to_string(),
            files,
            listed_sessions: listed,
            entries,
            bad_lines: bad,
            last_sync: last.map(crate::js::iso),
        });
    }
    let db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| {
            let mut p = store.path.as_os_str().to_owned();
            p.push(s);
            std::fs::metadata(p).ok()
        })
        .map(|m| m.len())
        .sum();
    Ok(Status {
        db: store.path.to_string_lossy().into_owned(),
        db_bytes,
        roots: out,
        writer: WriterLock::holder(&store.path).map(|h| h.0),
    })
}
