//! What a new user trips over first: wrong or missing roots said out loud, file and folder names
//! that cannot drive the terminal, and a damaged index met anywhere giving the rebuild hint.

use crate::common;

use std::path::Path;

use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-1111-7000-8000-00000000000X","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}"#;

fn session(dir: &Path, name: &str, n: char, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let line = format!(
        r#"{{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{},"timestamp":1767225600000}}}}"#,
        serde_json::Value::from(text)
    );
    std::fs::write(
        dir.join(name),
        format!(
            "{}\n{line}\nnot json\n",
            HEADER.replace('X', &n.to_string())
        ),
    )
    .unwrap();
}

#[test]
fn a_named_root_that_is_wrong_is_an_error_and_a_project_folder_a_warning_outside_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let missing = tmp.path().join("does-not-exist");
    common::pidx(&db, &missing)
        .arg("sync")
        .assert()
        .code(2)
        .stderr(contains("does not exist"))
        .stderr(contains("one --<cwd>-- folder per project"));
    common::pidx(&db, &missing)
        .arg("watch")
        .assert()
        .code(2)
        .stderr(contains("does not exist"));
    common::pidx(&db, &missing)
        .args(["list", "--all"])
        .assert()
        .code(2)
        .stderr(contains("does not exist"));
    let file = tmp.path().join("file.jsonl");
    std::fs::write(&file, "{}\n").unwrap();
    common::pidx(&db, &file)
        .arg("sync")
        .assert()
        .code(2)
        .stderr(contains("is a file"));
    let root = tmp.path().join("sessions");
    let project = root.join("--home-u-proj--");
    session(&project, "a.jsonl", '1', "hi");
    common::pidx(&db, &project)
        .arg("sync")
        .assert()
        .code(2)
        .stderr(contains("looks like one project's folder"))
        .stderr(contains(format!("--root {}", root.display())));
    common::pidx(&db, &project)
        .args(["list", "--all"])
        .assert()
        .stderr(contains("warning: --root"));
    common::pidx(&db, &root).arg("sync").assert().code(0);
}

#[test]
fn a_missing_default_root_says_where_pi_keeps_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let mut cmd = assert_cmd::Command::cargo_bin("pidx").unwrap();
    cmd.arg("--db")
        .arg(&db)
        .args(["list", "--all"])
        .env("PI_CODING_AGENT_DIR", tmp.path().join("no-agent"))
        .env("PIDX_CONFIG", tmp.path().join("no-config.toml"))
        .env_remove("PIDX_ROOTS")
        .env_remove("PI_CODING_AGENT_SESSION_DIR");
    cmd.assert()
        .code(1)
        .stderr(contains("no sessions folder found"))
        .stderr(contains("~/.pi/agent/sessions"))
        .stderr(contains("--root DIR"));
}

#[test]
fn escape_sequences_in_file_and_folder_names_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    // A CSI clear-screen in a file name, an OSC title change in a folder, a C1 CSI, an OSC 8
    // hyperlink and an OSC 52 clipboard write in cwds and text.
    let evil_dir = root.join("--home-\u{1b}]0;T\u{7} x--");
    session(
        &evil_dir,
        "2026_\u{1b}[2Jx.jsonl",
        '1',
        "hello \u{9b}31m \u{1b}]52;c;aGk=\u{7}",
    );
    session(
        &root.join("--home-u-proj--"),
        "b\u{1b}]8;;https:x\u{1b}\\.jsonl",
        '2',
        "hello",
    );
    let db = tmp.path().join("i.db");
    let runs: [&[&str]; 5] = [
        &["sync", "--verbose"],
        &["list", "--all"],
        &["show", "0199aaaa"],
        &["search", "hello"],
        &["stats", "--by", "session"],
    ];
    for args in runs {
        let out = common::pidx(&db, &root).args(args).output().unwrap();
        for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                !text
                    .chars()
                    .any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{args:?} {what} carries a control character: {text:?}"
            );
        }
    }
}

#[test]
fn damage_deep_in_the_index_gives_the_rebuild_hint_everywhere() {
    let (_tmp, root) = common::conformance_copy();
    let db = root.parent().unwrap().join("i.db");
    common::pidx(&db, &root).arg("sync").assert().code(0);
    common::pidx(&db, &root)
        .args(["sync", "--check"])
        .assert()
        .code(0)
        .stderr(contains("is sound"));
    // Random bytes over every page past the first eighth (the schema and first pages stay).
    let mut bytes = std::fs::read(&db).unwrap();
    let pages = bytes.len() / 4096;
    assert!(pages > 40, "a deep page exists ({pages} pages)");
    let mut x: u32 = 2_463_534_242;
    for page in pages / 8..pages {
        for b in &mut bytes[page * 4096 + 100..page * 4096 + 4000] {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
    }
    std::fs::write(&db, bytes).unwrap();
    for args in [
        &["--no-sync", "search", "the"][..],
        &["--no-sync", "stats", "--by", "model"],
        &["sync", "--check"],
    ] {
        common::pidx(&db, &root)
            .args(args)
            .assert()
            .code(2)
            .stderr(contains("pidx sync --rebuild"))
            .stderr(contains("Error code").not());
    }
    common::pidx(&db, &root)
        .args(["sync", "--rebuild"])
        .assert()
        .code(0);
    common::pidx(&db, &root)
        .args(["sync", "--check"])
        .assert()
        .code(0);
}

/// The small things a first hour meets (issue 14, point 8), each said in one clear line.
#[test]
fn small_mistakes_get_clear_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    session(&root.join("--home-u-proj--"), "a.jsonl", '1', "hello there");
    let db = tmp.path().join("i.db");
    let run = |args: &[&str]| common::pidx(&db, &root).args(args).assert();
    run(&["--no-sync", "list", "--all"])
        .code(1)
        .stderr(contains("has never been synced"));
    run(&["sync"]).code(0).stdout(contains("1 file: 1 new"));
    run(&["sync", "--no-sync"])
        .code(2)
        .stderr(contains("--no-sync does nothing"));
    run(&["--json", "watch"])
        .code(2)
        .stderr(contains("--json does nothing"));
    run(&["sql", "PRAGMA table_info(v_usage)"])
        .code(0)
        .stdout(contains("session_id"));
    run(&["sql", "SELECT name FROM pragma_table_info('v_usage')"])
        .code(0)
        .stdout(contains("cost"));
    run(&["sql", "PRAGMA user_version = 3"])
        .code(2)
        .stderr(contains("read-only"));
    run(&["sql", ""]).code(2).stderr(contains("empty query"));
    run(&[
        "sql",
        "--timeout",
        "0.5",
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r",
    ])
    .code(2)
    .stderr(contains("ran longer than 0.5 s"));
    run(&["list", "--all", "-q", "re:("])
        .code(2)
        .stderr(contains("not a valid regular expression"));
    run(&["list", "--all", "-q", "zzzz"])
        .code(1)
        .stderr(contains("none of the 1 session of any project match"));
    run(&["stats", "--cwd", "/nonexistent"])
        .code(1)
        .stderr(contains("no activity for /nonexistent"))
        .stderr(contains("pidx list --cwd /nonexistent"));
    run(&["search", "hello", "--in", "USER"]).code(0);
    run(&[
        "search",
        "hello",
        "--since",
        "2026-02-01",
        "--until",
        "2026-01-01",
    ])
    .code(2)
    .stderr(contains("is not after --since"));
    run(&["list", "--all", "--limit", "0"])
        .code(2)
        .stderr(contains("--limit must be at least 1"));
    run(&["search", "hello", "--limit", "0"])
        .code(2)
        .stderr(contains("--limit must be at least 1"));
    for cmd in [
        "sync", "list", "show", "context", "tree", "status", "watch", "search", "stats", "sql",
    ] {
        run(&[cmd, "--help"]).code(0).stdout(contains("Examples:"));
    }
    run(&["watch", "--help"])
        .code(0)
        .stdout(contains("(2 when SECS is left out)"));
}

#[test]
fn rebuilding_under_a_watcher_says_to_stop_it_first() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    session(&root.join("--home-u-proj--"), "a.jsonl", '1', "hi");
    let db = tmp.path().join("i.db");
    let mut w = common::live::start_watch(&db, &root);
    common::pidx(&db, &root)
        .args(["sync", "--rebuild"])
        .assert()
        .code(2)
        .stderr(contains("stop the watcher first"));
    common::live::stop_cleanly(&mut w);
}

/// At 80 and at 200 columns, `list --all` and `stats --by session` fit the terminal, handles are
/// whole, and big numbers have separators.
#[test]
fn tables_fit_the_terminal_width() {
    use unicode_width::UnicodeWidthStr;
    let (_tmp, root) = common::conformance_copy();
    let db = root.parent().unwrap().join("i.db");
    common::pidx(&db, &root).arg("sync").assert().code(0);
    for width in [80usize, 200] {
        for args in [
            &["list", "--all"][..],
            &["stats", "--by", "session"],
            &["stats", "--by", "project"],
        ] {
            let out = common::pidx(&db, &root)
                .args(args)
                .env("COLUMNS", width.to_string())
                .output()
                .unwrap();
            assert!(out.status.success());
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(text.lines().count() > 5, "{args:?}: {text}");
            for line in text.lines() {
                assert!(
                    line.width() <= width,
                    "{args:?} at {width}: {line:?} is {} wide",
                    line.width()
                );
            }
        }
    }
    let out = common::pidx(&db, &root)
        .args(["list", "--all"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(" 019ccf7f "), "handles stay whole: {text}");
    let stats = common::pidx(&db, &root)
        .args(["stats", "--by", "model"])
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&stats.stdout).contains("1,866,756"));
}

#[test]
fn an_index_of_another_schema_read_only_says_what_a_writable_command_does() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let root = tmp.path().join("sessions");
    session(&root.join("--home-u-proj--"), "a.jsonl", '1', "hi");
    common::pidx(&db, &root).arg("sync").assert().code(0);
    let latest: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let set_version = |v: i64| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(&format!("PRAGMA user_version = {v}"))
            .unwrap();
    };
    // `--no-sync`: nothing may write, so the index is opened read-only.
    let sql = || {
        common::pidx(&db, &root)
            .args(["--no-sync", "sql", "SELECT count(*) FROM files"])
            .assert()
    };
    // One schema behind: migrated, not rebuilt.
    set_version(latest - 1);
    sql()
        .code(2)
        .stderr(contains(format!(
            "has schema {} and this pidx reads {latest}",
            latest - 1
        )))
        .stderr(contains("migrated in place"))
        .stderr(contains("run `pidx sync` where the index is writable"));
    // From a later pidx: rebuilt.
    set_version(latest + 1);
    sql()
        .code(2)
        .stderr(contains("rebuilt from the session files"));
    // A command that may write brings it back (rebuilt here), and `sql` reads it again.
    common::pidx(&db, &root)
        .arg("sync")
        .assert()
        .code(0)
        .stderr(contains("rebuilding it from the session files"));
    sql().code(0).stdout(contains('1'));
}
