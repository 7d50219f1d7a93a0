//! `pidx forget`: forgotten sessions are gone from list, search, stats, show and context, stay
//! gone after `sync` and under `watch` (even when pi appends to them), come back with
//! `--undo`, and their JSONL files are byte for byte what they were.

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use common::live::{count, on, start_watch, stop_cleanly, user, wait_for, HEADER};
use serde_json::Value;

/// `projects` project folders (`/p0`, `/p1`, ...) of `per` sessions each; every session's one
/// message names its session ("word0001" ...) and says "borrow". Session `n` was last active
/// on 2026-01-(n+1).
fn sessions(root: &Path, projects: usize, per: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for p in 0..projects {
        let dir = root.join(format!("--p{p}--"));
        std::fs::create_dir_all(&dir).unwrap();
        for s in 0..per {
            let n = p * per + s;
            let id = format!("0199aaaa-0000-7000-8000-{n:012}");
            let day = format!("2026-01-{:02}", n + 1);
            let head = HEADER
                .replace("ID", &id)
                .replace("2026-01-01", &day)
                .replace("\"/p\"", &format!("\"/p{p}\""));
            // pi's last activity is the message's own timestamp (epoch ms).
            let ms = 1_767_225_601_000_i64 + n as i64 * 86_400_000;
            let line = user(&format!("m{n:05}"), None, &format!("word{n:04} borrow"))
                .replace("2026-01-01", &day)
                .replace("\"timestamp\":1}", &format!("\"timestamp\":{ms}}}"));
            let file = dir.join(format!("{day}T00-00-00-000Z_{id}.jsonl"));
            std::fs::write(&file, format!("{head}\n{line}\n")).unwrap();
            files.push(file);
        }
    }
    files
}

fn run(db: &Path, root: &Path, args: &[&str]) -> Output {
    on(db, root, args)
        .env("HOME", db.parent().unwrap())
        .env("PIDX_CONFIG", db.with_extension("no-config.toml"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `args` with `--json`, exit 0 or 1, parsed.
fn json(db: &Path, root: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(db, root, &all);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The paths `list --all` shows.
fn listed(db: &Path, root: &Path) -> Vec<String> {
    let v = json(db, root, &["list", "--all", "--limit", "1000"]);
    let mut paths: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    paths
}

/// The session files (by path) a search for `word` finds.
fn found(db: &Path, root: &Path, word: &str) -> usize {
    json(db, root, &["search", word, "--limit", "1000"])
        .as_array()
        .unwrap()
        .len()
}

fn sessions_in_stats(db: &Path, root: &Path) -> usize {
    json(db, root, &["stats", "--by", "session"])
        .as_array()
        .unwrap()
        .len()
}

fn path_of(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn a_forgotten_session_is_gone_everywhere_stays_gone_and_comes_back_with_undo() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let files = sessions(&root, 2, 3);
    let db = tmp.path().join("index.db");
    let before = common::fingerprint(&root);
    assert_eq!(listed(&db, &root).len(), 6);
    assert_eq!(sessions_in_stats(&db, &root), 6);
    let gone = &files[1];
    let id = "0199aaaa-0000-7000-8000-000000000001";

    let out = run(&db, &root, &["forget", id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&path_of(gone)), "{out:?}");
    assert!(
        text(&out.stderr).contains("pidx never deletes a transcript"),
        "{out:?}"
    );
    let check_gone = || {
        let paths = listed(&db, &root);
        assert_eq!(paths.len(), 5, "{paths:?}");
        assert!(!paths.contains(&path_of(gone)));
        assert_eq!(found(&db, &root, "word0001"), 0);
        assert_eq!(found(&db, &root, "borrow"), 5);
        assert_eq!(sessions_in_stats(&db, &root), 5);
        for cmd in ["show", "context", "tree"] {
            let out = run(&db, &root, &[cmd, id]);
            assert_eq!(out.status.code(), Some(1), "{cmd}: {out:?}");
        }
    };
    check_gone();
    // A sync, a rebuild-free sync after pi appends to the forgotten file: still gone.
    let out = run(&db, &root, &["sync"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    check_gone();
    assert_eq!(common::fingerprint(&root), before, "no JSONL byte changed");

    let listed_forgotten = json(&db, &root, &["forget", "--list"]);
    assert_eq!(listed_forgotten[0]["path"], path_of(gone));
    assert_eq!(listed_forgotten[0]["cwd"], "/p0");

    let out = run(&db, &root, &["forget", "--undo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(listed(&db, &root).len(), 6);
    assert_eq!(found(&db, &root, "word0001"), 1);
    assert_eq!(sessions_in_stats(&db, &root), 6);
    let out = run(&db, &root, &["show", id]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(common::fingerprint(&root), before, "no JSONL byte changed");
    // Nothing left to undo.
    let out = run(&db, &root, &["forget", "--undo"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn a_watcher_does_not_bring_a_forgotten_session_back_even_when_pi_appends_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let files = sessions(&root, 1, 3);
    let db = tmp.path().join("index.db");
    assert_eq!(listed(&db, &root).len(), 3);
    let out = run(&db, &root, &["forget", &path_of(&files[0])]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mut w = start_watch(&db, &root);
    // pi goes on writing both the forgotten session and another one.
    for (file, word) in [(&files[0], "afterforget"), (&files[2], "seenbywatch")] {
        let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
        writeln!(f, "{}", user(&format!("x-{word}"), None, word)).unwrap();
    }
    wait_for("the watcher to index the other session's new line", || {
        count(
            &db,
            "SELECT count(*) FROM entries WHERE text = 'seenbywatch'",
        ) == 1
    });
    // Forgetting needs the index's one writer: refused while the watcher is it.
    let out = run(&db, &root, &["forget", &path_of(&files[1])]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("watcher"), "{out:?}");
    stop_cleanly(&mut w);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM entries WHERE text = 'afterforget'"
        ),
        0
    );
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM files WHERE path = '{}'",
                path_of(&files[0])
            )
        ),
        0
    );
    assert_eq!(listed(&db, &root).len(), 2);
}

#[test]
fn forget_by_project_and_by_date_with_a_dry_run_first() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    sessions(&root, 3, 3);
    let db = tmp.path().join("index.db");
    assert_eq!(listed(&db, &root).len(), 9);

    // A dry run says what it would forget and changes nothing.
    let would = json(&db, &root, &["forget", "--cwd", "/p1", "--dry-run"]);
    assert_eq!(would.as_array().unwrap().len(), 3, "{would}");
    assert!(would.as_array().unwrap().iter().all(|f| f["cwd"] == "/p1"));
    assert_eq!(listed(&db, &root).len(), 9);

    let out = run(&db, &root, &["forget", "--cwd", "/p1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let left = json(&db, &root, &["list", "--all"]);
    assert!(left.as_array().unwrap().iter().all(|s| s["cwd"] != "/p1"));
    assert_eq!(left.as_array().unwrap().len(), 6);

    // Sessions 0..=1 were last active on Jan 1 and 2: before Jan 3.
    let out = run(&db, &root, &["forget", "--before", "2026-01-03T00:00:00Z"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(listed(&db, &root).len(), 4);
    // --cwd with --before: both conditions.
    let out = run(
        &db,
        &root,
        &["forget", "--cwd", "/p2", "--before", "2026-01-08T00:00:00Z"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Of /p2 (sessions 6, 7, 8: Jan 7, 8, 9) only 6; left: 2, 7, 8.
    assert_eq!(listed(&db, &root).len(), 3);

    // --undo takes back the latest run only; --undo --all the rest.
    let out = run(&db, &root, &["forget", "--undo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(listed(&db, &root).len(), 4);
    let out = run(&db, &root, &["forget", "--undo", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(listed(&db, &root).len(), 9);

    // Nothing named: an error, not "forget everything".
    let out = run(&db, &root, &["forget"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("say what to forget"), "{out:?}");
    let out = run(&db, &root, &["forget", "--cwd", "/nowhere"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}
