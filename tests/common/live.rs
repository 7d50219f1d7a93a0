//! Helpers for tests that run pidx as a live process next to a changing sessions tree: a
//! watcher started and stopped by signal, bounded polling, and "equals a fresh rebuild".

use std::path::{Path, PathBuf};

use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const HEADER: &str =
    r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// A v3 user message line.
pub fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

/// The pidx binary as a plain process (never the user's pi environment).
pub fn pidx() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("pidx"));
    c.env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env("NO_COLOR", "1");
    c
}

/// `pidx --db DB --root ROOT` followed by `args`.
pub fn on(db: &Path, root: &Path, args: &[&str]) -> Command {
    let mut c = pidx();
    c.arg("--db").arg(db).arg("--root").arg(root).args(args);
    c
}

/// Starts `pidx watch` with stderr piped, and waits until it holds the writer lock.
pub fn start_watch(db: &Path, root: &Path) -> Child {
    start_watch_with(db, root, &[])
}

/// As [`start_watch`], with more arguments after `watch`.
pub fn start_watch_with(db: &Path, root: &Path, more: &[&str]) -> Child {
    let args: Vec<&str> = std::iter::once("watch")
        .chain(more.iter().copied())
        .collect();
    spawn_watch(on(db, root, &args), db, root)
}

/// Spawns `watch` (a `pidx ... watch` command, maybe behind a wrapper) with stderr piped, and
/// waits until it holds the writer lock; if it exits first, fails with what it said.
pub fn spawn_watch(mut watch: Command, db: &Path, root: &Path) -> Child {
    let mut child = watch
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the watcher to hold the lock", || {
        if let Some(code) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("the watcher exited ({code}) before taking the lock: {err}");
        }
        status(db, root).contains("watcher: pid")
    });
    child
}

pub fn status(db: &Path, root: &Path) -> String {
    let out = on(db, root, &["status"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls `cond` for up to 30 s (generous for a loaded machine; it usually takes < 0.5 s).
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("timed out waiting for {what}");
}

/// Sends SIGTERM and waits (bounded) for the exit.
pub fn term(child: &mut Child) -> std::process::ExitStatus {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the watcher ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Stops `child` with SIGTERM and asserts it ended cleanly (exit 0), showing how it ended and
/// what it said on stderr when it did not.
pub fn stop_cleanly(child: &mut Child) {
    let status = term(child);
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        panic!("the watcher did not stop cleanly ({status}): {err}");
    }
}

/// A single number from the index, read-only; 0 while the index does not exist yet.
pub fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.busy_timeout(Duration::from_secs(5))?;
            c.query_row(sql, [], |r| r.get(0))
        })
        .unwrap_or(0)
}

/// `pidx --db DB --root ROOT args` as a command that may answer before its first sync is done
/// (`PIDX_FIRST_ANSWER_BYTES=threshold`; "0": whenever anything is pending), in a wide
/// terminal; its stdout and stderr, once it has succeeded.
pub fn first_answer(db: &Path, root: &Path, args: &[&str], threshold: &str) -> (String, String) {
    let out = super::succeeded(
        on(db, root, args)
            .env("PIDX_FIRST_ANSWER_BYTES", threshold)
            .env("COLUMNS", "200")
            .output()
            .unwrap(),
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits for a background sync: `pidx sync` waits for the writer lock, then finds nothing
/// left (or reads what is).
pub fn finish_sync(db: &Path, root: &Path) {
    let out = on(db, root, &["sync"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts the index at `db` holds exactly what a fresh `sync --rebuild` of `root` builds.
pub fn assert_equals_rebuild(db: &Path, root: &Path) {
    let fresh = db.with_extension("fresh.db");
    let out = on(&fresh, root, &["sync", "--rebuild"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(super::index_dump(db), super::index_dump(&fresh));
    assert_eq!(fts_dump(db, &fresh), fts_dump(&fresh, &fresh));
}

/// For every word the full-text index of `words_from` knows: the (file, entry position, kind)
/// rows of `db` that match it. Equal dumps mean both indexes answer every single-word search
/// alike (rowids differ between indexes; what they point to must not).
pub fn fts_dump(db: &Path, words_from: &Path) -> Vec<String> {
    let open = |p: &Path| {
        rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
    };
    let words: Vec<String> = open(words_from)
        .prepare("SELECT term FROM fts_vocab")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let conn = open(db);
    let mut stmt = conn
        .prepare(
            "SELECT f.path || ' ' || e.seq || ' ' || (x.rowid % 8) FROM fts x
             JOIN entries e ON e.rid = x.rowid / 8 JOIN files f ON f.id = e.file_id
             WHERE fts MATCH ?1",
        )
        .unwrap();
    let mut out = Vec::new();
    for w in words {
        let phrase = pidx::store::fts5::phrase(&w);
        let mut hits: Vec<String> = stmt
            .query_map([&phrase], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        hits.sort();
        out.push(format!("{w}: {}", hits.join(", ")));
    }
    out
}

/// Checks the impact blocks of the index at `db` (`store::impacts`) against its full text and
/// returns how many words have blocks: every text FTS5 finds for a blocked word, up to the
/// blocks' end, is in one of its blocks with the same count of the word and length, or left out
/// with an impact its word's tail bounds; a text of
/// a block FTS5 no longer finds belongs to an entry that left the index; and the word's count
/// of texts, when kept, is FTS5's.
pub fn check_impact_blocks(db: &Path) -> usize {
    use std::collections::BTreeMap;
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    pidx::store::fts5::register(&conn).unwrap();
    let terms: Vec<String> = conn
        .prepare("SELECT DISTINCT term FROM impact_blocks")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for term in &terms {
        let blocks = pidx::store::impacts::of_term(&conn, term).unwrap().unwrap();
        let mut listed: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
        for b in &blocks.list {
            for (rowid, tf, len) in pidx::store::impacts::texts(&conn, term, b.last).unwrap() {
                assert!(
                    rowid >= b.first && rowid <= b.last,
                    "{term}: {rowid} outside its block"
                );
                listed.insert(rowid, (tf, len));
            }
        }
        let phrase = pidx::store::fts5::phrase(term);
        let found: BTreeMap<i64, (i64, i64)> = conn
            .prepare("SELECT rowid, pidx_tf_len(fts) FROM fts WHERE fts MATCH ?1 AND rowid <= ?2")
            .unwrap()
            .query_map(rusqlite::params![phrase, blocks.through], |r| {
                Ok((r.get(0)?, pidx::store::fts5::unpack(r.get(1)?)))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (rowid, facts) in &found {
            match listed.get(rowid) {
                Some(listed) => assert_eq!(listed, facts, "{term}: text {rowid} in its blocks"),
                // Left out of the blocks: the word's tail bounds it.
                None => {
                    let impact = pidx::store::fts5::impact(facts.0, facts.1, blocks.avgdl);
                    assert!(
                        blocks.tail.is_some_and(|tail| impact <= tail),
                        "{term}: text {rowid} left out of its blocks at impact {impact}, above its tail {:?}",
                        blocks.tail
                    );
                }
            }
        }
        for rowid in listed.keys().filter(|r| !found.contains_key(r)) {
            let entry: i64 = conn
                .query_row(
                    "SELECT count(*) FROM entries WHERE rid = ?1",
                    [rowid >> 3],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                entry, 0,
                "{term}: text {rowid} of a block is gone but its entry is not"
            );
        }
        if let Some(texts) = blocks.texts {
            assert_eq!(texts, found.len() as i64, "{term}: its count of texts");
        }
    }
    terms.len()
}

/// (file name, messageCount, firstMessage) of every listed session, from the index as it is.
pub fn listed(db: &Path, root: &Path) -> Vec<(String, i64, String)> {
    let out = on(db, root, &["--no-sync", "--json", "list", "--all"])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Array(Vec::new()));
    let mut v: Vec<(String, i64, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let path = PathBuf::from(r["path"].as_str().unwrap());
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (
                rel,
                r["messageCount"].as_i64().unwrap(),
                r["firstMessage"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}
