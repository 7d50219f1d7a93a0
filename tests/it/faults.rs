//! Faults the index must survive while `sync`/`watch` run on a temp sessions tree: pi's in-place
//! migration rewrite, an unreadable file, a 50 MB single line, a database that cannot be written
//! (file size limit: the same write error as a full disk), and readers during heavy ingest.

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::live::{
    assert_equals_rebuild, count, listed, on, start_watch, stop_cleanly, user, wait_for, HEADER,
};

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn append(path: &Path, lines: &[String]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all((lines.join("\n") + "\n").as_bytes()).unwrap();
}

/// pi opening a v1 file rewrites it in place (truncate, same inode) at v3 with fresh ids; the
/// file grows, so only its head hash tells it from an append.
#[test]
fn pi_migration_rewrite_under_watch_is_taken_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let file = root.join("--p--/old.jsonl");
    let msg = |text: &str| {
        format!(
            r#"{{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}"#
        )
    };
    let v1_header =
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    write(
        &file,
        &[
            v1_header.into(),
            msg("one") + "}",
            msg("two") + "}",
            msg("three") + "}",
        ],
    );
    let db = tmp.path().join("i.db");
    let mut w = start_watch(&db, &root);
    let of_file = "SELECT count(*) FROM entries";
    wait_for("the v1 file", || count(&db, of_file) == 3);
    // Positional ids for v1 entries (pidx's stable stand-in for pi's random ones).
    assert_eq!(
        count(&db, "SELECT count(*) FROM entries WHERE id = '00000001'"),
        1
    );
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap());

    let migrated = [
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","version":3}"#.to_string(),
        msg("one") + r#","id":"a1a1a1a1","parentId":null}"#,
        msg("two") + r#","id":"b2b2b2b2","parentId":"a1a1a1a1"}"#,
        msg("three") + r#","id":"c3c3c3c3","parentId":"b2b2b2b2"}"#,
    ];
    let old_len = std::fs::metadata(&file).unwrap().len();
    std::fs::write(&file, migrated.join("\n") + "\n").unwrap(); // O_TRUNC: same inode
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&meta), inode);
    assert!(meta.len() > old_len, "the rewrite must grow the file");
    wait_for("the migrated ids", || {
        count(&db, "SELECT count(*) FROM entries WHERE id = 'c3c3c3c3'") == 1
    });
    assert_eq!(count(&db, of_file), 3, "the rewrite was read as an append");
    stop_cleanly(&mut w);
    assert_equals_rebuild(&db, &root);
}

/// A file that cannot be read is reported by path and skipped; every other file is indexed, and
/// under `watch` appends to the others keep flowing.
#[test]
fn an_unreadable_file_is_reported_and_the_rest_flows() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let good = root.join("--p--/good.jsonl");
    write(
        &good,
        &[HEADER.replace("ID", "good"), user("g1", None, "fine")],
    );
    let bad = root.join("--p--/locked.jsonl");
    write(
        &bad,
        &[HEADER.replace("ID", "locked"), user("l1", None, "x")],
    );
    std::fs::set_permissions(&bad, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    // Root reads through permissions: then a symlink loop stands in (opening it fails too).
    let unreadable = if std::fs::File::open(&bad).is_ok() {
        eprintln!("running as root: mode 000 does not stop reads; using a symlink loop instead");
        std::fs::remove_file(&bad).unwrap();
        std::os::unix::fs::symlink(&bad, &bad).unwrap();
        bad.clone()
    } else {
        bad.clone()
    };
    let db = tmp.path().join("i.db");
    let out = on(&db, &root, &["sync"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&unreadable.display().to_string()),
        "not reported: {err}"
    );
    assert_eq!(listed(&db, &root).len(), 1, "{err}");

    let mut w = start_watch(&db, &root);
    append(&good, &[user("g2", Some("g1"), "still flowing")]);
    wait_for("the append next to the unreadable file", || {
        listed(&db, &root).first().is_some_and(|r| r.1 == 2)
    });
    stop_cleanly(&mut w);
}

/// One 50 MB line (a base64 image in a tool result) between ordinary lines: indexed as one
/// entry, the image bytes stay out of the full-text index, and the lines after it are there.
#[test]
fn a_fifty_megabyte_line_is_one_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let file = root.join("--p--/img.jsonl");
    let image: String = "QUJD".repeat(50 << 18); // 50 MiB of base64
    let big = format!(
        r#"{{"type":"message","id":"t1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{{"type":"text","text":"screenshot"}},{{"type":"image","data":"{image}","mimeType":"image/png"}}],"isError":false,"timestamp":2}}}}"#
    );
    write(
        &file,
        &[
            HEADER.replace("ID", "img"),
            user("u1", None, "look at this"),
            big,
            user("u2", Some("t1"), "after the image"),
        ],
    );
    drop(image);
    let db = tmp.path().join("i.db");
    let out = on(&db, &root, &["sync"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 3);
    let search = |q: &str| {
        on(&db, &root, &["--no-sync", "--json", "search", q])
            .output()
            .unwrap()
    };
    assert!(search("after the image").status.success());
    assert!(search("screenshot").status.success());
    let in_image = search("QUJDQUJDQUJD");
    assert_eq!(in_image.status.code(), Some(1), "image bytes were indexed");
    assert!(
        count(
            &db,
            "SELECT count(*) FROM fts_vocab WHERE length(term) > 1000"
        ) == 0,
        "a huge token reached the full-text index"
    );
}

/// The index cannot grow (a file size limit makes SQLite's writes fail, as a full disk does):
/// the watcher reports the error, backs off instead of spinning, loses nothing, and catches up
/// once writing works again.
#[test]
fn a_full_disk_makes_the_watcher_back_off_and_catch_up() {
    if !Path::new("/usr/bin/prlimit").exists() {
        eprintln!("SKIPPED: prlimit (util-linux) is missing");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let file = root.join("--p--/a.jsonl");
    write(
        &file,
        &[HEADER.replace("ID", "a"), user("a0", None, "start")],
    );
    let db = tmp.path().join("i.db");
    assert!(on(&db, &root, &["sync"]).output().unwrap().status.success());
    // 1 MiB per file at most (a soft limit, so it can be lifted later); SIGXFSZ ignored so a
    // write past it fails with EFBIG instead.
    let bin = assert_cmd::cargo::cargo_bin("pidx");
    let mut watch = std::process::Command::new("bash");
    watch
        .args(["-c", "ulimit -S -f 1024; trap '' XFSZ; exec \"$0\" \"$@\""])
        .arg(&bin)
        .arg("--db")
        .arg(&db)
        .arg("--root")
        .arg(&root)
        .arg("watch")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR");
    let mut w = common::live::spawn_watch(watch, &db, &root);
    let before = count(&db, "SELECT count(*) FROM entries");
    // ~3 MB of new, distinct words: more than the limit lets the index take.
    let lines: Vec<String> = (0..3_000)
        .map(|i| {
            let words: Vec<String> = (0..40).map(|j| format!("w{i}x{j}")).collect();
            user(&format!("b{i}"), None, &words.join(" "))
        })
        .collect();
    append(&file, &lines);
    let cpu = |pid: u32| -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let f: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
    };
    // The least share of a CPU over five windows of two seconds: a spinning watcher keeps
    // every window busy, one backing off leaves some idle. One window of four seconds two
    // seconds in caught the first attempt still indexing on a loaded machine (0.50 CPU).
    std::thread::sleep(Duration::from_secs(2));
    let mut idle_share = f64::MAX;
    for _ in 0..5 {
        let c0 = cpu(w.id());
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs(2));
        idle_share = idle_share.min((cpu(w.id()) - c0) / t0.elapsed().as_secs_f64());
    }
    assert_eq!(
        count(&db, "SELECT count(*) FROM entries"),
        before,
        "a partial batch was committed"
    );
    assert!(
        idle_share < 0.5,
        "the watcher spins on the error ({idle_share:.2} CPU)"
    );
    let ok = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", w.id()))
        .arg("--fsize=unlimited")
        .status()
        .unwrap();
    assert!(ok.success());
    wait_for("the watcher to catch up", || {
        count(&db, "SELECT count(*) FROM entries") == before + 3_000
    });
    stop_cleanly(&mut w);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut w.stderr.take().unwrap(), &mut err).unwrap();
    eprintln!("watcher's stderr:\n{err}");
    let failures = err.lines().filter(|l| l.contains("retry")).count();
    assert!(
        (1..=6).contains(&failures),
        "expected a few reported retries, not a loop:\n{err}"
    );
    assert_equals_rebuild(&db, &root);
}

/// Many `list` and `context` calls while a sync writes: none fails, and none sees part of a file
/// (every listed session has all its messages; a context is absent or whole).
#[test]
fn readers_during_heavy_ingest_see_whole_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let per_file = 1_500;
    for s in 0..40 {
        let mut lines = vec![HEADER.replace("ID", &format!("s{s}"))];
        for i in 0..per_file {
            let parent = (i > 0).then(|| format!("e{}", i - 1));
            lines.push(user(
                &format!("e{i}"),
                parent.as_deref(),
                "words for the reader test",
            ));
        }
        write(&root.join(format!("--p{}--/s{s}.jsonl", s % 4)), &lines);
    }
    let db = tmp.path().join("i.db");
    let last = root.join("--p3--/s39.jsonl").display().to_string();
    let mut sync = on(&db, &root, &["sync"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (mut lists, mut contexts, mut partial_views) = (0, 0, 0);
    while sync.try_wait().unwrap().is_none() {
        let sessions = listed(&db, &root);
        lists += 1;
        for (path, messages, _) in &sessions {
            assert_eq!(*messages, per_file as i64, "{path} seen half-indexed");
        }
        if (1..40).contains(&sessions.len()) {
            partial_views += 1;
        }
        let out = on(
            &db,
            &root,
            &["--no-sync", "--json", "context", &last, "--leaf", "e1499"],
        )
        .output()
        .unwrap();
        contexts += 1;
        match out.status.code() {
            Some(0) => {
                let ctx: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(ctx["messages"].as_array().unwrap().len(), per_file);
            }
            // Not indexed yet (or no index yet): a clean "not found", never a crash.
            Some(1) | Some(2) => {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains("not") || err.contains("no "),
                    "unexpected failure: {err}"
                );
            }
            other => panic!("context exited {other:?}"),
        }
    }
    assert!(sync.wait().unwrap().success());
    eprintln!("{lists} lists, {contexts} contexts, {partial_views} saw the index part-built");
    assert!(lists > 0 && contexts > 0);
    assert_eq!(listed(&db, &root).len(), 40);
}

/// Several processes creating the same new index at once (a watcher starting while `status`
/// runs): none refuses the half-created file as foreign, none fails.
#[test]
fn processes_creating_one_index_at_once_all_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    write(
        &root.join("--p--/a.jsonl"),
        &[HEADER.replace("ID", "a"), user("a1", None, "hello")],
    );
    for round in 0..5 {
        let db = tmp.path().join(format!("r{round}.db"));
        let children: Vec<_> = (0..8)
            .map(|i| {
                let args: &[&str] = if i % 2 == 0 {
                    &["--no-sync", "status"]
                } else {
                    &["list", "--all"]
                };
                on(&db, &root, args)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A `"message": null` line alone in its quarter hour, with no model near it: its facts are
/// numbers (not NULL), so the rollups take it and the sync indexes every file. It once failed
/// usage_rollup's NOT NULL columns and aborted the whole first sync; the conformance fixture
/// `message-null.jsonl` missed it because its null shares a quarter hour with a user message.
#[test]
fn a_null_message_alone_in_its_quarter_hour_costs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let lone = |id: &str, ts: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"{ts}","message":null}}"#
        )
    };
    write(
        &root.join("--p--/null.jsonl"),
        &[
            HEADER.replace("ID", "nullonly"),
            lone("n1", "2026-03-01T10:00:00.000Z"),
        ],
    );
    write(
        &root.join("--p--/good.jsonl"),
        &[HEADER.replace("ID", "good"), user("g1", None, "fine")],
    );
    let db = tmp.path().join("i.db");
    let out = on(&db, &root, &["sync"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("skipped"), "{err}");
    assert_eq!(count(&db, "SELECT count(*) FROM files"), 2);
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 2);
    // Appended later, into a quarter hour of its own again.
    append(
        &root.join("--p--/null.jsonl"),
        &[lone("n2", "2026-03-02T10:00:00.000Z")],
    );
    let out = on(&db, &root, &["stats", "--all"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 3);
    assert_eq!(
        count(&db, "SELECT count(*) FROM usage_rollup WHERE user IS NULL"),
        0
    );
    assert_equals_rebuild(&db, &root);
}

/// A file whose batch cannot be written (here a trigger planted in the index refuses one
/// entry: any SQLite error of the file's own) is rolled back alone: reported by path, kept in
/// `pidx status`, and every other file of its write group is indexed; exit 0. The next sync
/// tries it again, and once it is indexed `status` forgets it.
#[test]
fn a_file_that_cannot_be_written_is_skipped_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let db = tmp.path().join("i.db");
    assert!(on(&db, &root, &["sync"]).output().unwrap().status.success());
    let plant = |sql: &str| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap()
    };
    plant(
        "CREATE TRIGGER planted BEFORE INSERT ON entries WHEN NEW.id = 'poison'
         BEGIN SELECT RAISE(ABORT, 'planted refusal'); END;",
    );
    // Small files: they share one write group, so the refusal rolls the others back too and
    // they must be done again.
    for name in ["a", "b", "c"] {
        let first = if name == "b" { "poison" } else { "ok1" };
        write(
            &root.join(format!("--p--/{name}.jsonl")),
            &[
                HEADER.replace("ID", name),
                user(first, None, &format!("hello from {name}")),
                user("ok2", Some(first), "second"),
            ],
        );
    }
    let bad = root.join("--p--/b.jsonl");
    let out = on(&db, &root, &["sync"]).output().unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    let said = format!("pidx: skipped {}: could not be indexed", bad.display());
    assert!(
        err.contains(&said) && err.contains("planted refusal"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line for the file: {err}");
    assert!(stdout.contains("; 1 skipped"), "{stdout}");
    let mut names: Vec<String> = listed(&db, &root).into_iter().map(|r| r.0).collect();
    names.sort();
    assert_eq!(names, ["--p--/a.jsonl", "--p--/c.jsonl"], "{err}");
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 4);

    let status = on(&db, &root, &["--json", "status"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["skipped"][0]["path"], bad.display().to_string());
    assert!(status["skipped"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("planted refusal"));
    let text = on(&db, &root, &["status"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains(&format!("skipped: {}", bad.display())));

    plant("DROP TRIGGER planted");
    let out = on(&db, &root, &["sync"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(listed(&db, &root).len(), 3);
    assert_eq!(count(&db, "SELECT count(*) FROM skipped_files"), 0);
    assert_equals_rebuild(&db, &root);
}
