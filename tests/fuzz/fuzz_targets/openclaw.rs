//! The OpenClaw store reader and its JSONL mirror over fuzzed rows and archives: a real store
//! written by OpenClaw's own code (tests/fixtures/openclaw) has its rows changed by the input
//! (event JSON, compressed events with any size, window and key fields, entry JSON, session
//! ids, cold archives in blobs with any bytes or lines, schema facts, deleted rows); then the
//! mirror pass ends in copies or one-line `Invalid`/`Io` errors, never a panic; it writes
//! nothing outside its folder and nothing beside the store; and a second pass over the same
//! store changes nothing.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pidx::error::Error;
use pidx::ingest::openclaw::mirror;
use rusqlite::types::Value as Sql;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn below(&mut self, n: usize) -> usize {
        self.byte().map_or(0, |b| b as usize % n.max(1))
    }
    fn take(&mut self) -> Vec<u8> {
        let n = self.below(64).min(self.0.len());
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        s.to_vec()
    }
    fn text(&mut self) -> String {
        String::from_utf8_lossy(&self.take()).into_owned()
    }
    fn int(&mut self) -> i64 {
        match self.below(6) {
            0 => -1,
            1 => 0,
            2 => i64::MAX,
            3 => i64::MIN,
            _ => self.below(100) as i64,
        }
    }
    /// A value for a column: mostly of its type, sometimes NULL.
    fn value(&mut self, text: bool) -> Sql {
        match (self.below(5), text) {
            (0, _) => Sql::Null,
            (_, true) => Sql::Text(self.text()),
            (_, false) => Sql::Integer(self.int()),
        }
    }
}

struct Template {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    store: Vec<u8>,
    cold: Vec<(String, Vec<u8>)>,
}

/// The `ops` agent's store from the fixture (windows hot and cold, compressed rows), decompressed
/// once.
fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let agent =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/openclaw/state/agents/ops");
        let zst = std::fs::read(agent.join("agent/openclaw-agent.sqlite.zst")).unwrap();
        let store = zstd::decode_all(zst.as_slice()).unwrap();
        let cold = std::fs::read_dir(agent.join("sessions/cold"))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        let tmp = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        Template {
            dir: tmp.path().to_path_buf(),
            _tmp: tmp,
            store,
            cold,
        }
    })
}

const WINDOW_TEXT: &[&str] = &[
    "session_id",
    "session_key",
    "previous_session_id",
    "reason",
    "chat_type",
    "channel",
    "account_id",
    "model_provider",
    "model",
    "parent_session_key",
    "display_name",
];
const WINDOW_INT: &[&str] = &["created_at", "updated_at"];
const NODE_TEXT: &[&str] = &[
    "session_key",
    "current_session_id",
    "entry_json",
    "label",
    "display_name",
    "fork_source_session_key",
    "fork_source_session_id",
    "parent_session_key",
];
const TABLES: &[&str] = &[
    "transcript_events",
    "session_windows",
    "session_nodes",
    "session_transcript_cold_archives",
    "transcript_rewrite_watermarks",
    "schema_meta",
];

/// The `k`-th row's rowid of `table` (wrapping), if it has any.
fn nth(conn: &rusqlite::Connection, table: &str, k: usize) -> Option<i64> {
    let n: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .ok()?;
    if n == 0 {
        return None;
    }
    conn.query_row(
        &format!("SELECT rowid FROM {table} LIMIT 1 OFFSET ?1"),
        [k as i64 % n],
        |r| r.get(0),
    )
    .ok()
}

/// Zstd frames of `lines` as a cold archive holds them (or, at random, the bytes as they are).
fn archive(b: &mut Bytes, session: &str) -> Vec<u8> {
    let mut text = String::new();
    if b.below(2) == 0 {
        text.push_str(&format!(
            "{{\"kind\":\"header\",\"sessionId\":\"{session}\"}}\n"
        ));
    }
    for seq in 0..b.below(5) {
        let json = serde_json::to_string(&b.text()).unwrap();
        let seq = if b.below(4) == 0 { b.int() } else { seq as i64 };
        text.push_str(&match b.below(4) {
            0 => b.text(),
            1 => format!("{{\"kind\":\"event\",\"row\":{{\"seq\":{seq}}}}}"),
            _ => format!("{{\"kind\":\"event\",\"row\":{{\"seq\":{seq},\"event_json\":{json},\"created_at\":1}}}}"),
        });
        text.push('\n');
    }
    match b.below(4) {
        0 => b.take(),
        _ => zstd::encode_all(text.as_bytes(), 1).unwrap(),
    }
}

fn mutate(conn: &rusqlite::Connection, b: &mut Bytes) {
    for _ in 0..8 {
        if b.0.is_empty() {
            break;
        }
        let op = b.below(10);
        let k = b.below(64);
        let _ = match op {
            0 => nth(conn, "transcript_events", k).map(|rowid| {
                let json = if b.below(3) == 0 { Sql::Null } else { Sql::Text(b.text()) };
                conn.execute("UPDATE transcript_events SET event_json = ?1, event_zstd = NULL WHERE rowid = ?2", rusqlite::params![json, rowid])
            }),
            1 => nth(conn, "transcript_events", k).map(|rowid| {
                let text = b.take();
                let blob = if b.below(3) == 0 { text.clone() } else { zstd::encode_all(text.as_slice(), 1).unwrap() };
                let len = if b.below(3) == 0 { b.int() } else { text.len() as i64 };
                conn.execute(
                    "UPDATE transcript_events SET event_json = NULL, event_zstd = ?1, event_utf8_bytes = ?2, navigation_json = '{}' WHERE rowid = ?3",
                    rusqlite::params![blob, len, rowid],
                )
            }),
            2 => nth(conn, "session_windows", k).map(|rowid| {
                let (col, text) = if b.below(3) == 0 {
                    (WINDOW_INT[b.below(WINDOW_INT.len())], false)
                } else {
                    (WINDOW_TEXT[b.below(WINDOW_TEXT.len())], true)
                };
                let v = b.value(text);
                conn.execute(&format!("UPDATE session_windows SET {col} = ?1 WHERE rowid = ?2"), rusqlite::params![v, rowid])
            }),
            3 => nth(conn, "session_nodes", k).map(|rowid| {
                let col = NODE_TEXT[b.below(NODE_TEXT.len())];
                let v = b.value(true);
                conn.execute(&format!("UPDATE session_nodes SET {col} = ?1, updated_at = ?2 WHERE rowid = ?3"), rusqlite::params![v, b.int(), rowid])
            }),
            4 => nth(conn, "session_transcript_cold_archives", k).map(|rowid| {
                let session: String = conn.query_row("SELECT session_id FROM session_transcript_cold_archives WHERE rowid = ?1", [rowid], |r| r.get(0)).unwrap_or_default();
                let blob = archive(b, &session);
                let len = if b.below(4) == 0 { b.int() } else { blob.len() as i64 };
                conn.execute(
                    "UPDATE session_transcript_cold_archives SET storage = 'sqlite', archive_blob = ?1, archive_bytes = ?2, last_seq = ?3 WHERE rowid = ?4",
                    rusqlite::params![blob, len, b.int(), rowid],
                )
            }),
            5 => nth(conn, "session_transcript_cold_archives", k).map(|rowid| {
                conn.execute("UPDATE session_transcript_cold_archives SET archive_name = ?1 WHERE rowid = ?2", rusqlite::params![b.text(), rowid])
            }),
            6 => {
                let table = TABLES[b.below(TABLES.len())];
                nth(conn, table, k).map(|rowid| conn.execute(&format!("DELETE FROM {table} WHERE rowid = ?1"), [rowid]))
            }
            7 => nth(conn, "session_windows", k).map(|rowid| {
                // another window of the same key with a new id, events copied
                let id = b.text();
                conn.execute(
                    "INSERT INTO session_windows (session_id, session_key, created_at, updated_at)
                     SELECT ?1, session_key, created_at, updated_at FROM session_windows WHERE rowid = ?2",
                    rusqlite::params![id, rowid],
                )
                .and_then(|_| conn.execute(
                    "INSERT INTO transcript_events (session_id, seq, event_json, created_at)
                     SELECT ?1, seq, event_json, created_at FROM transcript_events
                     WHERE session_id = (SELECT session_id FROM session_windows WHERE rowid = ?2) AND event_json IS NOT NULL",
                    rusqlite::params![id, rowid],
                ))
            }),
            8 => nth(conn, "transcript_events", k).map(|rowid| {
                conn.execute("UPDATE transcript_events SET seq = ?1 WHERE rowid = ?2", rusqlite::params![b.int(), rowid])
            }),
            _ => Some(conn.execute(
                "UPDATE schema_meta SET schema_version = ?1, role = ?2",
                rusqlite::params![if b.below(2) == 0 { 23 } else { b.int() }, if b.below(4) == 0 { b.text() } else { "agent".into() }],
            )),
        };
    }
}

fn allowed(e: &Error) -> bool {
    matches!(e, Error::Invalid(_) | Error::Io { .. })
}

/// Every path under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(files(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

fuzz_target!(|data: &[u8]| {
    let t = template();
    let work = tempfile::tempdir_in(&t.dir).unwrap();
    let agent = work.path().join("agents/ops");
    std::fs::create_dir_all(agent.join("agent")).unwrap();
    std::fs::create_dir_all(agent.join("sessions/cold")).unwrap();
    for (name, bytes) in &t.cold {
        std::fs::write(agent.join("sessions/cold").join(name), bytes).unwrap();
    }
    let db = agent.join("agent").join(pidx::ingest::openclaw::DB_NAME);
    std::fs::write(&db, &t.store).unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON; PRAGMA journal_mode = DELETE")
            .unwrap();
        mutate(&conn, &mut Bytes(data));
    }
    let mirror_dir = work.path().join("mirror");
    let before = files(work.path());
    let first = mirror::sync(&db, &mirror_dir);
    if let Err(e) = &first {
        assert!(allowed(e), "mirror: {e}");
        assert!(!e.to_string().contains('\n'), "not one line: {e}");
    }
    let outside: Vec<PathBuf> = files(work.path())
        .into_iter()
        .filter(|p| !p.starts_with(&mirror_dir) && !before.contains(p))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the mirror's folder: {outside:?}"
    );
    let copies = files(&mirror_dir);
    let second = mirror::sync(&db, &mirror_dir);
    match (&first, &second) {
        (Ok(_), Ok(again)) => {
            assert_eq!(
                (again.appended, again.rewritten, again.removed),
                (0, 0, 0),
                "a second pass over the same store changed the copies"
            );
            assert_eq!(copies, files(&mirror_dir));
        }
        (Ok(_), Err(e)) => panic!("the same store read once, then failed: {e}"),
        _ => {}
    }
});
