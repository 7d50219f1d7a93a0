//! `pidx report` and the model rows of `pidx stats`: quiet days are periods of their own, undated
//! activity is kept apart, `--html -` writes to standard output, `--json` prints the report's
//! data, every session id it prints is one `pidx show` takes, and no model row is called `-`.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

const NO_MODEL: &str = pidx::query::stats::NO_MODEL;

fn assistant(id: &str, parent: &str, ts: &str, model: &str, cost: f64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c-{id}","name":"bash","arguments":{{}}}}],"provider":"p","model":"{model}","usage":{{"input":100,"output":10,"cacheRead":300,"cacheWrite":100,"totalTokens":510,"cost":{{"total":{cost}}}}},"timestamp":1}}}}"#
    )
}

fn user(id: &str, parent: &str, ts: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"user","content":"hi","timestamp":1}}}}"#
    )
}

fn tool_result(id: &str, parent: &str, ts: &str, error: bool) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"toolResult","toolCallId":"c-{parent}","toolName":"bash","content":[],"isError":{error},"timestamp":1}}}}"#
    )
}

/// Two sessions whose ids share their first 12 characters (pi's UUIDv7 ids do within a minute): one active on 2026-01-01 and
/// 2026-01-04 (two quiet days between) with an entry that has no valid timestamp, the other on
/// 2026-01-03.
fn corpus(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("--home-u-app--");
    std::fs::create_dir_all(&dir).unwrap();
    let header = |id: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/app"}}"#
        )
    };
    let a = [
        header("0199aaaa-bbbb-7000-8000-000000000001"),
        user("u1", "x", "2026-01-01T10:00:00.000Z"),
        assistant("a1", "u1", "2026-01-01T10:00:01.000Z", "sonnet", 1.0),
        tool_result("t1", "a1", "2026-01-01T10:00:02.000Z", true),
        assistant("a2", "t1", "2026-01-04T10:00:00.000Z", "sonnet", 2.0),
        assistant("a3", "a2", "not a date", "sonnet", 4.0),
    ];
    let b = [
        header("0199aaaa-bbbc-7000-8000-000000000002"),
        user("v1", "x", "2026-01-03T10:00:00.000Z"),
        assistant("b1", "v1", "2026-01-03T10:00:01.000Z", "gpt", 0.5),
        tool_result("w1", "b1", "2026-01-03T10:00:02.000Z", false),
    ];
    let mut paths = Vec::new();
    for (name, lines) in [("a", &a[..]), ("b", &b[..])] {
        let path = dir.join(format!("2026-01-01T00-00-00-000Z_{name}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        paths.push(path);
    }
    paths
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root);
    let db = tmp.path().join("i.db");
    (tmp, root, db)
}

fn report_json(db: &Path, root: &Path, more: &[&str]) -> Value {
    // Plain dates in --since/--until are local midnights: make local time UTC too.
    let out = common::succeeded(
        common::pidx(db, root)
            .env("TZ", "UTC")
            .args(["--json", "report", "--tz", "UTC"])
            .args(more)
            .output()
            .unwrap(),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_report_has_a_period_per_day_with_quiet_days_and_undated_apart() {
    let (_tmp, root, db) = setup();
    let r = report_json(&db, &root, &[]);
    assert_eq!(r["unit"], "day");
    let periods: Vec<(&str, f64)> = r["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["period"].as_str().unwrap(), p["cost"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        periods,
        [
            ("2026-01-01", 1.0),
            ("2026-01-02", 0.0),
            ("2026-01-03", 0.5),
            ("2026-01-04", 2.0)
        ]
    );
    assert_eq!(r["periods"][1]["assistantMessages"], 0);
    assert_eq!(r["periods"][3]["cumulativeCost"], 3.5);
    assert_eq!(
        r["periods"][2]["costByModel"],
        serde_json::json!({"gpt": 0.5})
    );
    assert_eq!(r["undated"]["cost"], 4.0);
    assert_eq!(r["undated"]["assistantMessages"], 1);
    assert_eq!(r["totals"]["cost"], 7.5);
    // cache read / (input + cache read + cache write), over 4 assistant messages.
    assert_eq!(r["cacheHitRatio"], 300.0 / 500.0);
    let bash = &r["tools"][0];
    assert_eq!(
        (
            &bash["tool"],
            &bash["calls"],
            &bash["errors"],
            &bash["errorRate"]
        ),
        (
            &Value::from("bash"),
            &Value::from(4),
            &Value::from(1),
            &Value::from(0.5)
        )
    );
}

#[test]
fn a_range_asked_for_is_covered_to_its_ends() {
    let (_tmp, root, db) = setup();
    let r = report_json(
        &db,
        &root,
        &["--since", "2025-12-30", "--until", "2026-01-05"],
    );
    let periods = r["periods"].as_array().unwrap();
    let labels: Vec<&str> = periods
        .iter()
        .map(|p| p["period"].as_str().unwrap())
        .collect();
    assert_eq!(labels.first(), Some(&"2025-12-30"));
    assert_eq!(labels.last(), Some(&"2026-01-05"));
    assert_eq!(labels.len(), 7);
    assert!(r["undated"].is_null(), "a range leaves undated entries out");
}

#[test]
fn every_session_id_in_the_report_is_one_show_takes() {
    let (_tmp, root, db) = setup();
    let r = report_json(&db, &root, &[]);
    let top = r["topSessions"].as_array().unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(top[0]["created"], "2026-01-01");
    for s in top {
        let id = s["id"].as_str().unwrap();
        assert!(id.len() < 36, "{id} is not shortened");
        let out = common::pidx(&db, &root)
            .args(["--no-sync", "--json", "show", id])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "show {id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(shown["path"], s["path"], "{id}");
    }
}

#[test]
fn html_dash_writes_the_page_to_stdout_and_no_file() {
    let (tmp, root, db) = setup();
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let out = common::pidx(&db, &root)
        .current_dir(&cwd)
        .args(["report", "--html", "-", "--tz", "UTC"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert!(page.contains(r#"id="cost-by-period""#) && page.contains("$7.50"));
    assert!(!page.contains("<script"), "the report has no script");
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "a file was written"
    );
    // A file is still a file, and the message about it is not the page.
    let file = tmp.path().join("r.html");
    let out = common::pidx(&db, &root)
        .args(["report", "--html"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("report written to "));
}

#[test]
fn report_refuses_in_one_line_when_it_has_nowhere_or_two_places_to_write() {
    let (_tmp, root, db) = setup();
    for args in [&["report"][..], &["--json", "report", "--html", "-"]] {
        let out = common::pidx(&db, &root).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("--html") && err.contains("--json"), "{err}");
    }
}

#[test]
fn no_model_row_is_called_dash() {
    let (_tmp, root, db) = setup();
    let out = common::pidx(&db, &root)
        .args(["--json", "stats", "--by", "model"])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by: std::collections::BTreeMap<&str, &Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"]["model"].as_str().unwrap(), r))
        .collect();
    assert_eq!(
        by.keys().copied().collect::<Vec<_>>(),
        [NO_MODEL, "gpt", "sonnet"]
    );
    let none = by[NO_MODEL];
    assert_eq!(
        (
            &none["userMessages"],
            &none["toolResults"],
            &none["toolErrors"],
            &none["cost"]
        ),
        (
            &Value::from(2),
            &Value::from(2),
            &Value::from(1),
            &Value::from(0.0)
        )
    );
    assert_eq!(by["sonnet"]["userMessages"], 0);
    assert_eq!(by["sonnet"]["assistantMessages"], 3);
}
