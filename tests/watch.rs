//! `pidx watch` against a live temp sessions tree: one watcher per index, appends (whole lines
//! only), new project folders, atomic replaces, truncation, deletion and moves show up within
//! bounded waits, the index then equals a fresh rebuild, SIGTERM stops cleanly, and `kill -9`
//! mid-reconcile loses nothing.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn pidx() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("pidx"));
    c.env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR");
    c
}

fn start_watch(db: &Path, root: &Path) -> Child {
    let child = pidx()
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("watch")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the watcher to hold the lock", || {
        status(db, root).contains("watcher: pid")
    });
    child
}

fn status(db: &Path, root: &Path) -> String {
    let out = pidx()
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .arg("status")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls `cond` for up to 20 s (generous for a loaded machine; it usually takes < 0.5 s).
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("timed out waiting for {what}");
}

/// (file name, messageCount, firstMessage) of every listed session, from the index as it is.
fn listed(db: &Path, root: &Path) -> Vec<(String, i64, String)> {
    let out = pidx()
        .arg("--db")
        .arg(db)
        .arg("--root")
        .arg(root)
        .args(["--no-sync", "--json", "list", "--all"])
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

fn term(child: &mut Child) -> std::process::ExitStatus {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the watcher ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn one_watcher_per_index_and_sigterm_stops_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(root.join("--p--")).unwrap();
    let db = tmp.path().join("i.db");
    let mut w = start_watch(&db, &root);
    let second = pidx()
        .arg("--db")
        .arg(&db)
        .arg("--root")
        .arg(&root)
        .arg("watch")
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&format!("pid {}", w.id())), "{err}");
    // While it runs, query commands read what it committed instead of syncing.
    std::fs::write(
        root.join("--p--/a.jsonl"),
        format!("{}\n{}\n", HEADER, user("m1", None, "hi")),
    )
    .unwrap();
    wait_for("the new file", || listed(&db, &root).len() == 1);
    let status = term(&mut w);
    assert!(status.success(), "{status:?}");
    assert!(status_text_has_no_watcher(&db, &root));
}

fn status_text_has_no_watcher(db: &Path, root: &Path) -> bool {
    status(db, root).contains("watcher: none")
}

#[test]
fn changes_show_up_and_the_index_equals_a_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let p = root.join("--p--");
    std::fs::create_dir_all(&p).unwrap();
    let a = p.join("a.jsonl");
    std::fs::write(
        &a,
        format!(
            "{}\n{}\n",
            HEADER.replace("ID", "a"),
            user("a1", None, "first")
        ),
    )
    .unwrap();
    let db = tmp.path().join("i.db");
    let mut w = start_watch(&db, &root);
    wait_for("the first file", || {
        listed(&db, &root) == [("--p--/a.jsonl".into(), 1, "first".into())]
    });

    // A line written in two write() calls: nothing until its newline arrives.
    let line = user("a2", Some("a1"), "second");
    let (head, tail) = line.split_at(40);
    let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
    f.write_all(head.as_bytes()).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(listed(&db, &root)[0].1, 1, "a half-written line was taken");
    f.write_all(format!("{tail}\n").as_bytes()).unwrap();
    drop(f);
    wait_for("the completed line", || listed(&db, &root)[0].1 == 2);

    // A project folder created with a file already inside.
    let q = root.join("--q--");
    let staging = tmp.path().join("staging");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(
        staging.join("b.jsonl"),
        format!(
            "{}\n{}\n",
            HEADER.replace("ID", "b"),
            user("b1", None, "bee")
        ),
    )
    .unwrap();
    std::fs::rename(&staging, &q).unwrap();
    wait_for("the new folder's file", || {
        listed(&db, &root).iter().any(|r| r.0 == "--q--/b.jsonl")
    });

    // An atomic replace (temp file + rename) with different content.
    let tmpfile = p.join(".a.tmp");
    std::fs::write(
        &tmpfile,
        format!(
            "{}\n{}\n",
            HEADER.replace("ID", "a"),
            user("z1", None, "replaced")
        ),
    )
    .unwrap();
    std::fs::rename(&tmpfile, &a).unwrap();
    wait_for("the replaced file", || {
        listed(&db, &root).iter().any(|r| r.2 == "replaced")
    });

    // Truncation to the header only, then a move to another folder, then deletion.
    std::fs::write(&a, format!("{}\n", HEADER.replace("ID", "a"))).unwrap();
    wait_for("the truncation", || {
        listed(&db, &root)
            .iter()
            .any(|r| r.0 == "--p--/a.jsonl" && r.1 == 0)
    });
    std::fs::rename(q.join("b.jsonl"), p.join("b.jsonl")).unwrap();
    wait_for("the move", || {
        let l = listed(&db, &root);
        l.iter().any(|r| r.0 == "--p--/b.jsonl") && !l.iter().any(|r| r.0 == "--q--/b.jsonl")
    });
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_dir_all(&q).unwrap();
    wait_for("the deletion", || listed(&db, &root).len() == 1);

    assert!(term(&mut w).success());
    let fresh = tmp.path().join("fresh.db");
    let out = pidx()
        .arg("--db")
        .arg(&fresh)
        .arg("--root")
        .arg(&root)
        .args(["sync", "--rebuild"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(common::index_dump(&db), common::index_dump(&fresh));
}

#[test]
fn watcher_killed_mid_reconcile_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    for p in 0..3 {
        let dir = root.join(format!("--p{p}--"));
        std::fs::create_dir_all(&dir).unwrap();
        for s in 0..20 {
            let mut text = format!("{}\n", HEADER.replace("ID", &format!("p{p}s{s}")));
            let n = if p == 0 && s == 0 { 30_000 } else { 400 };
            for i in 0..n {
                let parent = (i > 0).then(|| format!("e{}", i - 1));
                text.push_str(&user(
                    &format!("e{i}"),
                    parent.as_deref(),
                    "some words to index",
                ));
                text.push('\n');
            }
            std::fs::write(dir.join(format!("s{s}.jsonl")), text).unwrap();
        }
    }
    let db = tmp.path().join("i.db");
    let mut child = pidx()
        .arg("--db")
        .arg(&db)
        .arg("--root")
        .arg(&root)
        .arg("watch")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill once part of the corpus is committed.
    let entries = |db: &Path| -> i64 {
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT count(*) FROM entries", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let total = 30_000 + 59 * 400;
    wait_for("some entries", || entries(&db) > 0);
    child.kill().unwrap();
    child.wait().unwrap();
    let at_kill = entries(&db);
    assert!(
        at_kill < total,
        "the reconcile finished before the kill ({at_kill})"
    );
    let out = pidx()
        .arg("--db")
        .arg(&db)
        .arg("--root")
        .arg(&root)
        .arg("sync")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh = tmp.path().join("fresh.db");
    pidx()
        .arg("--db")
        .arg(&fresh)
        .arg("--root")
        .arg(&root)
        .args(["sync", "--rebuild"])
        .output()
        .unwrap();
    assert_eq!(entries(&db), total);
    assert_eq!(common::index_dump(&db), common::index_dump(&fresh));
}
