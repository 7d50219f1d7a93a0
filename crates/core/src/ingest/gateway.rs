//! Gateway metadata on disk: each agent's `sessions.json` (see `pi::gateway`) is small, mutable
//! and rewritten whole, so it is read again whenever its `stat` changes and handed to the writer,
//! which keeps every (key, sessionId) pair it ever held (a transcript left behind by a reset
//! keeps its key). A missing or malformed file is a warning: the transcripts are indexed
//! regardless.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::pi::gateway::{agent_of, STORE};
use crate::store::writer::gateway::{self as gw, DirStat};

/// Brings the index's copy of `dir/sessions.json` up to date, in `tx` (the caller's write
/// transaction). Returns a warning when the file is missing, unreadable or malformed (only when
/// that state is new, so it is said once).
///
/// # Errors
/// Index errors only; a bad `sessions.json` is a warning.
pub fn sync_store(tx: &Connection, dir: &Path) -> Result<Option<String>> {
    let dir_s = dir.to_string_lossy();
    let path = dir.join(STORE);
    let meta = std::fs::metadata(&path).ok();
    let now = DirStat {
        size: meta.as_ref().map(|m| m.len() as i64),
        mtime_ms: meta
            .as_ref()
            .map(|m| m.mtime() * 1000 + m.mtime_nsec() / 1_000_000),
        ino: meta.as_ref().map(|m| m.ino() as i64),
    };
    if gw::dir_stat(tx, &dir_s)? == Some(now) {
        return Ok(None);
    }
    let read = match &meta {
        None => Err(format!("no {STORE}")),
        Some(_) => read_store(&path),
    };
    gw::save_dir(tx, &dir_s, &agent_of(dir), now, read.as_ref().err())?;
    let map = match read {
        Ok(map) => map,
        // A missing folder store is normal for a fresh agent: no warning for that.
        Err(_) if meta.is_none() => return Ok(None),
        // Keep what the last good read said (a gateway may be mid-rewrite).
        Err(why) => {
            return Ok(Some(format!(
                "{}: {why}; its transcripts are indexed without key metadata",
                path.display()
            )))
        }
    };
    let skipped = gw::save_keys(tx, &dir_s, &map)?;
    Ok((skipped > 0).then(|| {
        format!(
            "{}: {skipped} entr{} without a string sessionId skipped",
            path.display(),
            if skipped == 1 { "y" } else { "ies" }
        )
    }))
}

fn read_store(path: &Path) -> std::result::Result<Map<String, Value>, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("malformed: not a JSON object".into()),
        Err(e) => Err(format!("malformed: {e}")),
    }
}
