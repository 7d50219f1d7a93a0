//! Answers a script can trust: an answer over every session waits for a sync another pidx is
//! running (or, with `--no-wait`, says in its JSON and its exit status 3 that the index is
//! behind); a root that does not exist or is a file is exit 2 for every command; `pidx sync`
//! under a running watcher waits for it to be current and exits 0.

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::live::{count, on, start_watch, stop_cleanly, user, wait_for, HEADER};
use serde_json::Value;

/// `projects` project folders of `per` sessions each, named as pi names them, every message
/// saying "borrow".
fn sessions(root: &Path, projects: usize, per: usize) {
    for p in 0..projects {
        let dir = root.join(format!("--p{p}--"));
        std::fs::create_dir_all(&dir).unwrap();
        for s in 0..per {
            let id = format!("0199aaaa-0000-7000-8000-{p:04}{s:08}");
            let head = HEADER
                .replace("ID", &id)
                .replace("\"/p\"", &format!("\"/p{p}\""));
            // Entry ids differ between sessions, as pi's random ids do: the same id at the same
            // time in two sessions is a fork's copy, which search shows once.
            let line = user(&format!("m{p:03}{s:05}"), None, "borrow checker");
            std::fs::write(
                dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
                format!("{head}\n{line}\n"),
            )
            .unwrap();
        }
    }
}

/// Holds the writer lock of `db` as a background `pidx sync` does, until dropped.
fn hold_lock(db: &Path) -> std::fs::File {
    let mut lock_path = db.as_os_str().to_owned();
    lock_path.push(".lock");
    let mut held = std::fs::File::create(&lock_path).unwrap();
    held.lock().unwrap();
    held.write_all(b"pid 1 (sync)\n").unwrap();
    held
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn home(cmd: &mut std::process::Command, dir: &Path) {
    cmd.env("HOME", dir)
        .env("PIDX_CONFIG", dir.join("none.toml"));
}

#[test]
fn a_search_waits_for_a_sync_in_progress_or_says_the_index_is_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    sessions(&root, 4, 5);
    let db = tmp.path().join("i.db");
    // What the first `list` of a project leaves: that project indexed, a sync of the rest
    // still running in the background (here the test holds its lock).
    let mut first = on(&db, &root, &["--json", "list", "--cwd", "/p0"]);
    home(&mut first, tmp.path());
    common::succeeded(first.output().unwrap());
    std::fs::create_dir_all(root.join("--p4--")).unwrap();
    let late = HEADER.replace("ID", "late");
    std::fs::write(
        root.join("--p4--/late.jsonl"),
        format!("{late}\n{}\n", user("m1", None, "borrow later")),
    )
    .unwrap();
    let held = hold_lock(&db);

    // --no-wait: at once, exit 3, and the JSON says how many files are not indexed yet.
    let mut no_wait = on(&db, &root, &["--no-wait", "--json", "search", "borrow"]);
    home(&mut no_wait, tmp.path());
    let out = no_wait.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["complete"], false, "{answer}");
    assert_eq!(answer["filesLeft"], 1, "{answer}");
    assert_eq!(answer["results"].as_array().unwrap().len(), 20);
    assert!(text(&out.stderr).contains("incomplete index"), "{out:?}");

    // An answer about one project is complete when that project's files are all indexed.
    let list = |cwd: &str| {
        run_on(
            &db,
            &root,
            &["--no-wait", "--json", "list", "--cwd", cwd],
            tmp.path(),
        )
    };
    let out = list("/p0");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["results"].as_array().unwrap().len(), 5, "{answer}");
    let late = HEADER
        .replace("ID", "0199aaaa-0000-7000-8000-000100000099")
        .replace("\"/p\"", "\"/p1\"");
    std::fs::write(
        root.join("--p1--/2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000100000099.jsonl"),
        format!("{late}\n{}\n", user("m1", None, "borrow")),
    )
    .unwrap();
    let out = list("/p1");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    std::fs::remove_file(
        root.join("--p1--/2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000100000099.jsonl"),
    )
    .unwrap();

    // Without it: the search waits for the sync, then answers from every file (exit 0).
    let mut waiting = on(
        &db,
        &root,
        &["--json", "search", "borrow", "--limit", "100"],
    );
    home(&mut waiting, tmp.path());
    let child = waiting
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(count(&db, "SELECT count(*) FROM files"), 20, "it waited");
    drop(held);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("waiting for pid 1 (sync)"),
        "{out:?}"
    );
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 21, "{hits}");

    // --no-wait on a complete index: the same envelope, complete, exit 0.
    let mut done = on(&db, &root, &["--no-wait", "--json", "stats"]);
    home(&mut done, tmp.path());
    let out = done.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&answer["complete"], &answer["filesLeft"]),
        (&true.into(), &0.into())
    );
}

/// A watcher in its first reconcile is waited for like a sync (`--no-wait`: exit 3); once it
/// says it has caught up (a line in its lock note), queries trust its index at no cost.
#[test]
fn a_watcher_is_trusted_once_it_has_caught_up() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    sessions(&root, 2, 3);
    let db = tmp.path().join("i.db");
    let mut lock_path = db.as_os_str().to_owned();
    lock_path.push(".lock");
    let mut held = std::fs::File::create(&lock_path).unwrap();
    held.lock().unwrap();
    held.write_all(b"pid 1 (watch)\n").unwrap();
    let search = || {
        run_on(
            &db,
            &root,
            &["--no-wait", "--json", "search", "borrow"],
            tmp.path(),
        )
    };
    let out = search();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["filesLeft"], 6, "{answer}");
    held.write_all(b"caught up\n").unwrap();
    let out = search();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["complete"], true, "{answer}");
}

/// The reported case: the first `list` of a new index starts a background sync; a `search`
/// right after answers from every file, not from the part read so far.
#[test]
fn a_search_right_after_a_first_list_answers_from_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    sessions(&root, 10, 30);
    let db = tmp.path().join("i.db");
    let mut first = on(&db, &root, &["--json", "list", "--cwd", "/p0"]);
    home(&mut first, tmp.path());
    let out = common::succeeded(first.env("PIDX_FIRST_ANSWER_BYTES", "0").output().unwrap());
    assert!(text(&out.stderr).contains("in the background"), "{out:?}");
    let mut search = on(
        &db,
        &root,
        &["search", "borrow", "--json", "--limit", "1000"],
    );
    home(&mut search, tmp.path());
    let out = search.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 300);
    common::live::finish_sync(&db, &root);
}

fn run_on(db: &Path, root: &Path, args: &[&str], home_dir: &Path) -> Output {
    let mut cmd = on(db, root, args);
    home(&mut cmd, home_dir);
    cmd.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn a_root_that_does_not_exist_or_is_a_file_is_exit_2_for_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let file = tmp.path().join("file.jsonl");
    std::fs::write(&file, "{}\n").unwrap();
    let commands: [&[&str]; 15] = [
        &["sync"],
        &["watch"],
        &["list"],
        &["list", "--all"],
        &["show", "abc"],
        &["context", "abc"],
        &["tree", "abc"],
        &["status"],
        &["search", "borrow"],
        &["--json", "search", "borrow"],
        &["stats"],
        &["sql", "SELECT 1"],
        &["report", "--json"],
        &["pick", "--print", "x"],
        &["mcp"],
    ];
    for (root, says) in [
        (tmp.path().join("missing"), "does not exist"),
        (file, "is a file"),
    ] {
        for args in commands {
            let out = run_on(&db, &root, args, tmp.path());
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} on {says}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
        }
    }
}

#[test]
fn sync_under_a_watcher_waits_for_it_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    sessions(&root, 2, 3);
    let db = tmp.path().join("i.db");
    let mut w = start_watch(&db, &root);
    wait_for("the first reconcile", || {
        count(&db, "SELECT count(*) FROM files") == 6
    });
    let a = root.join("--p0--/2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000000.jsonl");
    for i in 0..50 {
        let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
        writeln!(f, "{}", user(&format!("n{i}"), Some("m1"), "appended")).unwrap();
    }
    let out = run_on(&db, &root, &["sync"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("a watcher keeps this index fresh"),
        "{out:?}"
    );
    // What was on disk when `sync` started is in the index when it returns.
    assert_eq!(
        count(&db, "SELECT count(*) FROM entries WHERE text = 'appended'"),
        50
    );
    let out = run_on(&db, &root, &["--json", "sync"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["watcher"].as_str().unwrap().contains("(watch)"),
        "{report}"
    );
    let out = run_on(&db, &root, &["sync", "--rebuild"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("stop the watcher first"),
        "{out:?}"
    );
    stop_cleanly(&mut w);
}

/// pi lists a symlinked session file (and a symlinked project folder) as its target: appends
/// to targets outside the sessions folder show up under `watch` as they do for plain files.
#[test]
fn appends_to_symlinked_sessions_show_up_under_watch() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir_all(root.join("--p--")).unwrap();
    std::fs::create_dir_all(outside.join("project")).unwrap();
    let target = outside.join("target.jsonl");
    let head = HEADER.replace("ID", "linked");
    std::fs::write(&target, format!("{head}\n{}\n", user("m1", None, "one"))).unwrap();
    std::os::unix::fs::symlink(&target, root.join("--p--/link.jsonl")).unwrap();
    let db = tmp.path().join("i.db");
    let texts = |t: &str| {
        count(
            &db,
            &format!("SELECT count(*) FROM entries WHERE text = '{t}'"),
        )
    };
    let mut w = start_watch(&db, &root);
    wait_for("the linked file", || texts("one") == 1);
    append(&target, "m2", "two");
    wait_for("the append to the link's target", || texts("two") == 1);

    // A project folder linked in while the watcher runs, then a file in it written to.
    let file = outside.join("project/s.jsonl");
    let head = HEADER.replace("ID", "infolder");
    std::fs::write(&file, format!("{head}\n{}\n", user("m1", None, "three"))).unwrap();
    std::os::unix::fs::symlink(outside.join("project"), root.join("--q--")).unwrap();
    wait_for("the linked folder's file", || texts("three") == 1);
    append(&file, "m2", "four");
    wait_for("the append in the linked folder", || texts("four") == 1);
    stop_cleanly(&mut w);
    common::live::assert_equals_rebuild(&db, &root);
}

fn append(file: &PathBuf, id: &str, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "{}", user(id, Some("m1"), text)).unwrap();
}
