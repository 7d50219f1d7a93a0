//! The binary as a user meets it: exit codes, --json that parses, hostile transcript text kept
//! off the terminal, clear refusals for bad index files, and no writes to session files.

use crate::common;

use std::path::{Path, PathBuf};

use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-1111-7000-8000-00000000000X","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}"#;

/// A root with two sessions of one project; the second has hostile text and a bad line.
fn corpus() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("--home-u-proj--");
    std::fs::create_dir_all(&dir).unwrap();
    let user = |id: &str, parent: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{}.000Z","message":{{"role":"user","content":{},"timestamp":1767225600000}}}}"#,
            id.len(),
            serde_json::Value::from(text)
        )
    };
    std::fs::write(
        dir.join("a.jsonl"),
        format!(
            "{}\n{}\n",
            HEADER.replace('X', "1"),
            user("e1", "null", "first session")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("b.jsonl"),
        format!(
            "{}\n{}\nnot json\n",
            HEADER.replace('X', "2"),
            user("e1", "null", "evil \u{1b}]0;pwned\u{7}\u{1b}[2J text")
        ),
    )
    .unwrap();
    let db = tmp.path().join("index.db");
    (tmp, root, db)
}

#[test]
fn list_json_parses_and_counts_sessions() {
    let (_tmp, root, db) = corpus();
    let out = common::pidx(&db, &root)
        .args(["list", "--all", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
}

/// A first page (`--limit N`, found through the listing index) is the start of the whole list,
/// for every N and for each project, ties and sessions without activity included.
#[test]
fn every_first_page_is_the_start_of_the_whole_list() {
    let (_tmp, root) = common::conformance_copy();
    let db = root.parent().unwrap().join("i.db");
    let list = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = common::pidx(&db, &root)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v.as_array().cloned().unwrap_or_default()
    };
    let all = list(&["list", "--all"]);
    assert!(all.len() >= 80, "{} sessions", all.len());
    let mut cwds: Vec<String> = all
        .iter()
        .filter_map(|s| s["cwd"].as_str().map(String::from))
        .collect();
    cwds.sort();
    cwds.dedup();
    for n in 1..=all.len() + 1 {
        let page = list(&["list", "--all", "--no-sync", "--limit", &n.to_string()]);
        assert_eq!(page[..], all[..n.min(all.len())], "--limit {n}");
    }
    for cwd in &cwds {
        let whole = list(&["list", "--no-sync", "--cwd", cwd]);
        for n in [1, 2, 3, 5] {
            let page = list(&["list", "--no-sync", "--cwd", cwd, "--limit", &n.to_string()]);
            assert_eq!(
                page[..],
                whole[..n.min(whole.len())],
                "--cwd {cwd} --limit {n}"
            );
        }
    }
}

#[test]
fn nothing_found_exits_1() {
    let (_tmp, root, db) = corpus();
    common::pidx(&db, &root)
        .args(["list", "--cwd", "/nowhere"])
        .assert()
        .code(1);
    common::pidx(&db, &root)
        .args(["show", "ffff"])
        .assert()
        .code(1)
        .stderr(contains("no session matches"));
}

#[test]
fn ambiguous_prefix_lists_candidates_by_handle_and_exits_2() {
    let (_tmp, root, db) = corpus();
    common::pidx(&db, &root)
        .args(["show", "0199aaaa"])
        .assert()
        .code(2)
        .stderr(contains("matches 2 sessions"))
        .stderr(contains("0199aaaa-1111-7000-8000-000000000001  "))
        .stderr(contains("0199aaaa-1111-7000-8000-000000000002  "))
        .stderr(contains("first session"));
    common::pidx(&db, &root)
        .args(["show", ""])
        .assert()
        .code(2)
        .stderr(contains("empty session id"));
}

/// pi's ids are UUIDv7: sessions made in the same minute share their first 8 characters. Every
/// handle `list` shows must name exactly one session again; an ambiguous prefix lists ten.
#[test]
fn every_listed_handle_resolves_to_exactly_one_session() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("--home-u-proj--");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..40u32 {
        // Same millisecond prefix for all; a copy of one file shares its whole id.
        let id = format!("019cb679-409f-7{:03x}-8000-{:012x}", i % 3, i * 7919);
        let header = HEADER.replace("0199aaaa-1111-7000-8000-00000000000X", &id);
        std::fs::write(dir.join(format!("s{i}.jsonl")), format!("{header}\n")).unwrap();
        if i == 0 {
            std::fs::write(dir.join("copy.jsonl"), format!("{header}\n")).unwrap();
        }
    }
    let db = tmp.path().join("index.db");
    let out = common::pidx(&db, &root)
        .args(["list", "--all"])
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    let (from, to) = (
        header.find(" ID ").unwrap() + 1,
        header.find(" CWD").unwrap(),
    );
    let handles: Vec<&str> = text.lines().skip(1).map(|l| l[from..to].trim()).collect();
    assert_eq!(handles.len(), 41, "{text}");
    assert!(handles.contains(&"copy.jsonl") && handles.contains(&"s0.jsonl"));
    let mut paths = std::collections::HashSet::new();
    for h in &handles {
        let out = common::pidx(&db, &root)
            .args(["--json", "show", h])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{h}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["handle"], *h);
        paths.insert(v["path"].as_str().unwrap().to_string());
    }
    assert_eq!(paths.len(), 41, "each handle names a different session");
    common::pidx(&db, &root)
        .args(["show", "019cb679"])
        .assert()
        .code(2)
        .stderr(contains("matches 41 sessions"))
        .stderr(contains("... and 31 more"));
}

#[test]
fn human_output_neutralises_escape_sequences() {
    let (_tmp, root, db) = corpus();
    for args in [
        vec!["list", "--all"],
        vec!["context", "0199aaaa-1111-7000-8000-000000000002"],
        vec!["tree", "0199aaaa-1111-7000-8000-000000000002"],
        vec!["show", "0199aaaa-1111-7000-8000-000000000002"],
    ] {
        let out = common::pidx(&db, &root).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.contains(&0x1b), "{args:?} let ESC through");
        assert!(!out.stdout.contains(&0x07), "{args:?} let BEL through");
    }
    // --json is exact: the escape survives, JSON-escaped.
    let out = common::pidx(&db, &root)
        .args(["list", "--all", "--json"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\u001b]0;pwned"));
}

#[test]
fn verbose_sync_reports_bad_lines_with_path_and_line() {
    let (_tmp, root, db) = corpus();
    common::pidx(&db, &root)
        .args(["sync", "--verbose"])
        .assert()
        .success()
        .stderr(contains("b.jsonl:3: invalid JSON"))
        .stdout(contains("1 bad line,"));
}

#[test]
fn a_file_that_is_not_an_index_is_refused_and_untouched() {
    let (tmp, root, _) = corpus();
    let db = tmp.path().join("notes.txt");
    std::fs::write(&db, "my precious notes\n".repeat(20)).unwrap();
    common::pidx(&db, &root)
        .args(["list", "--all"])
        .assert()
        .code(2)
        .stderr(contains("not a pidx index"));
    common::pidx(&db, &root)
        .args(["sync", "--rebuild"])
        .assert()
        .code(2);
    assert_eq!(
        std::fs::read_to_string(&db).unwrap(),
        "my precious notes\n".repeat(20)
    );
}

#[test]
fn a_foreign_sqlite_database_is_refused() {
    let (tmp, root, _) = corpus();
    let db = tmp.path().join("other.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    common::pidx(&db, &root)
        .args(["list", "--all"])
        .assert()
        .code(2)
        .stderr(contains("not a pidx index"));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn a_corrupt_index_says_how_to_rebuild() {
    let (_tmp, root, db) = corpus();
    common::pidx(&db, &root).arg("sync").assert().success();
    corrupt_pages(&db);
    common::pidx(&db, &root)
        .args(["list", "--all"])
        .assert()
        .code(2)
        .stderr(contains("pidx sync --rebuild"));
    common::pidx(&db, &root)
        .args(["sync", "--rebuild"])
        .assert()
        .success();
    common::pidx(&db, &root)
        .args(["list", "--all"])
        .assert()
        .success();
}

/// Overwrites everything after the 100-byte header with garbage (the header stays ours).
fn corrupt_pages(db: &Path) {
    let _ = std::fs::remove_file(db.with_extension("db-wal"));
    let mut bytes = std::fs::read(db).unwrap();
    for b in bytes.iter_mut().skip(100) {
        *b = 0xA5;
    }
    std::fs::write(db, bytes).unwrap();
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let (_tmp, root, db) = corpus();
    common::pidx(&db, &root).arg("sync").assert().success();
    let bin = assert_cmd::cargo::cargo_bin("pidx");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; for i in $(seq 200); do \"{}\" --db \"{}\" --root \"{}\" --no-sync list --all --json; done | head -c 10 >/dev/null",
            bin.display(),
            db.display(),
            root.display()
        ))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "a pidx writing into a closed pipe exited with {status}"
    );
}

#[test]
fn commands_never_modify_session_files() {
    let (_tmp, root, db) = corpus();
    let before = common::fingerprint(&root);
    for args in [
        vec!["sync"],
        vec!["list", "--all", "--json", "--with-text"],
        vec!["context", "0199aaaa-1111-7000-8000-000000000002", "--json"],
        vec!["tree", "0199aaaa-1111-7000-8000-000000000001"],
        vec!["show", "0199aaaa-1111-7000-8000-000000000001"],
        vec!["sync", "--rebuild"],
    ] {
        common::pidx(&db, &root).args(&args).assert().success();
    }
    assert_eq!(common::fingerprint(&root), before);
}

#[test]
fn the_conformance_corpus_is_never_modified() {
    // pi's own open() rewrites old files and repairs torn lines; pidx must not, for any file.
    let (tmp, root) = common::conformance_copy();
    let db = tmp.path().join("index.db");
    let before = common::fingerprint(&root);
    common::pidx(&db, &root)
        .args(["sync", "--verbose"])
        .assert()
        .success();
    common::pidx(&db, &root)
        .args(["list", "--all", "--json", "--with-text"])
        .assert()
        .success();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let paths: Vec<String> = conn
        .prepare("SELECT path FROM files ORDER BY path")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(paths.len() > 50, "only {} files indexed", paths.len());
    for path in &paths {
        for cmd in ["context", "tree", "show"] {
            let out = common::pidx(&db, &root)
                .args([cmd, path.as_str(), "--json"])
                .output()
                .unwrap();
            // Some files are ones pi cannot open; those fail cleanly (exit 1 or 2) and write nothing.
            assert!(
                out.status.code().is_some(),
                "{cmd} {path} was killed by a signal"
            );
        }
    }
    assert_eq!(common::fingerprint(&root), before);
}

#[test]
fn a_session_without_entries_has_an_empty_tree_like_pis_get_tree() {
    let (_tmp, root, db) = corpus();
    let file = root.join("--home-u-proj--").join("c.jsonl");
    std::fs::write(&file, format!("{}\n", HEADER.replace('X', "3"))).unwrap();
    let out = common::pidx(&db, &root)
        .args(["tree", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    common::pidx(&db, &root)
        .arg("tree")
        .arg(&file)
        .assert()
        .code(0)
        .stderr(contains("has no entries yet"));
}

#[test]
fn an_unknown_leaf_is_said_to_be_missing_from_the_session() {
    let (_tmp, root, db) = corpus();
    let file = root.join("--home-u-proj--").join("a.jsonl");
    common::pidx(&db, &root)
        .args(["context", "--leaf", "nope"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains("has no entry \"nope\""))
        .stderr(contains("no session matches").not());
}

/// A failed tool call (`isError`) says so in `context`, where its output alone ("Error: ...")
/// reads like any successful one; a successful call's output is not marked.
#[test]
fn a_failed_tool_result_says_the_call_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = root.join("--home-u-proj--");
    std::fs::create_dir_all(&dir).unwrap();
    let assistant = serde_json::json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",
        "message":{"role":"assistant","content":[
            {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"false"}},
            {"type":"toolCall","id":"c2","name":"grep","arguments":{"pattern":"Error"}}],
        "provider":"p","model":"m","stopReason":"toolUse","timestamp":1767225602000_i64}});
    let result = |id: &str, parent: &str, call: &str, tool: &str, text: &str, failed: bool| {
        serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:03.000Z",
            "message":{"role":"toolResult","toolCallId":call,"toolName":tool,
                       "content":[{"type":"text","text":text}],"isError":failed,"timestamp":1767225603000_i64}})
    };
    let lines = [
        HEADER.replace('X', "3"),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"run it","timestamp":1767225601000}}"#.to_string(),
        assistant.to_string(),
        result("r1", "a1", "c1", "bash", "Error: command exited with code 1", true).to_string(),
        result("r2", "r1", "c2", "grep", "Error: the log line we looked for", false).to_string(),
    ];
    std::fs::write(dir.join("c.jsonl"), lines.join("\n") + "\n").unwrap();
    let db = tmp.path().join("index.db");
    let out = common::pidx(&db, &root)
        .args(["context", "0199aaaa-1111-7000-8000-000000000003"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[bash] the call failed:"), "{text}");
    assert!(text.contains("[grep]\n"), "{text}");
    assert_eq!(text.matches("failed").count(), 1, "{text}");
}

/// `context --max-chars` pages through every conversation of the conformance corpus: the
/// pieces, joined page after page until no cursor is left, are exactly `context --json`'s
/// messages; every page stays within its budget (a message longer than it goes on in the next
/// page); `--last N` is the whole context's last N messages.
#[test]
fn context_pages_join_to_the_whole_context() {
    let (tmp, root) = common::conformance_copy();
    let db = tmp.path().join("index.db");
    let json = |args: &[&str]| -> serde_json::Value {
        let out = common::pidx(&db, &root).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let sessions = json(&["list", "--all", "--json"]);
    let mut paged_sessions = 0;
    for s in sessions.as_array().unwrap() {
        let path = s["path"].as_str().unwrap();
        if s["messageCount"].as_u64().unwrap_or(0) == 0 {
            continue;
        }
        // pi's messages byte for byte (some hold escapes serde_json cannot read back).
        let raw = |args: &[&str]| -> String {
            let out = common::pidx(&db, &root).args(args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let refused = |args: &[&str]| {
            let out = common::pidx(&db, &root).args(args).output().unwrap();
            (out.status.code() == Some(2)).then_some(out.stderr)
        };
        if let Some(why) = refused(&["context", "--json", path]) {
            let paged = refused(&["context", "--json", path, "--max-chars", "150"]);
            assert_eq!(paged, Some(why), "{path}: refused whole, so paged");
            continue;
        }
        let whole = raw(&["context", "--json", path]);
        let (mut got, mut text): (Vec<String>, String) = (Vec::new(), String::new());
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut args = vec!["context", "--json", path, "--max-chars", "150"];
            if let Some(c) = &cursor {
                args.extend(["--cursor", c.as_str()]);
            }
            let page = json(&args);
            pages += 1;
            assert!(pages < 5000, "{path}: paging never ends");
            let mut used = 0;
            for m in page["messages"].as_array().unwrap() {
                let piece = m["text"].as_str().unwrap();
                used += piece.chars().count();
                text.push_str(piece);
                let total = m["total"].as_u64();
                if total.is_none() || m["to"].as_u64() == total {
                    got.push(std::mem::take(&mut text));
                }
            }
            assert!(used <= 150, "{path}: a page of {used} characters");
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        let messages = |m: &[String]| format!("{{\"messages\":[{}]", m.join(","));
        assert!(
            whole.starts_with(&messages(&got)),
            "{path}: {got:?}\n{whole}"
        );
        paged_sessions += usize::from(pages > 1);
        let last = raw(&["context", "--json", path, "--last", "2"]);
        let tail = &got[got.len().saturating_sub(2)..];
        assert!(last.starts_with(&messages(tail)), "{path}: {last}");
    }
    assert!(
        paged_sessions > 10,
        "only {paged_sessions} sessions took more than one page"
    );
    // Text pages end with the command for the next one, and the last page with none.
    let long = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["messageCount"].as_u64() > Some(5))
        .unwrap();
    let out = common::pidx(&db, &root)
        .args([
            "context",
            long["path"].as_str().unwrap(),
            "--max-chars",
            "100",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let next = text.lines().last().unwrap();
    assert!(
        next.starts_with("… more follows: pidx context ")
            && next.contains("--cursor 'context:t:f:"),
        "{text}"
    );
    // A cursor of another format is refused with a one-line error.
    let cursor = next.rsplit("--cursor ").next().unwrap().trim_matches('\'');
    let out = common::pidx(&db, &root)
        .args([
            "context",
            "--json",
            long["path"].as_str().unwrap(),
            "--max-chars",
            "100",
            "--cursor",
            cursor,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("start over"),
        "{out:?}"
    );
}
