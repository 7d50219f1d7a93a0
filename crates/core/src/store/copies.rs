//! Entries copied between sessions (forks and clones copy entries with their ids and
//! timestamps, docs/pi-format.md §1.4): analytics count each once. Of the copies of an entry, the one in the
//! session with the earliest header timestamp (then the smallest path) is canonical; the others
//! have `dup = 1`. Kept right whatever order files are ingested or deleted in.

use rusqlite::{params, Connection, OptionalExtension};

/// What orders sessions for canonical copies: (header time, or the end of time; path).
pub type FileKey = (i64, String);

/// The ordering key of `file_id`, whose header time is `created_ms`.
pub fn file_key(
    conn: &Connection,
    file_id: i64,
    created_ms: Option<i64>,
) -> rusqlite::Result<FileKey> {
    let path: String = conn.query_row("SELECT path FROM files WHERE id = ?1", [file_id], |r| {
        r.get(0)
    })?;
    Ok((created_ms.unwrap_or(i64::MAX), path))
}

/// Whether a new entry (`id`, `ts`) of the file keyed `key` is a copy of an entry of an earlier
/// session; when it is the earliest, the other copies are marked as copies instead.
pub fn is_copy(
    conn: &Connection,
    file_id: i64,
    key: &FileKey,
    id: Option<&str>,
    ts: Option<&str>,
) -> rusqlite::Result<bool> {
    let (Some(id), Some(ts)) = (id, ts) else {
        return Ok(false);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT e.rid, coalesce(s.created_ms, 9223372036854775807), f.path
         FROM entries e JOIN files f ON f.id = e.file_id
         LEFT JOIN sessions s ON s.file_id = e.file_id
         WHERE e.id = ?1 AND e.ts = ?2 AND e.file_id <> ?3",
    )?;
    let others: Vec<(i64, FileKey)> = stmt
        .query_map(params![id, ts, file_id], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?)))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if others.iter().any(|(_, k)| k < key) {
        return Ok(true);
    }
    let mut mark = conn.prepare_cached("UPDATE entries SET dup = 1 WHERE rid = ?1")?;
    for (rid, _) in others {
        mark.execute([rid])?;
    }
    Ok(false)
}

/// Before a file's entries go: each canonical entry that has copies elsewhere hands the role
/// to the earliest remaining copy.
pub fn promote_others(conn: &Connection, file_id: i64) -> rusqlite::Result<()> {
    let mut mine = conn.prepare_cached(
        "SELECT e.id, e.ts FROM entries e
         WHERE e.file_id = ?1 AND e.dup = 0 AND e.id IS NOT NULL AND e.ts IS NOT NULL
           AND EXISTS (SELECT 1 FROM entries o WHERE o.id = e.id AND o.ts = e.ts AND o.file_id <> ?1)",
    )?;
    let canonical: Vec<(String, String)> = mine
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut next = conn.prepare_cached(
        "SELECT e.rid FROM entries e JOIN files f ON f.id = e.file_id
         LEFT JOIN sessions s ON s.file_id = e.file_id
         WHERE e.id = ?1 AND e.ts = ?2 AND e.file_id <> ?3
         ORDER BY coalesce(s.created_ms, 9223372036854775807), f.path LIMIT 1",
    )?;
    let mut unmark = conn.prepare_cached("UPDATE entries SET dup = 0 WHERE rid = ?1")?;
    for (id, ts) in canonical {
        if let Some(rid) = next
            .query_row(params![id, ts, file_id], |r| r.get::<_, i64>(0))
            .optional()?
        {
            unmark.execute([rid])?;
        }
    }
    Ok(())
}
