//! `pidx watch` against a live temp sessions tree: one watcher per index, appends (whole lines
//! only), new project folders, atomic replaces, truncation, deletion and moves show up within
//! bounded waits, the index then equals a fresh rebuild, SIGTERM stops cleanly, and `kill -9`
//! at several points (mid-reconcile, mid-appends) loses nothing.

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::live::{
    assert_equals_rebuild, count, listed, on, start_watch, status, stop_cleanly, term, user,
    wait_for, HEADER,
};

#[test]
fn one_watcher_per_index_and_sigterm_stops_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(root.join("--p--")).unwrap();
    let db = tmp.path().join("i.db");
    let mut w = start_watch(&db, &root);
    let second = on(&db, &root, &["watch"]).output().unwrap();
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

    // A line written in two write() calls, completed seconds later: nothing until its
    // newline arrives, though the first half's event makes the watcher read the file.
    let line = user("a2", Some("a1"), "second");
    let (head, tail) = line.split_at(40);
    let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
    f.write_all(head.as_bytes()).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_secs(2));
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

    stop_cleanly(&mut w);
    assert_equals_rebuild(&db, &root);
}

/// `kill -9` of the watcher at several points of its first reconcile (after the first commit, a
/// third of the way, two thirds), and once while it follows appends: after a plain `sync`, the
/// index equals a fresh rebuild every time.
#[test]
fn watcher_killed_at_several_points_loses_nothing() {
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
    let total: i64 = 30_000 + 59 * 400;
    let entries = |db: &Path| count(db, "SELECT count(*) FROM entries");
    for (point, after) in [1, total / 3, 2 * total / 3].into_iter().enumerate() {
        let db = tmp.path().join(format!("k{point}.db"));
        let mut child = on(&db, &root, &["watch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("entries to be committed", || entries(&db) >= after);
        child.kill().unwrap();
        child.wait().unwrap();
        let at_kill = entries(&db);
        assert!(at_kill < total, "the reconcile finished before the kill");
        let out = on(&db, &root, &["sync"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(entries(&db), total, "kill point {point}");
        assert_equals_rebuild(&db, &root);
    }

    // While following appends: a burst of appends to several files, killed mid-stream.
    let db = tmp.path().join("k0.db");
    let mut child = on(&db, &root, &["watch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the watcher", || {
        status(&db, &root).contains("watcher: pid")
    });
    let writer = {
        let root = root.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                let path = root.join(format!("--p{}--/s{}.jsonl", i % 3, 1 + i % 19));
                let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                let line = user(&format!("x{i}"), Some("e399"), "appended while killed");
                f.write_all(format!("{line}\n").as_bytes()).unwrap();
            }
        })
    };
    wait_for("some appends to be committed", || {
        count(&db, "SELECT count(*) FROM entries WHERE id LIKE 'x%'") > 0
    });
    child.kill().unwrap();
    child.wait().unwrap();
    writer.join().unwrap();
    let out = on(&db, &root, &["sync"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(entries(&db), total + 2_000);
    assert_equals_rebuild(&db, &root);
}

/// A sessions root under `dir` holding one session (one user message, "hi"), and where its
/// index goes.
fn one_session(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = dir.join("sessions");
    std::fs::create_dir_all(root.join("--p--")).unwrap();
    std::fs::write(
        root.join("--p--/a.jsonl"),
        format!("{}\n{}\n", HEADER, user("m1", None, "hi")),
    )
    .unwrap();
    (root, dir.join("i.db"))
}

#[test]
fn deleting_the_index_under_the_watcher_stops_it_and_a_new_index_builds_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, db) = one_session(tmp.path());
    let mut w = start_watch(&db, &root);
    wait_for("the first file", || listed(&db, &root).len() == 1);
    // What a user does to "rebuild" while forgetting the watcher: its -wal/-shm stay.
    std::fs::remove_file(&db).unwrap();
    let mut code = None;
    wait_for("the watcher to notice", || {
        code = w.try_wait().unwrap().map(|s| s.code());
        code.is_some()
    });
    assert_eq!(code, Some(Some(2)));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut w.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        err.contains(&format!(
            "the index {} was deleted or replaced while watching",
            db.display()
        )),
        "{err}"
    );
    // The leftovers do not leak the old index into the new one.
    let out = on(&db, &root, &["sync"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        listed(&db, &root),
        [("--p--/a.jsonl".into(), 1, "hi".into())]
    );
    assert_equals_rebuild(&db, &root);
}

/// A watcher (or sync) starting while a short-lived writer holds the lock (a query's own sync,
/// a `pidx status` looking) waits for it instead of failing; here the test itself holds it.
#[test]
fn a_writer_waits_for_a_non_watcher_holding_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, db) = one_session(tmp.path());
    let mut lock_path = db.as_os_str().to_owned();
    lock_path.push(".lock");
    for command in ["sync", "watch"] {
        let mut held = std::fs::File::create(&lock_path).unwrap();
        held.lock().unwrap();
        held.write_all(b"pid 1 (sync)\n").unwrap();
        let mut child = on(&db, &root, &[command])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(1));
        assert!(
            child.try_wait().unwrap().is_none(),
            "`pidx {command}` gave up while a non-watcher held the lock"
        );
        assert_eq!(count(&db, "SELECT count(*) FROM entries"), 0);
        held.set_len(0).unwrap();
        drop(held);
        wait_for("the index", || {
            count(&db, "SELECT count(*) FROM entries") == 1
        });
        let status = if command == "watch" {
            term(&mut child)
        } else {
            child.wait().unwrap()
        };
        assert!(status.success(), "{command}: {status:?}");
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(
            err.contains("waiting for pid 1 (sync) to finish writing the index"),
            "{command}: {err}"
        );
        std::fs::remove_file(&db).unwrap();
    }
}

/// A batch that fails with an error other than a full disk (here a trigger the test adds to the
/// index aborts one insert: a constraint error) is rolled back whole: the watcher's connection
/// leaves the transaction (the test can write the index right after), the next batch commits,
/// and once the cause is gone the failed file is read too. Before the write group rolled back
/// on drop, the connection stayed inside the failed transaction and every later batch failed.
#[test]
fn a_failed_batch_rolls_back_and_the_next_batch_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, db) = one_session(tmp.path());
    assert!(on(&db, &root, &["sync"]).output().unwrap().status.success());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    conn.execute_batch(
        "CREATE TRIGGER poison BEFORE INSERT ON entries WHEN NEW.text = 'POISON'
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )
    .unwrap();
    let mut w = start_watch(&db, &root);
    let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut stderr = w.stderr.take().unwrap();
    let sink = std::sync::Arc::clone(&said);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stderr, &mut buf) {
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    // Its first reconcile must be over: an error there ends the watcher (by design), and this
    // test is about a batch that fails while it watches.
    wait_for("the first reconcile", || {
        said.lock().unwrap().contains("unchanged")
    });
    let a = root.join("--p--/a.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
    writeln!(f, "{}", user("m2", Some("m1"), "POISON")).unwrap();
    wait_for("the batch to fail", || {
        said.lock().unwrap().contains("injected failure")
    });
    conn.execute_batch("DROP TRIGGER poison")
        .expect("the failed batch's transaction is rolled back, so the index can be written");
    std::fs::create_dir_all(root.join("--q--")).unwrap();
    std::fs::write(
        root.join("--q--/b.jsonl"),
        format!("{}\n{}\n", HEADER, user("n1", None, "after")),
    )
    .unwrap();
    let texts = |t: &str| {
        count(
            &db,
            &format!("SELECT count(*) FROM entries WHERE text = '{t}'"),
        )
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while texts("after") != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the next batch did not commit; the watcher said:\n{}",
            said.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    wait_for("the failed file to be read again", || texts("POISON") == 1);
    stop_cleanly(&mut w);
    reader.join().unwrap();
    // The file is skipped alone (the sync goes on), and the watcher reads it again later.
    assert!(
        said.lock()
            .unwrap()
            .contains("a.jsonl: could not be indexed: index: injected failure"),
        "{}",
        said.lock().unwrap()
    );
    assert_equals_rebuild(&db, &root);
}
