//! OpenClaw's SQLite session store (OpenClaw 2026.8 and later,
//! `agents/<agentId>/agent/openclaw-agent.sqlite`), read-only: its schema version, each
//! session window with its key and chat metadata, and each session's pi entries in `seq` order
//! (zstd-compressed rows decompressed, cold archives read). Pure reading: what to do with the
//! entries is the caller's. docs/gateways.md says which facts of the schema this relies on.

mod cold;
pub mod mirror;
pub mod stores;
mod title;

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::error::{Error, Result};

/// The file name of an agent's store, inside `agents/<agentId>/agent/`.
pub const DB_NAME: &str = "openclaw-agent.sqlite";

/// The agent-store schema versions this reader was written and tested against (OpenClaw
/// 2026.9.6 writes 23 and refuses to run on any other).
pub const SUPPORTED: std::ops::RangeInclusive<i64> = 23..=23;

/// One event body may not exceed this many bytes (OpenClaw's own CHECK constraint).
const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// What the store says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreInfo {
    pub schema_version: i64,
    /// The OpenClaw version that created or last migrated the store (`schema_meta.app_version`).
    pub app_version: Option<String>,
    pub agent_id: Option<String>,
}

/// A session's cold archive (`session_transcript_cold_archives`): its events left
/// `transcript_events` for a zstd file under `agents/<id>/sessions/cold/` or a blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cold {
    pub generation: String,
    pub archive_name: String,
    pub storage: String,
    pub archive_bytes: i64,
    pub last_seq: i64,
}

/// One session window (`session_windows`), with its key's node (`session_nodes`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    pub session_id: String,
    pub session_key: String,
    /// Whether the key's node names this window as its current session.
    pub current: bool,
    pub previous_session_id: Option<String>,
    pub reason: Option<String>,
    pub chat_type: Option<String>,
    pub channel: Option<String>,
    pub account_id: Option<String>,
    pub model_provider: Option<String>,
    pub model: Option<String>,
    pub display_name: Option<String>,
    pub label: Option<String>,
    pub parent_session_key: Option<String>,
    pub fork_source_session_key: Option<String>,
    pub fork_source_session_id: Option<String>,
    /// The key's store entry (`session_nodes.entry_json`), as OpenClaw wrote it.
    pub entry_json: Option<String>,
    /// Whether OpenClaw lists the key (`listSessionEntriesReadOnly`, what `openclaw sessions`
    /// shows): false for a deleted key's tombstone and any entry OpenClaw's listing drops.
    pub listed: bool,
    /// The entry's `subject` (a group's or channel's title).
    pub subject: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The rewrite generation (`transcript_rewrite_watermarks`): it changes whenever OpenClaw
    /// rewrites the transcript instead of appending to it.
    pub generation: Option<String>,
    /// The highest `seq` in `transcript_events` (none while the session is cold or empty).
    pub hot_last_seq: Option<i64>,
    pub cold: Option<Cold>,
}

impl Window {
    /// The last `seq` of the transcript, wherever its events are.
    pub fn last_seq(&self) -> Option<i64> {
        match (&self.cold, self.hot_last_seq) {
            (_, Some(hot)) => Some(hot),
            (Some(c), None) => Some(c.last_seq),
            (None, None) => None,
        }
    }
}

/// One transcript row: a pi entry (the header at `seq` 0) as the JSON text OpenClaw stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub seq: i64,
    pub json: String,
    pub created_at: i64,
}

/// How the database was opened, which decides what is checked when reading ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `-wal` and `-shm` exist (a gateway has the store open): an ordinary read-only
    /// connection reads through them and creates nothing.
    Shared,
    /// No `-wal`/`-shm` pair (the store is closed, or its writer crashed): the file is read as
    /// immutable so SQLite creates nothing beside it; the read is thrown away if the store or
    /// its sidecars changed meanwhile.
    Immutable,
}

/// `(size, mtime ns, inode)` of a file, to notice a change under an immutable read.
type Stamp = (u64, i64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.ino()))
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// An open store. All reads of one `Reader` see one snapshot (one read transaction).
pub struct Reader {
    conn: Connection,
    path: PathBuf,
    mode: Mode,
    before: Seen,
}

/// What was beside the store when it was opened: the store's, `-wal`'s and `-shm`'s stamps.
type Seen = [Option<Stamp>; 3];

fn seen(path: &Path) -> Seen {
    [
        stamp(path),
        stamp(&sidecar(path, "-wal")),
        stamp(&sidecar(path, "-shm")),
    ]
}

impl Reader {
    /// Opens the store at `path` read-only, never taking a write lock, creating no file beside
    /// it and never blocking its writer, and checks its schema version.
    ///
    /// # Errors
    /// `Io` when it cannot be opened, `Invalid` for a schema this pidx does not know (one line
    /// naming it).
    pub fn open(path: &Path) -> Result<Reader> {
        let wal = sidecar(path, "-wal").exists();
        let shm = sidecar(path, "-shm").exists();
        let mode = if wal && shm {
            Mode::Shared
        } else {
            Mode::Immutable
        };
        let before = seen(path);
        let uri = file_uri(path, mode);
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| open_error(path, e))?;
        conn.busy_timeout(std::time::Duration::from_millis(2000))
            .map_err(|e| open_error(path, e))?;
        crate::store::snapshot::begin_read(&conn).map_err(|e| open_error(path, e))?;
        let reader = Reader {
            conn,
            path: path.to_path_buf(),
            mode,
            before,
        };
        reader.info()?;
        Ok(reader)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store's schema version and the OpenClaw version that wrote it.
    ///
    /// # Errors
    /// `Invalid` for a file that is not an OpenClaw agent store or has an unsupported schema.
    pub fn info(&self) -> Result<StoreInfo> {
        // A damaged store's values (its role, its version text) reach the message: one line,
        // no control characters, whatever the file holds.
        let bad = |why: String| {
            Error::Invalid(crate::term::one_line(&format!(
                "{}: {why}",
                self.path.display()
            )))
        };
        let meta = self
            .conn
            .query_row(
                "SELECT schema_version, app_version, agent_id, role FROM schema_meta
                 WHERE meta_key = 'primary'",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| bad(format!("not an OpenClaw agent store ({e})")))?;
        let Some((version, app_version, agent_id, role)) = meta else {
            return Err(bad(
                "not an OpenClaw agent store (no schema_meta row)".into()
            ));
        };
        if role != "agent" {
            let role = crate::term::one_line_upto(&role, 40);
            return Err(bad(format!("an OpenClaw {role} store, not an agent store")));
        }
        if !SUPPORTED.contains(&version) {
            let by = crate::term::one_line_upto(
                app_version.as_deref().unwrap_or("an unknown OpenClaw"),
                60,
            );
            let hint = if version > *SUPPORTED.end() {
                "a newer pidx may read it"
            } else {
                "`openclaw doctor --fix` migrates it"
            };
            return Err(bad(format!(
                "OpenClaw agent store schema {version} (written by {by}) is not supported; pidx reads schema {}-{}; {hint}",
                SUPPORTED.start(),
                SUPPORTED.end()
            )));
        }
        Ok(StoreInfo {
            schema_version: version,
            app_version,
            agent_id,
        })
    }
}

/// `file:` URI for `path` (percent-encoding what URIs reserve).
fn file_uri(path: &Path, mode: Mode) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match *b {
            b'%' | b'?' | b'#' | b'&' | b'=' | b'+' | b' ' | 0..=0x1f | 0x7f.. => {
                uri.push_str(&format!("%{b:02X}"))
            }
            _ => uri.push(*b as char),
        }
    }
    uri.push_str(match mode {
        Mode::Shared => "?mode=ro",
        Mode::Immutable => "?mode=ro&immutable=1",
    });
    uri
}

fn open_error(path: &Path, e: rusqlite::Error) -> Error {
    Error::Invalid(format!("{}: cannot open read-only: {e}", path.display()))
}

/// Every session window of the store, with its key's node, generation and cold archive.
/// Windows and nodes come from one snapshot.
const WINDOWS_SQL: &str = "
SELECT w.session_id, w.session_key, n.current_session_id IS w.session_id,
       w.previous_session_id, w.reason, w.chat_type, w.channel, w.account_id,
       w.model_provider, w.model, coalesce(w.display_name, n.display_name), n.label,
       coalesce(w.parent_session_key, n.parent_session_key),
       n.fork_source_session_key, n.fork_source_session_id, n.entry_json,
       w.created_at, w.updated_at, g.generation,
       (SELECT max(seq) FROM transcript_events AS t WHERE t.session_id = w.session_id),
       n.updated_at
FROM session_windows AS w
LEFT JOIN session_nodes AS n ON n.session_key = w.session_key
LEFT JOIN transcript_rewrite_watermarks AS g ON g.session_id = w.session_id
ORDER BY w.created_at, w.session_id";

const COLD_SQL: &str = "
SELECT session_id, generation, archive_name, storage, archive_bytes, last_seq
FROM session_transcript_cold_archives";

/// A session's hot rows after a given `seq` (the `(session_id, seq)` primary key serves it).
const EVENTS_SQL: &str = "
SELECT seq, event_json, event_zstd, event_utf8_bytes, created_at FROM transcript_events
WHERE session_id = ?1 AND seq > ?2 ORDER BY seq";

impl Reader {
    /// Every session window.
    ///
    /// # Errors
    /// `Invalid` when a table pidx relies on is missing or unreadable.
    pub fn windows(&self) -> Result<Vec<Window>> {
        let mut cold = self.cold_archives()?;
        let mut stmt = self.conn.prepare(WINDOWS_SQL).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let window = Window {
                    session_id: r.get(0)?,
                    session_key: r.get(1)?,
                    current: r.get(2)?,
                    previous_session_id: r.get(3)?,
                    reason: r.get(4)?,
                    chat_type: r.get(5)?,
                    channel: r.get(6)?,
                    account_id: r.get(7)?,
                    model_provider: r.get(8)?,
                    model: r.get(9)?,
                    display_name: r.get(10)?,
                    label: r.get(11)?,
                    parent_session_key: r.get(12)?,
                    fork_source_session_key: r.get(13)?,
                    fork_source_session_id: r.get(14)?,
                    entry_json: r.get(15)?,
                    created_at: r.get(16)?,
                    updated_at: r.get(17)?,
                    generation: r.get(18)?,
                    hot_last_seq: r.get(19)?,
                    cold: None,
                    listed: false,
                    subject: None,
                };
                Ok((window, r.get::<_, Option<i64>>(20)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (mut w, node_updated_at) = row.map_err(|e| self.err(e))?;
            let entry = w
                .entry_json
                .as_deref()
                .and_then(|j| listed_entry(&w.session_key, j))
                .filter(|e| {
                    Some(e.updated_at) == node_updated_at.map(|u| u as f64)
                        && !is_internal_key(&w.session_key)
                });
            w.listed = entry.is_some();
            // A listed key's chat facts are its entry's, as OpenClaw lists them, and its name
            // the one OpenClaw's gateway shows (every window of the key, current or earlier).
            if let Some(e) = entry {
                w.subject = e.subject;
                w.display_name = e.display_name;
                w.chat_type = e.chat_type.or(w.chat_type);
            }
            w.cold = cold.remove(&w.session_id);
            out.push(w);
        }
        Ok(out)
    }

    /// Cold archives by session id (none when the table does not exist: stores migrated from
    /// before cold storage lack it, and OpenClaw allows that).
    fn cold_archives(&self) -> Result<HashMap<String, Cold>> {
        let exists: bool = self
            .conn
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table'
                 AND name = 'session_transcript_cold_archives'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        if !exists {
            return Ok(HashMap::new());
        }
        let mut stmt = self.conn.prepare(COLD_SQL).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Cold {
                        generation: r.get(1)?,
                        archive_name: r.get(2)?,
                        storage: r.get(3)?,
                        archive_bytes: r.get(4)?,
                        last_seq: r.get(5)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Calls `f` with each event of `window` whose `seq` is above `after` (all of them for
    /// `None`), in `seq` order: from the hot table, or from the cold archive when the session
    /// is cold. Memory stays bounded by one event for hot rows.
    ///
    /// # Errors
    /// `Invalid` for an event that cannot be decoded or an archive that cannot be read; `f`'s
    /// own errors.
    pub fn events(
        &self,
        window: &Window,
        after: Option<i64>,
        mut f: impl FnMut(Event) -> Result<()>,
    ) -> Result<()> {
        let after = after.unwrap_or(-1);
        if window.hot_last_seq.is_none() {
            if let Some(cold) = &window.cold {
                for e in self.cold_events(&window.session_id, cold)? {
                    if e.seq > after {
                        f(e)?;
                    }
                }
                return Ok(());
            }
        }
        let mut stmt = self
            .conn
            .prepare_cached(EVENTS_SQL)
            .map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(params![window.session_id, after])
            .map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let seq: i64 = r.get(0).map_err(|e| self.err(e))?;
            let text: Option<String> = r.get(1).map_err(|e| self.err(e))?;
            let json = match text {
                Some(t) => t,
                None => {
                    let blob: Option<Vec<u8>> = r.get(2).map_err(|e| self.err(e))?;
                    let len: Option<i64> = r.get(3).map_err(|e| self.err(e))?;
                    decode_event(blob.as_deref(), len).map_err(|why| {
                        self.bad(&format!("session {} seq {seq}: {why}", window.session_id))
                    })?
                }
            };
            let created_at = r.get(4).map_err(|e| self.err(e))?;
            f(Event {
                seq,
                json,
                created_at,
            })?;
        }
        Ok(())
    }

    /// Ends the read. For an immutable read, says whether it still holds: the store, `-wal`
    /// and `-shm` are as they were when it was opened (else the caller reads again).
    pub fn finish(self) -> bool {
        let _ = crate::store::snapshot::end_read(&self.conn);
        match self.mode {
            Mode::Shared => true,
            Mode::Immutable => seen(&self.path) == self.before,
        }
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        self.bad(&e.to_string())
    }

    fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("{}: {why}", self.path.display()))
    }
}

/// What OpenClaw's listing reads of a key's entry.
struct Listed {
    updated_at: f64,
    subject: Option<String>,
    /// The name OpenClaw shows for the key (`title::shown_name`).
    display_name: Option<String>,
    chat_type: Option<String>,
}

/// OpenClaw's `parseSqliteSessionEntryRecord` as its listing calls it: an entry is listed when it
/// is a JSON object with a string `sessionId` and a number `updatedAt` (which must equal the
/// node's `updated_at`, checked by the caller). A deleted key's tombstone (`{}`) is not.
fn listed_entry(key: &str, json: &str) -> Option<Listed> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let o = v.as_object()?;
    o.get("sessionId")?.as_str()?;
    let text = |k: &str| o.get(k).and_then(|s| s.as_str()).map(str::to_string);
    Some(Listed {
        updated_at: o.get("updatedAt")?.as_f64()?,
        subject: text("subject"),
        display_name: title::shown_name(key, o),
        chat_type: text("chatType"),
    })
}

/// OpenClaw's `isInternalSessionEffectsKey`: `agent:<id>:internal-session-effects:...` keys hold
/// suppressed run effects and are never listed.
fn is_internal_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("agent:") else {
        return false;
    };
    rest.split_once(':')
        .is_some_and(|(_, tail)| tail.starts_with("internal-session-effects:"))
}

/// A compressed row: `event_zstd` holds exactly `event_utf8_bytes` bytes of UTF-8 once
/// decompressed (OpenClaw's CHECK constraints bound both by 4 MiB).
fn decode_event(blob: Option<&[u8]>, len: Option<i64>) -> Result<String, String> {
    let (Some(blob), Some(len)) = (blob, len) else {
        return Err("neither event_json nor event_zstd with its size".into());
    };
    let len = usize::try_from(len).map_err(|_| format!("bad event_utf8_bytes {len}"))?;
    if len == 0 || len > MAX_EVENT_BYTES {
        return Err(format!("event_utf8_bytes {len} out of bounds"));
    }
    let bytes = zstd::bulk::decompress(blob, len).map_err(|e| format!("zstd: {e}"))?;
    if bytes.len() != len {
        return Err(format!(
            "decompressed to {} bytes, event_utf8_bytes says {len}",
            bytes.len()
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_listed_with_a_string_session_id_and_a_number_updated_at() {
        let listed =
            |j: &str| listed_entry("agent:main:main", j).map(|e| (e.updated_at, e.subject));
        assert_eq!(
            listed(r##"{"sessionId":"s","updatedAt":5,"subject":"#help"}"##),
            Some((5.0, Some("#help".into())))
        );
        // a deleted key's tombstone, and entries OpenClaw's listing drops
        assert_eq!(listed("{}"), None);
        assert_eq!(listed(r#"{"sessionId":"s","updatedAt":"5"}"#), None);
        assert_eq!(listed(r#"{"sessionId":1,"updatedAt":5}"#), None);
        assert_eq!(listed("[1]"), None);
        assert_eq!(listed("not json"), None);
    }

    #[test]
    fn internal_effects_keys_are_never_listed() {
        assert!(is_internal_key("agent:main:internal-session-effects:run-1"));
        assert!(!is_internal_key("agent:main:main"));
        assert!(!is_internal_key("internal-session-effects:x"));
    }
}
