//! pidx's answers on a gateway whose sessions live in OpenClaw's SQLite store (written by
//! OpenClaw's own code, see tests/common/openclaw.rs): every transcript listed once with its key
//! and agent, pi's own listing row, context and tree for each, the gateway filters, `status`,
//! a legacy JSONL of the same session not counted twice, an unknown schema refused, and the
//! gateway's files byte-identical after every command, with nothing created beside them.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::live::on;
use common::openclaw::{db_of, fixture_dir, manifest, read_json, snapshot, state_copy};
use serde_json::Value;

struct Gateway {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
}

impl Gateway {
    fn new() -> Gateway {
        let (tmp, root) = state_copy();
        let db = tmp.path().join("index").join("index.db");
        Gateway {
            _tmp: tmp,
            root,
            db,
        }
    }

    /// Runs pidx and returns stdout; the gateway's files must be exactly as before.
    fn run(&self, args: &[&str]) -> String {
        let before = snapshot(&self.root);
        let out = on(&self.db, &self.root, args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "pidx {args:?}: {stderr}");
        assert_eq!(
            snapshot(&self.root),
            before,
            "pidx {args:?} changed the gateway"
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.run(&all)).unwrap()
    }

    /// `list --all --json` rows by session id (each id at most once).
    fn listed(&self, more: &[&str]) -> BTreeMap<String, Value> {
        let mut args = vec!["list", "--all"];
        args.extend_from_slice(more);
        let rows = self.json(&args);
        let mut out = BTreeMap::new();
        for row in rows.as_array().unwrap() {
            let id = row["id"].as_str().unwrap().to_string();
            assert!(
                out.insert(id.clone(), row.clone()).is_none(),
                "{id} listed twice"
            );
        }
        out
    }
}

fn answers() -> Value {
    read_json(&fixture_dir().join("pi-answers.json"))
}

#[test]
fn every_transcript_is_listed_once_with_its_key_agent_and_pis_row() {
    let g = Gateway::new();
    let listed = g.listed(&[]);
    let want = manifest();
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    let answers = answers();
    for (id, row) in &listed {
        let (agent, key) = &want[id];
        assert_eq!(row["gateway"]["agentId"], agent.as_str(), "{id}");
        assert_eq!(row["gateway"]["sessionKey"], key.as_str(), "{id}");
        let pi = &answers["sessions"][id]["info"];
        for field in [
            "id",
            "cwd",
            "name",
            "created",
            "modified",
            "messageCount",
            "firstMessage",
        ] {
            assert_eq!(row.get(field), pi.get(field), "{id} {field}");
        }
    }
}

#[test]
fn contexts_and_trees_equal_pis_on_the_same_entries() {
    let g = Gateway::new();
    let answers = answers();
    for (id, pi) in answers["sessions"].as_object().unwrap() {
        let ours = g.json(&["context", id]);
        assert_eq!(ours, pi["context"], "context of {id}");
        let tree = g.json(&["tree", id]);
        assert_eq!(project(&tree), project(&pi["tree"]), "tree of {id}");
    }
}

/// The fields of pi's `getTree()` nodes (pidx adds more for humans).
fn project(nodes: &Value) -> Value {
    let nodes = nodes.get("roots").unwrap_or(nodes);
    Value::Array(
        nodes
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                let node = n.get("entry").unwrap_or(n);
                serde_json::json!({
                    "id": node["id"],
                    "type": node["type"],
                    "label": n.get("label").cloned().unwrap_or(Value::Null),
                    "children": project(&n["children"]),
                })
            })
            .collect(),
    )
}

#[test]
fn gateway_filters_come_from_the_stores_windows() {
    let g = Gateway::new();
    let want = manifest();
    let ids = |f: &dyn Fn(&str, &str) -> bool| -> Vec<String> {
        want.iter()
            .filter(|(_, (a, k))| f(a, k))
            .map(|(id, _)| id.clone())
            .collect()
    };
    let keys = |more: &[&str]| g.listed(more).into_keys().collect::<Vec<_>>();
    assert_eq!(keys(&["--agent", "ops"]), ids(&|a, _| a == "ops"));
    assert_eq!(keys(&["--key", "agent:main:*"]), ids(&|a, _| a == "main"));
    let group = ids(&|_, k| k.contains(":group:"));
    assert_eq!(keys(&["--channel", "telegram"]), group);
    assert_eq!(keys(&["--chat-type", "group"]), group);
    assert_eq!(
        keys(&["--chat-type", "room"]),
        ids(&|_, k| k.contains(":channel:"))
    );
    // the store's session window that a reset replaced keeps its key, no longer current
    let main = g.listed(&["--key", "agent:main:main"]);
    let current: Vec<bool> = main
        .values()
        .map(|r| r["gateway"]["current"].as_bool().unwrap())
        .collect();
    assert_eq!(current.iter().filter(|c| **c).count(), 1, "{main:?}");
    assert_eq!(current.len(), 2);
}

#[test]
fn search_show_stats_and_status_answer_and_leave_the_gateway_untouched() {
    let g = Gateway::new();
    let hits = g.json(&["search", "chairs"]);
    assert!(hits.to_string().contains("chairs"), "{hits}");
    let id = manifest()
        .into_iter()
        .find(|(_, (_, k))| k.contains(":group:"))
        .unwrap()
        .0;
    assert!(g
        .run(&["show", &id])
        .contains("agent:main:telegram:group:-1001234"));
    g.run(&["stats", "--by", "agent"]);
    let status = g.run(&["status"]);
    assert!(
        status.contains(&db_of(&g.root.join("agents/ops")).display().to_string()),
        "{status}"
    );
    assert!(status.contains("schema 23"), "{status}");
    assert!(status.contains("OpenClaw 2026.9.6"), "{status}");
    // a second sync reads nothing new
    let again = g.run(&["sync"]);
    assert!(again.contains(" 0 new, 0 changed, 0 removed"), "{again}");
}

#[test]
fn a_legacy_transcript_of_a_session_in_the_store_is_not_counted_twice() {
    let g = Gateway::new();
    let (id, (agent, _)) = manifest().into_iter().next().unwrap();
    let copy = g
        .root
        .join("agents")
        .join(&agent)
        .join("sessions")
        .join(format!("{id}.jsonl"));
    let first = answers()["sessions"][&id]["info"]["firstMessage"].clone();
    std::fs::write(
        &copy,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}}\n"
        ),
    )
    .unwrap();
    let listed = g.listed(&[]);
    assert_eq!(listed.len(), manifest().len());
    assert_eq!(listed[&id]["firstMessage"], first);
}

#[test]
fn a_store_with_an_unknown_schema_is_refused_in_one_line_and_the_rest_indexed() {
    let g = Gateway::new();
    let db = db_of(&g.root.join("agents/ops"));
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("UPDATE schema_meta SET schema_version = 31", [])
            .unwrap();
        conn.execute_batch("PRAGMA journal_mode = DELETE").unwrap();
    }
    let out = on(&g.db, &g.root, &["sync"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("schema 31")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let listed = g.listed(&[]);
    assert_eq!(listed.into_keys().collect::<Vec<_>>(), ids_of_agent("main"));
}

#[test]
fn a_store_that_disappears_takes_its_sessions_and_copies_with_it() {
    let g = Gateway::new();
    assert_eq!(g.listed(&[]).len(), manifest().len());
    let copies = |agent: &str| {
        std::fs::read_dir(g.db.parent().unwrap().join("index.db.openclaw"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(agent)
            })
            .count()
    };
    assert_eq!(copies("-ops"), 1);
    std::fs::remove_file(db_of(&g.root.join("agents/ops"))).unwrap();
    let listed = g.listed(&[]);
    assert_eq!(listed.into_keys().collect::<Vec<_>>(), ids_of_agent("main"));
    assert_eq!(copies("-ops"), 0);
    assert!(!g.run(&["status"]).contains("store: ops"));
}

/// The session ids of one agent's store in the fixture's manifest, in its order.
fn ids_of_agent(agent: &str) -> Vec<String> {
    manifest()
        .into_iter()
        .filter(|(_, (a, _))| a == agent)
        .map(|(id, _)| id)
        .collect()
}

/// Every JSONL copy pidx keeps, by file name, with its bytes.
fn copies(index: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let base = index.parent().unwrap().join("index.db.openclaw");
    for dir in std::fs::read_dir(base).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "jsonl") {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn after_appends_rewrites_and_deletions_the_index_equals_a_rebuild() {
    let g = Gateway::new();
    g.run(&["sync"]);
    let db = db_of(&g.root.join("agents/main"));
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let hot: Vec<(String, i64)> = common::pairs(
        &conn,
        "SELECT session_id, max(seq) FROM transcript_events GROUP BY 1 ORDER BY 1",
    );
    assert!(hot.len() >= 3, "{hot:?}");
    let note = serde_json::json!({"type": "custom_message", "id": "late1", "parentId": null,
        "customType": "note", "content": "okapi arrives late", "display": true});
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 0)",
        rusqlite::params![hot[0].0, hot[0].1 + 1, note.to_string()],
    )
    .unwrap();
    conn.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq > 3",
        [&hot[1].0],
    )
    .unwrap();
    conn.execute(
        "UPDATE transcript_rewrite_watermarks SET generation = 'rewritten' WHERE session_id = ?1",
        [&hot[1].0],
    )
    .unwrap();
    conn.execute(
        "DELETE FROM session_windows WHERE session_id = ?1",
        [&hot[2].0],
    )
    .unwrap();
    conn.execute_batch("PRAGMA journal_mode = DELETE").unwrap();
    drop(conn);
    g.run(&["sync"]);
    assert!(g.run(&["search", "okapi"]).contains("okapi"));
    assert!(!g.listed(&["--no-sync"]).contains_key(&hot[2].0));
    let incremental = common::index_dump(&g.db);
    let kept = copies(&g.db);
    g.run(&["sync", "--rebuild"]);
    assert_eq!(common::index_dump(&g.db), incremental);
    // copies made from scratch are the same bytes as the ones kept up to date
    std::fs::remove_dir_all(g.db.parent().unwrap().join("index.db.openclaw")).unwrap();
    g.run(&["sync", "--rebuild"]);
    assert_eq!(copies(&g.db), kept);
}
