//! What a daily user trips over (issue 54): titles cut in a pipe, bare numbers, money printed
//! three ways, `stats` rows that mislead, picker handles cut short, a silent `forget --list`.
//! Each test drives the `pidx` binary on sessions written here, in a temp folder.

use std::path::PathBuf;

use serde_json::json;

use crate::common;

/// A temp folder with a sessions root (pi's tree layout) and an index path beside it.
pub(crate) struct Corpus {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub db: PathBuf,
}

impl Corpus {
    pub fn new() -> Corpus {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sessions");
        std::fs::create_dir_all(&root).unwrap();
        let db = tmp.path().join("index.db");
        Corpus {
            _tmp: tmp,
            root,
            db,
        }
    }

    /// Writes session `id` (its header with `cwd`, when given, then `lines`) in `folder`.
    pub fn session(&self, folder: &str, id: &str, cwd: Option<&str>, lines: &[String]) {
        let dir = self.root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let mut header = json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-01-01T00:00:00.000Z"});
        if let Some(cwd) = cwd {
            header["cwd"] = json!(cwd);
        }
        std::fs::write(
            dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
            format!("{header}\n{}\n", lines.join("\n")),
        )
        .unwrap();
    }

    pub fn pidx(&self) -> assert_cmd::Command {
        common::pidx(&self.db, &self.root)
    }

    /// Runs `pidx ARGS` and returns its stdout, checking it succeeded.
    pub fn out(&self, args: &[&str]) -> String {
        let out = self.pidx().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "pidx {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

pub(crate) fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1767225601000_i64}})
    .to_string()
}

/// An assistant reply of `model` that used `tokens` input tokens and cost `cost`.
pub(crate) fn assistant(id: &str, parent: &str, model: &str, tokens: i64, cost: f64) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}],
            "provider": "anthropic", "model": model,
            "usage": {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": tokens, "cost": {"total": cost}},
            "stopReason": "stop", "timestamp": 1767225602000_i64}})
    .to_string()
}

/// One expensive session: 3,153,254 tokens for $1,795.4048.
fn expensive(c: &Corpus) {
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000001",
        Some("/home/u/app"),
        &[
            user("u1", None, "refactor the parser"),
            assistant("a1", "u1", "claude-x", 3_153_254, 1795.4048),
        ],
    );
}

#[test]
fn a_piped_listing_keeps_whole_titles() {
    let c = Corpus::new();
    let title = format!("a long first message{} that ends here", " word".repeat(30));
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000002",
        Some("/home/u/app"),
        &[user("u1", None, &title)],
    );
    // assert_cmd's stdout is a pipe: nothing may be cut.
    let out = c.out(&["list", "--all"]);
    assert!(out.contains(title.trim()), "{out}");
    assert!(!out.contains('…'), "{out}");
}

#[test]
fn show_prints_tokens_with_separators_and_cost_to_the_cent() {
    let c = Corpus::new();
    expensive(&c);
    let out = c.out(&["show", "019cb679"]);
    assert!(
        out.contains("3,153,254 total: 3,153,254 in, 0 out"),
        "{out}"
    );
    assert!(out.contains("cost") && out.contains("$1,795.40\n"), "{out}");
    assert!(
        out.contains("claude-x: 3,153,254 tokens, $1,795.40"),
        "{out}"
    );
}

#[test]
fn stats_prints_money_as_show_does() {
    let c = Corpus::new();
    expensive(&c);
    let out = c.out(&["stats"]);
    assert!(out.contains("$1,795.40"), "{out}");
    assert!(!out.contains("$1,795.4048"), "{out}");
    assert!(out.contains("3,153,254"), "{out}");
}

/// An entry of `kind` (a compaction or a branch summary) with `usage` when given.
fn summary(kind: &str, id: &str, parent: &str, usage: Option<f64>) -> String {
    let mut e = json!({"type": kind, "id": id, "parentId": parent,
        "timestamp": "2026-01-01T00:00:03.000Z", "summary": "what happened",
        "firstKeptEntryId": parent, "tokensBefore": 1000, "fromId": parent});
    if let Some(cost) = usage {
        e["usage"] = json!({"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": 110, "cost": {"total": cost}});
    }
    e.to_string()
}

/// A tool result that recorded the usage of a model it called.
fn tool_result_with_usage(id: &str, parent: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-01-01T00:00:04.000Z",
        "message": {"role": "toolResult", "toolCallId": "t1", "toolName": "ask",
            "content": [{"type": "text", "text": "ok"}], "isError": false,
            "usage": {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": 10, "cost": {"total": 0.5}},
            "timestamp": 1767225604000_i64}})
    .to_string()
}

/// `stats --by model --json --tz TZ` as (model, compactions, cost) rows.
fn by_model(c: &Corpus, tz: &str) -> Vec<(String, i64, f64)> {
    let args = ["stats", "--by", "model", "--json", "--tz", tz];
    let v: serde_json::Value = serde_json::from_str(&c.out(&args)).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"]["model"].as_str().unwrap().to_string(),
                r["compactions"].as_i64().unwrap(),
                r["cost"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn stats_by_model_puts_everything_without_a_model_in_one_row() {
    let c = Corpus::new();
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000003",
        Some("/home/u/app"),
        &[
            user("u1", None, "go"),
            assistant("a1", "u1", "claude-x", 1000, 2.0),
            tool_result_with_usage("t1", "a1"),
            summary("compaction", "c1", "t1", None),
            summary("compaction", "c2", "c1", Some(0.25)),
            summary("branch_summary", "b1", "c2", Some(0.25)),
        ],
    );
    let no_model = pidx::query::stats::NO_MODEL;
    // From the rollups, then from the entries (an offset the quarter-hour rollups cannot
    // answer).
    for tz in ["UTC", "+00:07"] {
        let rows = by_model(&c, tz);
        assert_eq!(
            rows,
            vec![
                ("claude-x".to_string(), 0, 2.0),
                (no_model.to_string(), 2, 1.0),
            ],
            "{tz}"
        );
    }
}

#[test]
fn stats_names_the_project_of_sessions_without_a_cwd() {
    let c = Corpus::new();
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000004",
        None,
        &[user("u1", None, "no cwd here")],
    );
    let out = c.out(&["stats", "--by", "project"]);
    let row = out.lines().nth(1).unwrap_or_default();
    assert!(row.starts_with("(no cwd)  "), "{out}");
}

#[test]
fn stats_by_project_puts_the_costliest_first() {
    let c = Corpus::new();
    for (folder, id, cwd, cost) in [
        (
            "--a-cheap--",
            "019cb679-0000-7000-8000-00000000000a",
            "/a/cheap",
            1.0,
        ),
        (
            "--m-dear--",
            "019cb679-0000-7000-8000-00000000000b",
            "/m/dear",
            5.0,
        ),
        (
            "--z-mid--",
            "019cb679-0000-7000-8000-00000000000c",
            "/z/mid",
            3.0,
        ),
    ] {
        c.session(
            folder,
            id,
            Some(cwd),
            // Entry ids of their own: the same id and time in two files is a fork's copy.
            &[
                user(&format!("u{id}"), None, "hi"),
                assistant(&format!("a{id}"), &format!("u{id}"), "m", 10, cost),
            ],
        );
    }
    let out = c.out(&["stats", "--by", "project"]);
    let projects: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(projects, ["/m/dear", "/z/mid", "/a/cheap"], "{out}");
    // Nested under a period, by the figure within each period.
    let out = c.out(&["stats", "--by", "month,project", "--tz", "UTC"]);
    let projects: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(projects, ["/m/dear", "/z/mid", "/a/cheap"], "{out}");
}

#[test]
fn stats_by_session_keeps_a_readable_title_beside_a_long_handle() {
    let c = Corpus::new();
    // Ids that differ in their last characters only: handles of nearly the whole id.
    for (i, title) in ["parse the config file", "write the release notes"]
        .iter()
        .enumerate()
    {
        c.session(
            "--home-u-app--",
            &format!("019cb679-0000-7000-8000-0000000000{i:02}"),
            Some("/home/u/app"),
            &[user("u1", None, title), assistant("a1", "u1", "m", 10, 1.0)],
        );
    }
    let table = |columns: usize| {
        let out = c
            .pidx()
            .args(["stats", "--by", "session"])
            .env("COLUMNS", columns.to_string())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // Figures are left out before the titles are cut.
    let out = table(120);
    assert!(out.contains("parse the config file"), "{out}");
    assert!(out.contains("write the release notes"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");
    // Narrower than that, the titles are cut, never the handles.
    let out = table(90);
    assert!(out.lines().all(|l| l.chars().count() <= 90), "{out}");
    assert!(out.contains("parse"), "{out}");
    for i in 0..2 {
        let handle = format!("019cb679-0000-7000-8000-0000000000{i:02} ");
        assert!(out.contains(&handle), "{out}");
    }
}

#[test]
fn forget_list_with_nothing_forgotten_says_so_and_exits_1() {
    let c = Corpus::new();
    expensive(&c);
    c.out(&["sync"]);
    let out = c.pidx().args(["forget", "--list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pidx: no session is forgotten (`pidx forget SESSION` forgets one)\n"
    );
}

#[test]
fn explain_counts_the_junk_alternatives_instead_of_listing_them() {
    let c = Corpus::new();
    // Base64 pasted into a session: 80 fragments that happen to end with `fn`.
    let junk: Vec<String> = (0..80)
        .map(|i| format!("QmFz{:04}ZTY0fn", i * 37))
        .collect();
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000005",
        Some("/home/u/app"),
        &[
            user("u1", None, &junk.join(" ")),
            user("u2", Some("u1"), "then fn parse_line(input) was written"),
        ],
    );
    let out = c.out(&["search", r"re:fn \w+_line", "--explain"]);
    let plan = out.lines().find(|l| l.starts_with("plan:")).unwrap();
    assert!(plan.contains(r#""fn" OR "#), "{out}");
    assert!(plan.contains("… 77 more"), "{out}");
    assert!(plan.len() < 200, "{out}");
    assert!(out.contains("hits:      1 (limit 20)"), "{out}");
    // The JSON keeps the whole plan.
    let json: serde_json::Value =
        serde_json::from_str(&c.out(&["--json", "search", r"re:fn \w+_line", "--explain"]))
            .unwrap();
    let fts = json["plan"]["fts"].as_str().unwrap();
    assert!(
        junk.iter().all(|j| fts.contains(&j.to_lowercase())),
        "{fts}"
    );
}

#[test]
fn the_readme_sql_example_prints_no_float_noise_and_no_blank_model() {
    let c = Corpus::new();
    c.session(
        "--home-u-app--",
        "019cb679-0000-7000-8000-000000000006",
        Some("/home/u/app"),
        &[
            user("u1", None, "go"),
            assistant("a1", "u1", "claude-x", 10, 0.1),
            assistant("a2", "a1", "claude-x", 10, 0.2),
            tool_result_with_usage("t1", "a2"),
        ],
    );
    // The README's example, as written there.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("$ pidx sql "))
        .unwrap();
    let query = line
        .trim_start_matches("$ pidx sql ")
        .trim()
        .trim_matches('"');
    let out = c.out(&["sql", query]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [vec!["(no", "model)", "0.5"], vec!["claude-x", "0.3"]],
        "{out}"
    );
    // A sum a binary float cannot hold reads as sqlite3 prints it; JSON keeps the float.
    let out = c.out(&[
        "sql",
        "SELECT sum(cost) AS s FROM v_usage WHERE model IS NOT NULL",
    ]);
    assert_eq!(out.lines().nth(1).map(str::trim), Some("0.3"), "{out}");
    let json = c.out(&[
        "--json",
        "sql",
        "SELECT sum(cost) AS s FROM v_usage WHERE model IS NOT NULL",
    ]);
    assert!(json.contains("0.30000000000000004"), "{json}");
}
