//! Reading the sync state of indexed files: the narrow stamps the stat pass compares, and the
//! whole row of a file about to be read.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row};

use super::FileRow;

/// What the stat pass compares with a file on disk: is it the same file, of the same size and
/// time. The whole [`FileRow`] is read only for the files that changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    pub id: i64,
    pub dev: i64,
    pub ino: i64,
    pub size: i64,
    pub mtime_ms: i64,
    pub mtime_ns: i64,
}

/// The stamps of indexed files by path, hashed with foldhash: the paths are the index's own,
/// not an attacker's, and SipHash over 10,000 paths of ~100 bytes was ~4% of a no-op sync.
pub type Stamps = HashMap<String, Stamp, foldhash::fast::RandomState>;

/// The stamps of a root's indexed files by path, or of those in the folders `dirs` only (a
/// watcher's dirty folders, found through the `files_by_dir` index).
///
/// # Errors
/// SQLite errors.
pub fn stamps_of_root(
    conn: &Connection,
    root_id: i64,
    dirs: Option<&[String]>,
) -> rusqlite::Result<Stamps> {
    const COLUMNS: &str = "path, id, dev, ino, size, mtime_ms, mtime_ns";
    let stamp = |r: &Row| -> rusqlite::Result<(String, Stamp)> {
        Ok((
            r.get(0)?,
            Stamp {
                id: r.get(1)?,
                dev: r.get(2)?,
                ino: r.get(3)?,
                size: r.get(4)?,
                mtime_ms: r.get(5)?,
                mtime_ns: r.get(6)?,
            },
        ))
    };
    let Some(dirs) = dirs else {
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM files WHERE root_id = ?1"))?;
        // Rows into a vector first, then a map of the right size: growing the map rehashed it.
        let rows = stmt
            .query_map([root_id], stamp)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut out = Stamps::with_capacity_and_hasher(rows.len(), Default::default());
        out.extend(rows);
        return Ok(out);
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM files WHERE dir = ?2 AND root_id = ?1"
    ))?;
    let mut out = Stamps::default();
    for dir in dirs {
        for row in stmt.query_map(rusqlite::params![root_id, dir], stamp)? {
            let (path, s) = row?;
            out.insert(path, s);
        }
    }
    Ok(out)
}

const ROW: &str =
    "SELECT id, root_id, path, dir, name, dev, ino, size, mtime_ms, offset, lines, torn,
                          head_hash, tail_hash, bad_lines, mtime_ns
                   FROM files";

fn file_row(r: &Row) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        id: r.get(0)?,
        root_id: r.get(1)?,
        path: r.get(2)?,
        dir: r.get(3)?,
        name: r.get(4)?,
        dev: r.get(5)?,
        ino: r.get(6)?,
        size: r.get(7)?,
        mtime_ms: r.get(8)?,
        offset: r.get(9)?,
        lines: r.get(10)?,
        torn: r.get(11)?,
        head_hash: r.get(12)?,
        tail_hash: r.get(13)?,
        bad_lines: r.get(14)?,
        mtime_ns: r.get(15)?,
    })
}

/// The indexed row of the file `id`, if any.
///
/// # Errors
/// SQLite errors.
pub fn file_by_id(conn: &Connection, id: i64) -> rusqlite::Result<Option<FileRow>> {
    conn.prepare_cached(&format!("{ROW} WHERE id = ?1"))?
        .query_row([id], file_row)
        .optional()
}

/// The indexed row of the file at `path`, if any.
///
/// # Errors
/// SQLite errors.
pub fn file_by_path(conn: &Connection, path: &str) -> rusqlite::Result<Option<FileRow>> {
    conn.prepare_cached(&format!("{ROW} WHERE path = ?1"))?
        .query_row([path], file_row)
        .optional()
}
