//! Files a sync skipped and why (`migrations/0030_skipped_files.sql`): noted when a file is
//! rolled back alone, cleared when it is indexed whole or gone, read by `query::status`.

use rusqlite::{params, Connection};

/// Notes that `path` was skipped for `reason` (replacing an older reason).
///
/// # Errors
/// SQLite errors.
pub fn note(conn: &Connection, path: &str, reason: &str, now_ms: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO skipped_files(path, reason, at_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT(path) DO UPDATE SET reason = excluded.reason, at_ms = excluded.at_ms",
    )?
    .execute(params![path, reason, now_ms])?;
    Ok(())
}

/// Forgets that `path` was skipped (it is indexed now).
///
/// # Errors
/// SQLite errors.
pub fn clear(conn: &Connection, path: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM skipped_files WHERE path = ?1")?
        .execute([path])?;
    Ok(())
}

/// Forgets the skipped files that are no longer on disk.
///
/// # Errors
/// SQLite errors.
pub fn clear_gone(conn: &Connection) -> rusqlite::Result<()> {
    let gone: Vec<String> = conn
        .prepare("SELECT path FROM skipped_files")?
        .query_map([], |r| r.get::<_, String>(0))?
        .filter_map(|p| p.ok())
        .filter(|p| !std::path::Path::new(p).exists())
        .collect();
    for path in gone {
        clear(conn, &path)?;
    }
    Ok(())
}

/// Whether any file is noted as skipped.
///
/// # Errors
/// SQLite errors.
pub fn any(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM skipped_files)", [], |r| {
        r.get(0)
    })
}
