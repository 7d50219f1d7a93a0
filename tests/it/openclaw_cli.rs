//! pidx's answers on a gateway whose sessions live in OpenClaw's SQLite store (written by
//! OpenClaw's own code, see tests/common/openclaw.rs), against OpenClaw's own answers
//! (tests/openclaw/oc-answers.mjs, each from the OpenClaw function named there): the sessions
//! of the keys `listSessionEntriesReadOnly` lists (a deleted key's are left out unless
//! `--include-deleted`), their subjects and chat types, OpenClaw's context for each
//! (`buildSessionContext` on its transcript tree's path), search and stats over them; pi's own
//! listing row and tree for each; the gateway filters, `status`, a broken cold archive costing
//! only its session, roots one level too deep, a legacy JSONL of the same session not counted
//! twice, an unknown schema refused, and the gateway's files byte-identical after every
//! command, with nothing created beside them.

use crate::common;

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

/// OpenClaw's own answers (tests/openclaw/oc-answers.mjs).
fn oc() -> Value {
    read_json(&fixture_dir().join("oc-answers.json"))
}

/// The session windows of the keys OpenClaw lists (`listSessionEntriesReadOnly`).
fn listed_ids() -> Vec<String> {
    let oc = oc();
    let mut ids: Vec<String> = oc["sessions"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, s)| s["listed"] == true)
        .map(|(id, _)| id.clone())
        .collect();
    ids.sort();
    ids
}

#[test]
fn every_session_of_a_key_openclaw_lists_is_listed_once_with_its_key_agent_and_pis_row() {
    let g = Gateway::new();
    let listed = g.listed(&[]);
    let want = manifest();
    assert_eq!(listed.keys().cloned().collect::<Vec<_>>(), listed_ids());
    assert!(listed.len() < want.len(), "the fixture has deleted keys");
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

/// OpenClaw's context is the oracle (`buildSessionContext` of agent-core on the path its
/// `scanSessionTranscriptTree` selects, the chain `readSessionTranscriptContextMessages` runs):
/// it starts after a reset, follows `leaf` entries. The tree is pi's `getTree`.
#[test]
fn contexts_equal_openclaws_and_trees_equal_pis_on_the_same_entries() {
    let g = Gateway::new();
    let answers = answers();
    let oc = oc();
    let mut differs_from_pi = 0;
    for id in listed_ids() {
        let ours = g.json(&["context", &id]);
        assert_eq!(ours, oc["sessions"][&id]["context"], "context of {id}");
        differs_from_pi += usize::from(ours != answers["sessions"][&id]["context"]);
        let tree = g.json(&["tree", &id]);
        let pi = &answers["sessions"][&id]["tree"];
        assert_eq!(project(&tree), project(pi), "tree of {id}");
    }
    // at least the reset in place and the branch switch (pi ignores both entry types)
    assert!(differs_from_pi >= 2, "{differs_from_pi}");
}

#[test]
fn current_keys_subjects_and_chat_types_are_openclaws() {
    let g = Gateway::new();
    let mut ours = BTreeMap::new();
    for row in g.listed(&[]).values() {
        let gw = &row["gateway"];
        if gw["current"] == true {
            let chat = gw["chatType"]
                .as_str()
                .map(|t| t.replace("room", "channel"));
            let key = gw["sessionKey"].as_str().unwrap().to_string();
            ours.insert(
                key,
                (
                    row["id"].clone(),
                    gw["subject"].clone(),
                    gw["displayName"].clone(),
                    chat,
                ),
            );
        }
    }
    let mut theirs = BTreeMap::new();
    for keys in oc()["keys"].as_object().unwrap().values() {
        for k in keys.as_array().unwrap() {
            let chat = k["chatType"].as_str().map(str::to_string);
            let key = k["key"].as_str().unwrap().to_string();
            theirs.insert(
                key,
                (
                    k["sessionId"].clone(),
                    k["subject"].clone(),
                    k["shown"].clone(),
                    chat,
                ),
            );
        }
    }
    assert_eq!(ours, theirs);
    assert!(theirs
        .values()
        .any(|(_, subject, _, _)| subject == "#help-desk"));
}

/// The name of every session of a listed key, current or earlier, is the one OpenClaw's
/// gateway lists the key by (`resolveGatewaySessionDisplayName`): dashboard chats, cron jobs,
/// hooks and subagents keep theirs in the entry's `label` (and `session_windows.display_name`),
/// not its `displayName`. `list` titles the row with it, `show` has it, `--query` finds it.
#[test]
fn names_are_the_ones_openclaws_gateway_shows_for_every_window_of_the_key() {
    let g = Gateway::new();
    let mut shown = BTreeMap::new();
    for keys in oc()["keys"].as_object().unwrap().values() {
        for k in keys.as_array().unwrap() {
            shown.insert(k["key"].as_str().unwrap().to_string(), k["shown"].clone());
        }
    }
    let listed = g.listed(&[]);
    let mut earlier_named = Vec::new();
    for (id, row) in &listed {
        let gw = &row["gateway"];
        let key = gw["sessionKey"].as_str().unwrap();
        assert_eq!(gw["displayName"], shown[key], "{id} ({key})");
        if gw["current"] == false && !shown[key].is_null() {
            earlier_named.push(shown[key].clone());
        }
        let show = g.json(&["show", id]);
        assert_eq!(show["gateway"]["displayName"], shown[key], "show {id}");
    }
    assert!(
        earlier_named.contains(&"Trip planning".into()),
        "{earlier_named:?}"
    );
    for name in [
        "Trip planning",
        "nightly backup",
        "Gmail: Rechnung März",
        "flight search",
    ] {
        assert!(
            shown.values().any(|s| s == name),
            "the fixture names {name}"
        );
    }
    // the human listing titles the rows with them
    let text = g.run(&["list", "--all"]);
    for name in ["Trip planning", "Gmail: Rechnung März", "nightly backup"] {
        assert!(text.contains(name), "{name} not in:\n{text}");
    }
    // a phrase only the name holds finds the key's sessions, the earlier window too
    let rows = g.json(&["list", "--all", "-q", "\"Trip planning\""]);
    let mut found: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["gateway"]["sessionKey"].as_str().unwrap())
        .collect();
    found.dedup();
    assert_eq!(
        found,
        ["agent:main:dashboard:7f0c2d9e-1b4a-4c1e-9a57-3d2f8e6b1c40"],
        "{rows}"
    );
    assert_eq!(rows.as_array().unwrap().len(), 2, "both windows: {rows}");
}

#[test]
fn deleted_keys_are_left_out_of_list_search_and_stats_unless_include_deleted() {
    let g = Gateway::new();
    let oc = oc();
    let sessions = oc["sessions"].as_object().unwrap();
    // the Telegram chat deleted by OpenClaw (tombstoned: its rows are still in the store)
    let none = on(&g.db, &g.root, &["search", "zeppelin", "--json"])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(1), "no hits");
    assert_eq!(String::from_utf8_lossy(&none.stdout).trim(), "[]");
    let with = g.json(&["search", "zeppelin", "--include-deleted"]);
    assert!(with.to_string().contains("zeppelin"), "{with}");
    let all = g.listed(&["--include-deleted"]);
    assert_eq!(all.len(), sessions.len());
    for (id, s) in sessions {
        assert_eq!(
            all[id]["gateway"].get("deleted").is_some(),
            s["listed"] == false,
            "{id}"
        );
        // a session named by its id is reached whatever its key became
        g.run(&["context", id]);
    }
    assert!(
        g.listed(&["--agent", "support"]).len()
            < g.listed(&["--agent", "support", "--include-deleted"]).len()
    );
    // stats: the user and assistant messages of the listed sessions' transcripts, a message
    // copied by a branch switch or a rewind counted once
    let stats = g.json(&["stats"]);
    let totals = &oc["totals"];
    assert_eq!(stats[0]["sessions"], totals["sessions"]);
    assert_eq!(stats[0]["userMessages"], totals["user"]);
    assert_eq!(stats[0]["assistantMessages"], totals["assistant"]);
    let all = g.json(&["stats", "--include-deleted"]);
    assert_eq!(all[0]["sessions"], sessions.len());
}

/// The listed session left in a cold archive (the cron job's).
fn cold_listed(root: &Path) -> (String, PathBuf) {
    let db = db_of(&root.join("agents/support"));
    let conn = rusqlite::Connection::open_with_flags(
        format!("file:{}?immutable=1", db.display()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let (id, name): (String, String) = conn
        .query_row(
            "SELECT c.session_id, c.archive_name FROM session_transcript_cold_archives c
             JOIN session_windows w USING (session_id)
             WHERE w.session_key = 'agent:support:cron:weekly-report'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    (id, root.join("agents/support/sessions/cold").join(name))
}

/// Runs `sync` on a fresh index and returns its stderr lines naming `id`, and what is listed.
fn sync_fresh(g: &Gateway, id: &str) -> (Vec<String>, Vec<String>) {
    let _ = std::fs::remove_file(&g.db);
    let _ = std::fs::remove_dir_all(g.db.parent().unwrap().join("index.db.openclaw"));
    let out = on(&g.db, &g.root, &["sync"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = err
        .lines()
        .filter(|l| l.contains(id))
        .map(str::to_string)
        .collect();
    (lines, g.listed(&[]).into_keys().collect())
}

#[test]
fn a_broken_cold_archive_or_zstd_row_skips_only_its_session_in_one_line() {
    let g = Gateway::new();
    let (id, file) = cold_listed(&g.root);
    let rest: Vec<String> = listed_ids().into_iter().filter(|i| *i != id).collect();
    let bytes = std::fs::read(&file).unwrap();
    // truncated
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let (lines, listed) = sync_fresh(&g, &id);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("cold archive") && lines[0].contains("the store says"),
        "{lines:?}"
    );
    assert_eq!(listed, rest);
    // missing
    std::fs::remove_file(&file).unwrap();
    let (lines, listed) = sync_fresh(&g, &id);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("No such file"), "{lines:?}");
    assert_eq!(listed, rest);
    std::fs::write(&file, &bytes).unwrap();
    // a compressed row whose zstd frame is corrupt
    let ops = db_of(&g.root.join("agents/ops"));
    let conn = rusqlite::Connection::open(&ops).unwrap();
    let sid: String = conn
        .query_row(
            "SELECT session_id FROM transcript_events WHERE event_zstd IS NOT NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE transcript_events SET event_zstd = zeroblob(40) WHERE session_id = ?1
         AND seq = (SELECT min(seq) FROM transcript_events WHERE session_id = ?1 AND event_zstd IS NOT NULL)",
        [&sid],
    )
    .unwrap();
    conn.execute_batch("PRAGMA journal_mode = DELETE").unwrap();
    drop(conn);
    let (lines, listed) = sync_fresh(&g, &sid);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("zstd"), "{lines:?}");
    let rest: Vec<String> = listed_ids().into_iter().filter(|i| *i != sid).collect();
    assert_eq!(listed, rest);
}

#[test]
fn a_root_one_level_too_deep_is_read_as_what_it_is_or_named_in_one_line() {
    let g = Gateway::new();
    let whole = g.listed(&[]).into_keys().collect::<Vec<_>>();
    let list = |root: &Path| -> Vec<String> {
        let out = on(&g.db, root, &["list", "--all", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut ids: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(list(&g.root.join("agents")), whole);
    let support: Vec<String> = listed_ids()
        .into_iter()
        .filter(|id| manifest()[id].0 == "support")
        .collect();
    assert_eq!(list(&g.root.join("agents/support")), support);
    assert_eq!(list(&g.root.join("agents/support/agent")), support);
    // a gateway folder with nothing to index says which folder to pass
    let empty = g.root.parent().unwrap().join("other/agents");
    std::fs::create_dir_all(&empty).unwrap();
    let out = on(&g.db, &empty, &["sync"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("--root {}", empty.parent().unwrap().display())),
        "{err}"
    );
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
    let listed = listed_ids();
    let ids = |f: &dyn Fn(&str, &str) -> bool| -> Vec<String> {
        want.iter()
            .filter(|(id, (a, k))| f(a, k) && listed.contains(id))
            .map(|(id, _)| id.clone())
            .collect()
    };
    let keys = |more: &[&str]| g.listed(more).into_keys().collect::<Vec<_>>();
    assert_eq!(keys(&["--agent", "ops"]), ids(&|a, _| a == "ops"));
    assert_eq!(keys(&["--key", "agent:main:*"]), ids(&|a, _| a == "main"));
    let group = ids(&|_, k| k.contains(":group:"));
    assert_eq!(
        keys(&["--channel", "telegram"]),
        ids(&|_, k| k.contains(":telegram:"))
    );
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
    let id = listed_ids().remove(0);
    let agent = manifest()[&id].0.clone();
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
    assert_eq!(listed.len(), listed_ids().len());
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
    assert_eq!(listed.into_keys().collect::<Vec<_>>(), ids_but_agent("ops"));
}

#[test]
fn a_store_that_disappears_takes_its_sessions_and_copies_with_it() {
    let g = Gateway::new();
    assert_eq!(g.listed(&[]).len(), listed_ids().len());
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
    assert_eq!(listed.into_keys().collect::<Vec<_>>(), ids_but_agent("ops"));
    assert_eq!(copies("-ops"), 0);
    assert!(!g.run(&["status"]).contains("store: ops"));
}

/// The listed session ids of every agent's store but one, in order.
fn ids_but_agent(agent: &str) -> Vec<String> {
    let m = manifest();
    listed_ids()
        .into_iter()
        .filter(|id| m[id].0 != agent)
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
