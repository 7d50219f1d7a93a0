//! Huge texts (`pi::huge`) in `big_texts` (migration 0015): written in pieces, indexed from
//! there, and read back, so that neither SQLite nor pidx holds a second copy of one.

use std::io::{Read, Write};

use rusqlite::{params, Connection, OptionalExtension, MAIN_DB};

/// Writes the text made of `pieces` as row `id` of `big_texts`: a zero-filled value of the
/// right length first (the row's last column, which SQLite writes without a buffer), then the
/// pieces into it through incremental blob I/O.
///
/// # Errors
/// SQLite errors.
pub fn write(tx: &Connection, id: i64, file_id: i64, pieces: &[&str]) -> rusqlite::Result<()> {
    let len: usize = pieces.iter().map(|p| p.len()).sum();
    // The zero-filled value is written through the small cache too: through the writer's
    // 32 MB one, its pages filled it, and the cache stayed that full for the rest of the sync
    // (31 MB beside FTS5's copy and hash at the peak of a first sync of a 100 MB text line).
    with_small_cache(tx, || {
        tx.execute(
            "INSERT OR REPLACE INTO big_texts(id, file_id, body) VALUES (?1, ?2, zeroblob(?3))",
            params![id, file_id, len as i64],
        )?;
        let mut blob = tx.blob_open(MAIN_DB, c"big_texts", c"body", id, false)?;
        for piece in pieces {
            // A piece can be 100 MB: SQLite writes it page by page.
            for chunk in piece.as_bytes().chunks(1 << 20) {
                blob.write_all(chunk).map_err(|e| {
                    let why = format!("writing a huge text: {e}");
                    rusqlite::Error::ToSqlConversionFailure(why.into())
                })?;
            }
        }
        blob.close()
    })
}

/// Runs `f` with a 1 MB page cache, the usual one again after: the pages a huge text is
/// written through, then read back by FTS5, are spilled instead of kept.
fn with_small_cache<T>(
    tx: &Connection,
    f: impl FnOnce() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let cache: i64 = tx.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    tx.execute_batch("PRAGMA cache_size = -1024")?;
    let done = f();
    tx.execute_batch(&format!("PRAGMA cache_size = {cache}"))?;
    done
}

/// Indexes row `id` of `big_texts` as full-text row `rowid`. Not a cached statement: it would
/// keep the text it read.
///
/// # Errors
/// SQLite errors.
pub fn index(tx: &Connection, rowid: i64, id: i64) -> rusqlite::Result<()> {
    with_small_cache(tx, || {
        tx.execute(
            "INSERT INTO fts(rowid, body)
             SELECT ?1, CAST(body AS TEXT) FROM big_texts WHERE id = ?2",
            params![rowid, id],
        )?;
        // FTS5 keeps the text's terms (55 MB for 100 MB) until the transaction commits, after
        // the rest of the batch, a 100 MB line maybe: written out now, they are freed here.
        // 'flush' is in FTS5's source (fts5SpecialInsert) but not its documentation; the
        // second sync of tests/it/huge_lines.rs runs it: an SQLite without it fails there.
        tx.execute_batch("INSERT INTO fts(fts) VALUES ('flush')")
    })?;
    trim_heap();
    Ok(())
}

/// Hands the memory FTS5 freed after indexing a huge text back to the system. Its term hash
/// (55 MB for the 100 MB text of `benches/huge-rss.sh`, mostly chunks of a few KB) is freed
/// into the indexing thread's glibc arena, which glibc gives back only from its top, and what
/// was allocated after the hash stays above it: 49 MB of the builder's arena stayed resident
/// while the next line, a 100 MB image, was read (a first sync's second peak, as high as the
/// first). Done once a huge text, whose indexing takes seconds.
pub(crate) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: returns free heap pages to the system; no pointer is touched.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Appends the entry text that `big_texts` keeps for entry `rid`, if any, to `out` (read through
/// incremental blob I/O: no copy of it in SQLite); returns whether there was one.
///
/// # Errors
/// SQLite errors.
pub fn append_entry_text(conn: &Connection, rid: i64, out: &mut Vec<u8>) -> rusqlite::Result<bool> {
    let mut blob = match conn.blob_open(MAIN_DB, c"big_texts", c"body", -rid, true) {
        Ok(blob) => blob,
        // SQLITE_ERROR: no such row (damage and the like keep their own codes).
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::Unknown => {
            return Ok(false)
        }
        Err(e) => return Err(e),
    };
    out.reserve(blob.len());
    blob.read_to_end(out).map_err(|e| {
        rusqlite::Error::ToSqlConversionFailure(format!("reading a huge text: {e}").into())
    })?;
    Ok(true)
}

/// The whole first message of file `file_id` when it is huge: the text of its entry at `line`.
///
/// # Errors
/// SQLite errors.
pub fn first_message(
    conn: &Connection,
    file_id: i64,
    line: i64,
) -> rusqlite::Result<Option<String>> {
    let rid: Option<i64> = conn
        .prepare_cached("SELECT rid FROM entries WHERE file_id = ?1 AND line = ?2")?
        .query_row(params![file_id, line], |r| r.get(0))
        .optional()?;
    let mut out = Vec::new();
    match rid {
        Some(rid) if append_entry_text(conn, rid, &mut out)? => Ok(String::from_utf8(out).ok()),
        _ => Ok(None),
    }
}
