//! An index that cannot be written (a read-only mount; for a normal user, a folder without
//! write permission): queries answer from it as it is and say so, `sync` and `watch` stop at
//! once with an error that says what to do, and the index file is not changed by any of them.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::live::{pidx, user, HEADER};

/// How to run pidx so that `dir` cannot be written.
enum ReadOnly {
    /// A read-only bind mount of `dir` in a private mount namespace (works for root, who
    /// writes through file modes, and where user namespaces are allowed).
    Mount,
    /// `dir` is mode 0555 (a normal user).
    Modes,
}

impl ReadOnly {
    fn set_up(dir: &Path) -> Option<ReadOnly> {
        let probe = Command::new("unshare")
            .args(["-rm", "sh", "-c"])
            .arg(r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ! touch "$0/probe" 2>/dev/null"#)
            .arg(dir)
            .output();
        if probe.is_ok_and(|o| o.status.success()) {
            return Some(ReadOnly::Mount);
        }
        set_mode(dir, 0o555);
        if std::fs::File::create(dir.join("probe")).is_err() {
            return Some(ReadOnly::Modes);
        }
        let _ = std::fs::remove_file(dir.join("probe"));
        set_mode(dir, 0o755);
        None
    }

    fn pidx(&self, dir: &Path, db: &Path, root: &Path, args: &[&str]) -> Command {
        let mut c = match self {
            ReadOnly::Mount => {
                let mut c = Command::new("unshare");
                c.args(["-rm", "sh", "-c"])
                    .arg(r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@""#)
                    .arg(dir)
                    .arg(pidx().get_program());
                c
            }
            ReadOnly::Modes => pidx(),
        };
        c.env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env("NO_COLOR", "1")
            .arg("--db")
            .arg(db)
            .arg("--root")
            .arg(root)
            .args(args);
        c
    }

    fn tear_down(&self, dir: &Path) {
        if let ReadOnly::Modes = self {
            set_mode(dir, 0o755);
        }
    }
}

fn set_mode(dir: &Path, mode: u32) {
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_read_only_index_answers_queries_and_refuses_to_be_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let file = root.join("--p--/a.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, format!("{HEADER}\n{}\n", user("u1", None, "first"))).unwrap();
    let dir = tmp.path().join("index");
    let db = dir.join("i.db");
    let built = common::live::on(&db, &root, &["sync"]).output().unwrap();
    assert!(built.status.success(), "{}", text(&built));
    let before = std::fs::read(&db).unwrap();
    // A line the read-only index cannot take.
    let more = format!("{}\n", user("u2", Some("u1"), "second"));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, more.as_bytes()))
        .unwrap();

    let Some(ro) = ReadOnly::set_up(&dir) else {
        eprintln!("SKIPPED: cannot make a folder read-only here (no mount namespace, and running as root)");
        return;
    };
    let run = |args: &[&str]| ro.pidx(&dir, &db, &root, args).output().unwrap();

    let list = run(&["--json", "list", "--all"]);
    assert!(list.status.success(), "{}", text(&list));
    let rows: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(
        rows[0]["messageCount"], 1,
        "answered from the index as it is"
    );
    assert!(
        text(&list).contains("cannot be written; answering from it as it is, without syncing"),
        "{}",
        text(&list)
    );
    let quiet = run(&["--no-sync", "search", "first"]);
    assert!(quiet.status.success(), "{}", text(&quiet));
    assert!(String::from_utf8_lossy(&quiet.stdout).contains("first"));
    assert!(
        text(&quiet).is_empty(),
        "--no-sync asked for no sync: {}",
        text(&quiet)
    );
    let status = run(&["status"]);
    assert!(status.status.success(), "{}", text(&status));

    for command in ["sync", "watch"] {
        let started = Instant::now();
        let mut child = ro
            .pidx(&dir, &db, &root, &[command])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("`pidx {command}` on a read-only index did not stop");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
        let err = text(&out);
        assert!(
            err.contains(&format!("index {} cannot be written", db.display()))
                && err.contains("point --db (or PIDX_DB) at a writable place"),
            "{command}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    }
    ro.tear_down(&dir);

    assert!(
        std::fs::read(&db).unwrap() == before,
        "the index file changed"
    );
    let synced = common::live::on(&db, &root, &["--json", "list", "--all"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&synced.stdout).unwrap();
    assert_eq!(rows[0]["messageCount"], 2, "writable again, it catches up");
}
