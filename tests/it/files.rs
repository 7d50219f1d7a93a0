//! File history (issue 34): touches recorded at ingest for every tool-call shape pi writes,
//! `pidx files`, `pidx blame` and `pidx commits` on git repositories built here, each session
//! written as pi would (a toolCall, then its toolResult) while the test applies its edits to
//! the files on disk.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common;

/// One session being written: its lines, and the clock its entries take.
pub(crate) struct Session {
    lines: Vec<String>,
    cwd: String,
    t_ms: i64,
    n: usize,
    last: Option<String>,
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// 2026-01-01T00:00:00Z.
pub(crate) const T0: i64 = 1_767_225_600_000;

impl Session {
    pub(crate) fn new(id: &str, cwd: &str, start_ms: i64) -> Session {
        let header = json!({"type": "session", "version": 3, "id": id,
                            "timestamp": iso(start_ms), "cwd": cwd});
        Session {
            lines: vec![header.to_string()],
            cwd: cwd.to_string(),
            t_ms: start_ms,
            n: 0,
            last: None,
        }
    }

    fn entry(&mut self, message: Value) -> String {
        self.n += 1;
        self.t_ms += 1000;
        let id = format!("{:08x}", self.n + (self.t_ms as usize % 100_000) * 1000);
        let e = json!({"type": "message", "id": id, "parentId": self.last,
                       "timestamp": iso(self.t_ms), "message": message});
        self.lines.push(e.to_string());
        self.last = Some(id.clone());
        id
    }

    /// A user message, as the person typed it.
    pub(crate) fn user(&mut self, text: &str) {
        self.entry(json!({"role": "user", "content": text, "timestamp": self.t_ms}));
    }

    /// An assistant message with one tool call; its result when `result` is `Some(is_error)`.
    pub(crate) fn call(&mut self, tool: &str, args: Value, result: Option<bool>) -> String {
        let call_id = format!("call_{}", self.n);
        self.entry(json!({"role": "assistant", "content": [
            {"type": "text", "text": "doing it"},
            {"type": "toolCall", "id": call_id, "name": tool, "arguments": args}],
            "provider": "p", "model": "m", "stopReason": "toolUse"}));
        if let Some(is_error) = result {
            self.result(&call_id, tool, is_error);
        }
        call_id
    }

    fn result(&mut self, call_id: &str, tool: &str, is_error: bool) {
        self.entry(
            json!({"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                          "content": [{"type": "text", "text": "done"}], "isError": is_error}),
        );
    }

    /// pi's edit on the disk file, then the call (a failed edit changes nothing).
    pub(crate) fn edit(&mut self, rel: &str, old: &str, new: &str) {
        let path = Path::new(&self.cwd).join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let ok = text.matches(old).count() == 1;
        if ok {
            std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
        }
        self.call(
            "edit",
            json!({"path": rel, "edits": [{"oldText": old, "newText": new}]}),
            Some(!ok),
        );
    }

    pub(crate) fn write(&mut self, rel: &str, content: &str) {
        let path = Path::new(&self.cwd).join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        self.call(
            "write",
            json!({"path": rel, "content": content}),
            Some(false),
        );
    }

    pub(crate) fn save(&self, root: &Path, name: &str) -> PathBuf {
        let dir = root.join("--p--");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, self.lines.join("\n") + "\n").unwrap();
        path
    }
}

/// A temp folder with a sessions root and a project folder.
pub(crate) struct Fixture {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) project: PathBuf,
}

pub(crate) fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Fixture { tmp, root, project }
}

impl Fixture {
    pub(crate) fn cwd(&self) -> String {
        self.project.to_string_lossy().into_owned()
    }

    pub(crate) fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = common::pidx(&self.tmp.path().join("index.db"), &self.root)
            .env("HOME", self.tmp.path())
            .env("PIDX_CONFIG", self.tmp.path().join("no-config.toml"))
            .current_dir(&self.project)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let (code, out, err) = self.run(&all);
        assert!(code == 0 || code == 1, "pidx {args:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// Rows of `v_file_touches` as (kind, path, status) strings.
    fn touches(&self) -> Vec<(String, String, String)> {
        let v = self.json(&[
            "sql",
            "SELECT kind, path, coalesce(status, '-') AS status FROM v_file_touches ORDER BY ts_ms, path",
        ]);
        rows(&v)
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("kind"), s("path"), s("status"))
            })
            .collect()
    }
}

/// The rows of a `pidx sql --json` answer, whatever its wrapping.
fn rows(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("rows")
            .or_else(|| o.get("results"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn t(kind: &str, path: &str, status: &str) -> (String, String, String) {
    (kind.into(), path.into(), status.into())
}

#[test]
fn every_tool_call_shape_is_recorded_with_its_status() {
    let f = fixture();
    let mut s = Session::new("019a0000-0000-7000-8000-000000000001", "/p", T0);
    s.call(
        "read",
        json!({"path": "src/a.rs", "offset": 3}),
        Some(false),
    );
    s.call(
        "edit",
        json!({"path": "src/a.rs", "edits": [{"oldText": "a\nb", "newText": "a\nB\nC"}]}),
        Some(false),
    );
    s.call(
        "edit",
        json!({"path": "@src/b.rs", "oldText": "x", "newText": "y"}),
        Some(false),
    );
    s.call(
        "edit",
        json!({"path": "src/c.rs", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"}),
        Some(true),
    );
    s.call(
        "write",
        json!({"path": "/etc/out.txt", "content": "1\n2\n"}),
        Some(false),
    );
    s.call("ls", json!({}), Some(false));
    s.call(
        "grep",
        json!({"pattern": "fn", "path": "../q"}),
        Some(false),
    );
    s.call("find", json!({"pattern": "*.rs", "path": "src"}), None);
    s.call(
        "bash",
        json!({"command": "cargo fmt && cat src/main.rs > /tmp/x.log"}),
        Some(false),
    );
    // Skipped: an unknown tool, a path that is not a string, an edit with no replacement.
    s.call("mystery", json!({"path": "src/z.rs"}), Some(false));
    s.call("read", json!({"path": 42}), Some(false));
    s.call("edit", json!({"path": "src/d.rs", "edits": []}), Some(true));
    s.save(&f.root, "one");
    assert_eq!(
        f.touches(),
        [
            t("read", "/p/src/a.rs", "ok"),
            t("edit", "/p/src/a.rs", "ok"),
            t("edit", "/p/src/b.rs", "ok"),
            t("edit", "/p/src/c.rs", "error"),
            t("write", "/etc/out.txt", "ok"),
            t("list", "/p", "ok"),
            t("search", "/q", "ok"),
            t("search", "/p/src", "-"),
            t("bash", "/p/src/main.rs", "ok"),
            t("bash", "/tmp/x.log", "ok"),
        ]
    );
    let v = f.json(&[
        "sql",
        "SELECT added, removed FROM v_file_touches WHERE kind = 'edit' ORDER BY ts_ms LIMIT 1",
    ]);
    assert_eq!(rows(&v)[0], json!({"added": 2, "removed": 1}));
}

#[test]
fn windows_cwds_and_paths_are_kept_with_forward_slashes() {
    let f = fixture();
    let mut s = Session::new(
        "019a0000-0000-7000-8000-000000000002",
        "C:\\Users\\me\\app",
        T0,
    );
    s.call(
        "edit",
        json!({"path": "src\\main.rs", "oldText": "a", "newText": "b"}),
        Some(false),
    );
    s.call(
        "read",
        json!({"path": "D:\\notes\\..\\todo.md"}),
        Some(false),
    );
    s.save(&f.root, "win");
    assert_eq!(
        f.touches(),
        [
            t("edit", "C:/Users/me/app/src/main.rs", "ok"),
            t("read", "D:/todo.md", "ok"),
        ]
    );
}

#[test]
fn a_result_in_a_later_sync_settles_the_status_and_a_fork_counts_once() {
    let f = fixture();
    let mut s = Session::new("019a0000-0000-7000-8000-000000000003", "/p", T0);
    let call = s.call(
        "edit",
        json!({"path": "a.rs", "oldText": "a", "newText": "b"}),
        None,
    );
    let path = s.save(&f.root, "grow");
    assert_eq!(f.touches(), [t("edit", "/p/a.rs", "-")]);
    s.result(&call, "edit", false);
    s.save(&f.root, "grow");
    assert_eq!(f.touches(), [t("edit", "/p/a.rs", "ok")]);
    // A fork: pi copies the entries with their ids and timestamps into a later session.
    let mut fork = std::fs::read_to_string(&path).unwrap();
    fork = fork
        .replacen("000000000003", "000000000004", 1)
        .replacen(&iso(T0), &iso(T0 + 500), 1);
    std::fs::write(path.with_file_name("fork.jsonl"), fork).unwrap();
    assert_eq!(f.touches(), [t("edit", "/p/a.rs", "ok")]);
    let n = f.json(&["sql", "SELECT count(*) AS n FROM v_sessions"]);
    assert_eq!(rows(&n)[0]["n"], 2, "the fork is indexed: {n}");
    let v = f.json(&["files", "/p/a.rs"]);
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
}

/// The handle of each blamed line (`-` for none).
fn blamed(v: &Value) -> Vec<String> {
    v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l["by"]["session_id"]
                .as_str()
                .map_or("-".to_string(), |s| s[s.len() - 1..].to_string())
        })
        .collect()
}

#[test]
fn blame_follows_later_sessions_failed_edits_whitespace_and_people() {
    let f = fixture();
    let cwd = f.cwd();
    let file = f.project.join("src/lib.rs");
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("src/lib.rs", "fn one() {\n}\n\nfn two() {\n}\n");
    a.edit("src/lib.rs", "fn two() {\n}", "fn two() {\n    2\n}");
    a.edit("src/lib.rs", "no such text", "never");
    a.save(&f.root, "a");
    // A person adds a line at the top and trailing spaces to one of a's lines.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("// by hand\n{}", text.replace("    2\n", "    2  \n")),
    )
    .unwrap();
    let mut b = Session::new("019a0000-0000-7000-8000-00000000000b", &cwd, T0 + 3_600_000);
    // pi matched "    2" against "    2  " fuzzily and wrote the normalised line plus b's.
    let now = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, now.replace("    2  \n}", "    2\n    3\n}")).unwrap();
    b.call(
        "edit",
        json!({"path": "src/lib.rs", "oldText": "    2\n}", "newText": "    2\n    3\n}"}),
        Some(false),
    );
    b.save(&f.root, "b");
    let v = f.json(&["blame", "src/lib.rs"]);
    assert_eq!(blamed(&v), ["-", "a", "a", "a", "a", "a", "b", "a"], "{v}");
    let (code, out, _) = f.run(&["blame", "src/lib.rs", "-L", "2,3"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("019a0000") && lines[0].ends_with("2) fn one() {"),
        "{out}"
    );
}

#[test]
fn blame_of_a_rewritten_file_and_moved_lines() {
    let f = fixture();
    let cwd = f.cwd();
    let file = f.project.join("m.py");
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("m.py", "import os\nimport sys\n");
    a.edit(
        "m.py",
        "import sys\n",
        "import sys\n\ndef helper_function():\n    return 42\n",
    );
    a.save(&f.root, "a");
    let mut b = Session::new("019a0000-0000-7000-8000-00000000000b", &cwd, T0 + 60_000);
    b.write(
        "m.py",
        "import os\n\ndef helper_function():\n    return 42\n\ndef main():\n    pass\n",
    );
    b.save(&f.root, "b");
    // A person moves main above the helper.
    std::fs::write(
        &file,
        "import os\n\ndef main():\n    pass\n\ndef helper_function():\n    return 42\n",
    )
    .unwrap();
    let v = f.json(&["blame", "m.py"]);
    // b's write produced every line of the file (a's earlier lines do not show through it);
    // the moved lines stay b's, but for a blank line, which could be anyone's.
    assert_eq!(blamed(&v), ["b", "b", "b", "b", "-", "b", "b"], "{v}");
}

pub(crate) fn git_commit(dir: &Path, msg: &str, secs: i64) -> String {
    let repo = git2::Repository::open(dir).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::new("Person", "p@example.com", &git2::Time::new(secs, 0)).unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, msg, &tree, &parents)
        .unwrap()
        .to_string()
}

#[test]
fn commits_name_the_sessions_behind_their_added_lines() {
    let f = fixture();
    git2::Repository::init(&f.project).unwrap();
    let cwd = f.cwd();
    std::fs::write(f.project.join("README"), "by hand\n").unwrap();
    let first = git_commit(&f.project, "by hand", T0 / 1000);
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("src/x.rs", "fn x() {}\nfn y() {}\n");
    let mut b = Session::new("019a0000-0000-7000-8000-00000000000b", &cwd, T0 + 10_000);
    b.edit("src/x.rs", "fn y() {}\n", "fn y() {}\nfn z() {}\n");
    std::fs::write(f.project.join("NOTES"), "a person's line\n").unwrap();
    let second = git_commit(&f.project, "x and notes", T0 / 1000 + 60);
    a.save(&f.root, "a");
    b.save(&f.root, "b");
    let v = f.json(&["commits"]);
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), 2, "{v}");
    assert_eq!(all[0]["commit"], second.as_str());
    assert_eq!(all[0]["added"], 4);
    let parts: Vec<(String, u64)> = all[0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["session_id"].as_str().unwrap();
            (id[id.len() - 1..].to_string(), p["lines"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(parts, [("a".to_string(), 2), ("b".to_string(), 1)]);
    assert_eq!(all[1]["commit"], first.as_str());
    assert_eq!(all[1]["sessions"], json!([]));
    // `show` lists the commit a session's edits ended up in.
    let show = f.json(&["show", "019a0000-0000-7000-8000-00000000000b"]);
    assert_eq!(show["commits"][0]["commit"], second.as_str(), "{show}");
}

#[test]
fn files_lists_touches_newest_first_with_a_compact_diff() {
    let f = fixture();
    let cwd = f.cwd();
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("notes.md", "one\ntwo\n");
    a.edit("notes.md", "two\n", "TWO\nthree\n");
    a.call("read", json!({"path": "notes.md"}), Some(false));
    a.save(&f.root, "a");
    let (code, out, err) = f.run(&["files", "notes.md"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains(" read ") && lines[0].contains("notes.md"),
        "{out}"
    );
    assert!(
        lines[1].contains(" edit ") && lines[1].ends_with("+2 -1"),
        "{out}"
    );
    assert_eq!(
        &lines[2..5],
        ["      -two", "      +TWO", "      +three"],
        "{out}"
    );
    let v = f.json(&["files", "notes.md", "--kind", "write"]);
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["kind"], "write");
    assert_eq!(v[0]["status"], "ok");
    // Without a path: this project's most changed files.
    let top = f.json(&["files"]);
    assert_eq!(top[0]["changes"], 2, "{top}");
    // Nothing found exits 1.
    assert_eq!(f.run(&["files", "nowhere.rs"]).0, 1);
}

#[test]
fn printed_lines_keep_their_indentation_and_lose_escape_sequences() {
    let f = fixture();
    let cwd = f.cwd();
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("t.txt", "fn f() {\n    \u{1b}[2Jbody\n}\n");
    a.edit("t.txt", "}\n", "}\n\u{1b}]0;title\u{7}\n");
    a.save(&f.root, "a");
    let (code, out, err) = f.run(&["blame", "t.txt"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("2)     \u{fffd}[2Jbody"), "{out}");
    let (_, out, _) = f.run(&["files", "t.txt"]);
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(out.contains("      +\u{fffd}]0;title\u{fffd}"), "{out}");
}

#[test]
fn blame_follows_a_file_git_saw_renamed() {
    let f = fixture();
    git2::Repository::init(&f.project).unwrap();
    let cwd = f.cwd();
    let mut a = Session::new("019a0000-0000-7000-8000-00000000000a", &cwd, T0);
    a.write("old.rs", "fn one() {}\nfn two() {}\nfn three() {}\n");
    a.save(&f.root, "a");
    git_commit(&f.project, "add", T0 / 1000 + 10);
    std::fs::rename(f.project.join("old.rs"), f.project.join("new.rs")).unwrap();
    git_commit(&f.project, "rename", T0 / 1000 + 20);
    let mut b = Session::new("019a0000-0000-7000-8000-00000000000b", &cwd, T0 + 30_000);
    b.edit("new.rs", "fn two() {}\n", "fn two() { 2 }\n");
    b.save(&f.root, "b");
    let v = f.json(&["blame", "new.rs"]);
    assert_eq!(blamed(&v), ["a", "b", "a"], "{v}");
}
