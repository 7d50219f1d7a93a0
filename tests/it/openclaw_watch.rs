//! An OpenClaw store that changes while pidx runs: `watch` follows the database and its WAL,
//! `sync` picks up appends, and a writer holding the store open is never blocked by pidx (no
//! write lock, ever). A plain SQLite connection stands in for the gateway here; the live check
//! (tests/openclaw/live.sh) does the same with OpenClaw's own code.

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::live::{on, start_watch, term, wait_for};
use common::openclaw::{db_of, state_copy};

/// A gateway-like writer: WAL mode, as OpenClaw keeps the store, and no busy wait at all, so
/// any lock pidx took would make a write fail at once.
fn writer(db: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.busy_timeout(Duration::ZERO).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA journal_mode = WAL")
        .unwrap();
    conn
}

/// Appends a custom_message entry saying `text` to the session with the most events.
fn append(conn: &rusqlite::Connection, text: &str) -> rusqlite::Result<()> {
    let (sid, seq): (String, i64) = conn.query_row(
        "SELECT session_id, max(seq) FROM transcript_events GROUP BY session_id
         ORDER BY count(*) DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let entry = serde_json::json!({"type": "custom_message", "id": format!("w{seq}"), "parentId": null,
        "timestamp": "2026-11-01T00:00:00.000Z", "customType": "note", "content": text, "display": true});
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 0)",
        rusqlite::params![sid, seq + 1, entry.to_string()],
    )?;
    Ok(())
}

fn found(db: &Path, root: &Path, word: &str) -> bool {
    let out = on(db, root, &["--no-sync", "search", word, "--json"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains(word)
}

#[test]
fn watch_follows_the_store_and_its_wal() {
    let (tmp, root) = state_copy();
    let db = tmp.path().join("index.db");
    let mut watch = start_watch(&db, &root);
    let conn = writer(&db_of(&root.join("agents/ops")));
    append(&conn, "zanzibar appended while the gateway runs").unwrap();
    wait_for("the append under watch", || found(&db, &root, "zanzibar"));
    // the gateway closes the store: its WAL is checkpointed into the file and removed
    drop(conn);
    let conn = writer(&db_of(&root.join("agents/ops")));
    append(&conn, "quokka after a reopen").unwrap();
    drop(conn);
    wait_for("the append after a checkpoint", || {
        found(&db, &root, "quokka")
    });
    term(&mut watch);
}

#[test]
fn a_writer_holding_the_store_is_never_blocked_by_pidx() {
    let (tmp, root) = state_copy();
    let db = tmp.path().join("index.db");
    let store = db_of(&root.join("agents/ops"));
    let stop = Arc::new(AtomicBool::new(false));
    let writing = {
        let (stop, store) = (stop.clone(), store.clone());
        std::thread::spawn(move || {
            let conn = writer(&store);
            let (mut n, mut slowest) = (0, Duration::ZERO);
            while !stop.load(Ordering::SeqCst) {
                let t = Instant::now();
                append(&conn, &format!("tick {n}")).expect("the gateway's write failed");
                slowest = slowest.max(t.elapsed());
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            (n, slowest)
        })
    };
    for _ in 0..8 {
        let out = on(&db, &root, &["sync"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stop.store(true, Ordering::SeqCst);
    let (writes, slowest) = writing.join().expect("the writer panicked");
    assert!(writes > 10, "{writes}");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    // what was written is all indexed after a last sync
    let out = on(&db, &root, &["sync"]).output().unwrap();
    assert!(out.status.success());
    assert!(found(&db, &root, &format!("tick {}", writes - 1)));
}

/// CPU time (user + system, in clock ticks) the process has used so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after_name.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn the_watcher_stays_idle_while_a_gateway_holds_the_store_open() {
    let (tmp, root) = state_copy();
    let db = tmp.path().join("index.db");
    let conn = writer(&db_of(&root.join("agents/ops")));
    append(&conn, "the gateway is up").unwrap();
    let mut watch = start_watch(&db, &root);
    std::thread::sleep(Duration::from_millis(1500));
    let before = cpu_ticks(watch.id());
    std::thread::sleep(Duration::from_secs(4));
    let used = cpu_ticks(watch.id()) - before;
    term(&mut watch);
    // Reading the store must not wake the watcher again (a loop used ~18 ticks in 4 s).
    assert!(used <= 6, "the idle watcher used {used} clock ticks in 4 s");
    drop(conn);
}
