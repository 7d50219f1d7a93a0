//! Agent gateways (OpenClaw layout) on a generated tree: two agents, direct, group and cron keys,
//! a Telegram topic thread, a reset that left an older transcript, a malformed `sessions.json`,
//! a silent NO_REPLY turn, an unknown entry type, and `sessions.json` rewritten while watching.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::live::{on, pidx, start_watch, stop_cleanly, user, wait_for};
use serde_json::{json, Value};

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/bot/workspace"}}"#
    )
}

fn assistant(id: &str, parent: &str, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-03-01T10:00:05.000Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                       "provider": "anthropic", "model": "claude-x", "stopReason": "stop",
                       "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                                 "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0, "cacheWrite": 0, "total": 0.03}},
                       "timestamp": 1772359205000_i64}})
    .to_string()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// A two-message transcript (entry ids unique per transcript: equal ids and timestamps would
/// make them copies of one another, counted once by stats).
fn transcript(path: &Path, sid: &str, text: &str) {
    let (u, a) = (format!("{sid}-u1"), format!("{sid}-a1"));
    write_lines(
        path,
        &[
            header(sid),
            user(&u, None, text),
            assistant(&a, &u, &format!("reply to {text}")),
        ],
    );
}

/// A gateway state folder like `~/.openclaw`, before any reset.
struct Gateway {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
    main: PathBuf,
}

fn store(entries: Value) -> String {
    serde_json::to_string_pretty(&entries).unwrap()
}

fn main_store(main_sid: &str, group_name: &str) -> String {
    store(json!({
        "agent:main:main": {"sessionId": main_sid, "updatedAt": 1772359300000_i64, "chatType": "direct",
                            "thinkingLevel": "low", "someFutureField": {"x": 1}},
        "agent:main:telegram:group:-100777": {"sessionId": "g1", "updatedAt": 1772359200000_i64,
                            "chatType": "group", "displayName": group_name, "subject": "Weekend plans"},
        "agent:main:telegram:group:-100777:topic:42": {"sessionId": "g1", "sessionFile": "g1-topic-42.jsonl",
                            "updatedAt": 1772359100000_i64, "chatType": "group"},
        "cron:nightly": {"sessionId": "c1", "updatedAt": 1772359000000_i64},
        "hook:broken": {"updatedAt": 1}
    }))
}

fn gateway() -> Gateway {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".openclaw");
    let main = root.join("agents/main/sessions");
    transcript(&main.join("m-old.jsonl"), "m-old", "before the reset");
    transcript(&main.join("g1.jsonl"), "g1", "group chat about the weekend");
    transcript(
        &main.join("g1-topic-42.jsonl"),
        "g1t",
        "topic thread message",
    );
    transcript(&main.join("c1.jsonl"), "c1", "nightly cron run");
    std::fs::write(
        main.join("sessions.json"),
        main_store("m-old", "Family group"),
    )
    .unwrap();
    let ops = root.join("agents/ops/sessions");
    transcript(&ops.join("o1.jsonl"), "o1", "ops agent at work");
    std::fs::write(
        ops.join("sessions.json"),
        r#"{"agent:ops:main": {"sessionId": "o1", "upd"#,
    )
    .unwrap();
    // Other gateway state that is not transcripts.
    std::fs::create_dir_all(root.join("workspace/notes")).unwrap();
    std::fs::write(root.join("workspace/notes/x.jsonl"), "{}\n").unwrap();
    let db = tmp.path().join("i.db");
    Gateway {
        _tmp: tmp,
        root,
        db,
        main,
    }
}

impl Gateway {
    fn run(&self, args: &[&str]) -> Output {
        on(&self.db, &self.root, args).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.run(&full);
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// (file name, agent, key or "-", current) of every listed transcript matching `filters`.
    fn listed(&self, filters: &[&str]) -> Vec<(String, String, String, Option<bool>)> {
        let mut args = vec!["--no-sync", "list", "--all"];
        args.extend_from_slice(filters);
        let rows = self.json(&args);
        let mut v: Vec<_> = rows
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let g = &r["gateway"];
                (
                    Path::new(r["path"].as_str().unwrap())
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    g["agentId"].as_str().unwrap_or("?").to_string(),
                    g["sessionKey"].as_str().unwrap_or("-").to_string(),
                    g["current"].as_bool(),
                )
            })
            .collect();
        v.sort();
        v
    }

    /// The reset: `agent:main:main` moves to a new transcript.
    fn reset_main(&self) {
        write_lines(
            &self.main.join("m-new.jsonl"),
            &[
                header("m-new"),
                user("u1", None, "Pre-compaction memory flush. Store durable memories now."),
                assistant("a1", "u1", "NO_REPLY"),
                user("u2", Some("a1"), "what is the weather like"),
                assistant("a2", "u2", "sunny with a chance of jalapenos"),
                r#"{"type":"navigation","id":"n1","parentId":"a2","timestamp":"2026-03-01T10:01:00.000Z","targetId":"a2"}"#.into(),
            ],
        );
        std::fs::write(
            self.main.join("sessions.json"),
            main_store("m-new", "Family group"),
        )
        .unwrap();
    }
}

fn names(rows: &[(String, String, String, Option<bool>)]) -> Vec<&str> {
    rows.iter().map(|r| r.0.as_str()).collect()
}

#[test]
fn every_transcript_is_indexed_and_linked_to_its_agent_and_key() {
    let g = gateway();
    let out = g.run(&["sync"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // The malformed store is a warning naming the file; its transcript is still indexed.
    assert!(
        err.contains("agents/ops/sessions/sessions.json: malformed"),
        "{err}"
    );
    assert!(err.contains("without a string sessionId"), "{err}");
    g.reset_main();
    let out = g.run(&["sync"]);
    assert!(out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("malformed"),
        "a known problem is reported again"
    );

    let all = g.listed(&[]);
    let key = |k: &str| k.to_string();
    assert_eq!(
        all,
        vec![
            (
                "c1.jsonl".into(),
                "main".into(),
                key("cron:nightly"),
                Some(true)
            ),
            (
                "g1-topic-42.jsonl".into(),
                "main".into(),
                key("agent:main:telegram:group:-100777:topic:42"),
                Some(true)
            ),
            (
                "g1.jsonl".into(),
                "main".into(),
                key("agent:main:telegram:group:-100777"),
                Some(true)
            ),
            (
                "m-new.jsonl".into(),
                "main".into(),
                key("agent:main:main"),
                Some(true)
            ),
            (
                "m-old.jsonl".into(),
                "main".into(),
                key("agent:main:main"),
                Some(false)
            ),
            ("o1.jsonl".into(), "ops".into(), key("-"), None),
        ]
    );
    // Only transcripts: the workspace's .jsonl is not a session.
    assert!(all.iter().all(|r| r.0 != "x.jsonl"));

    // Filters.
    assert_eq!(names(&g.listed(&["--agent", "ops"])), ["o1.jsonl"]);
    assert_eq!(
        names(&g.listed(&["--key", "agent:main:main"])),
        ["m-new.jsonl", "m-old.jsonl"]
    );
    assert_eq!(
        names(&g.listed(&["--channel", "telegram"])),
        ["g1-topic-42.jsonl", "g1.jsonl"]
    );
    assert_eq!(
        names(&g.listed(&["--chat-type", "group", "--key", "*:group:-100777"])),
        ["g1.jsonl"]
    );
    assert_eq!(
        names(&g.listed(&["--chat-type", "direct"])),
        ["m-new.jsonl", "m-old.jsonl"]
    );
    assert_eq!(names(&g.listed(&["--channel", "cron"])), ["c1.jsonl"]);
    // A filter implies every project (gateways have one workspace cwd, not the caller's).
    let out = g.run(&["--no-sync", "list", "--agent", "ops"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ops agent at work"));
    // One project of a gateway is every transcript whose header names that cwd (not a
    // folder, as in a pi root).
    // (In its own order: list(cwd) breaks ties by name alone.)
    let paths = |args: &[&str]| -> std::collections::BTreeSet<String> {
        g.json(args)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let project = paths(&["--no-sync", "list", "--cwd", "/home/bot/workspace"]);
    assert_eq!(project, paths(&["--no-sync", "list", "--all"]));
    assert!(project.len() > 3, "{project:?}");

    // The display name and key in the human listing; the silent flush prompt is not the first
    // message of m-new, unless asked.
    let table =
        String::from_utf8_lossy(&g.run(&["--no-sync", "list", "--all"]).stdout).into_owned();
    assert!(table.contains("Family group"), "{table}");
    assert!(table.contains("main agent:main:main (earlier)"), "{table}");
    let first = |extra: &[&str]| {
        let mut args = vec!["--no-sync", "list", "--key", "agent:main:main"];
        args.extend_from_slice(extra);
        let rows = g.json(&args);
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"].as_str().unwrap().ends_with("m-new.jsonl"))
            .unwrap()["firstMessage"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(first(&[]), "what is the weather like");
    assert_eq!(
        first(&["--include-silent"]),
        "Pre-compaction memory flush. Store durable memories now."
    );
}

#[test]
fn search_stats_show_and_context_know_the_gateway() {
    let g = gateway();
    assert!(g.run(&["sync"]).status.success());
    g.reset_main();
    assert!(g.run(&["sync"]).status.success());

    // Silent turns are not found unless asked for.
    let hits = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["--no-sync", "search"];
        full.extend_from_slice(args);
        let v = g.json(&full);
        let mut out: Vec<String> = v
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|h| {
                let path = h["path"].as_str().unwrap_or("?");
                let file = path.rsplit('/').next().unwrap_or(path);
                format!("{} {file}", h["entryId"].as_str().unwrap_or("?"))
            })
            .collect();
        out.sort();
        out
    };
    assert!(hits(&["memory flush"]).is_empty());
    assert!(hits(&["NO_REPLY", "--literal"]).is_empty());
    assert_eq!(hits(&["memory flush", "--include-silent"]).len(), 1);
    assert_eq!(
        hits(&["NO_REPLY", "--literal", "--include-silent"]).len(),
        1
    );
    assert_eq!(hits(&["jalapenos"]).len(), 1);
    // Filters narrow search too.
    // "reply to ..." in five transcripts; m-new's only "reply" is in its silent NO_REPLY.
    assert_eq!(hits(&["reply"]).len(), 5);
    assert_eq!(hits(&["reply", "--agent", "ops"]).len(), 1);
    assert_eq!(hits(&["reply", "--channel", "telegram"]).len(), 2);

    // stats by agent and by channel: sessions and messages per group.
    let by = |args: &[&str], dim: &str| -> Vec<(String, i64, i64)> {
        let mut full = vec!["--no-sync", "stats"];
        full.extend_from_slice(args);
        let rows = g.json(&full);
        let mut v: Vec<(String, i64, i64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["key"][dim].as_str().unwrap().to_string(),
                    r["sessions"].as_i64().unwrap(),
                    r["userMessages"].as_i64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        by(&["--by", "agent"], "agent"),
        [("main".into(), 5, 6), ("ops".into(), 1, 1)]
    );
    assert_eq!(
        by(&["--by", "channel", "--agent", "main"], "channel"),
        [
            ("-".into(), 2, 3),
            ("cron".into(), 1, 1),
            ("telegram".into(), 2, 2)
        ]
    );

    // show prints the metadata next to the transcript's own.
    let m_new = g.main.join("m-new.jsonl");
    let show = g.json(&["--no-sync", "show", m_new.to_str().unwrap()]);
    assert_eq!(show["gateway"]["agentId"], "main");
    assert_eq!(show["gateway"]["sessionKey"], "agent:main:main");
    assert_eq!(show["gateway"]["entry"]["thinkingLevel"], "low");
    assert_eq!(show["gateway"]["entry"]["someFutureField"]["x"], 1);
    let topic = g.main.join("g1-topic-42.jsonl");
    let show = g.json(&["--no-sync", "show", topic.to_str().unwrap()]);
    assert_eq!(show["gateway"]["threadId"], "42");

    // The unknown entry type is kept, not a bad line; the context is pi's.
    assert_eq!(show["badLines"].as_array().map_or(0, Vec::len), 0);
    let ctx = g.json(&["--no-sync", "context", m_new.to_str().unwrap()]);
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 4);

    // status: the layout, each agent, the broken store.
    let status = String::from_utf8_lossy(&g.run(&["status"]).stdout).into_owned();
    assert!(status.contains("(gateway)"), "{status}");
    assert!(status.contains("agent: main"), "{status}");
    assert!(
        status.contains("agent: ops") && status.contains("malformed"),
        "{status}"
    );
}

#[test]
fn one_agent_folder_and_remembered_roots() {
    let g = gateway();
    // --root at one agent's sessions folder.
    let out = on(&g.db, &g.main, &["--json", "list", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 4);
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["gateway"]["agentId"] == "main"));

    // Roots remembered in the config file and in PIDX_ROOTS (no --root): pi's own root (a temp
    // dir here) plus these.
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(
        &config,
        format!("roots = [{:?}]\n", g.root.display().to_string()),
    )
    .unwrap();
    let pi_dir = tmp.path().join("pi");
    let db = tmp.path().join("c.db");
    // Never the user's own ~/.config/pidx/config.toml: a missing file unless the case sets one.
    let no_config = tmp.path().join("no-config.toml");
    let with_env = |k: &str, v: &Path| {
        let mut c = pidx();
        c.env("PI_CODING_AGENT_DIR", &pi_dir)
            .env("PIDX_CONFIG", &no_config)
            .env_remove("PIDX_ROOTS")
            .env(k, v)
            .arg("--db")
            .arg(&db);
        c
    };
    for (k, v) in [
        ("PIDX_CONFIG", config.as_path()),
        ("PIDX_ROOTS", g.root.as_path()),
    ] {
        let out = with_env(k, v).args(["status"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            text.contains(&format!("{} (gateway)", g.root.display())),
            "{k}: {text}"
        );
        assert!(
            text.contains(&format!("{} (tree", pi_dir.join("sessions").display())),
            "{k}: {text}"
        );
        let out = with_env(k, v)
            .args(["--json", "list", "--all"])
            .output()
            .unwrap();
        let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 5, "{k}");
    }
    std::fs::write(&config, "roots = 3\n").unwrap();
    let out = with_env("PIDX_CONFIG", &config)
        .args(["status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
}

#[test]
fn sessions_json_rewritten_while_watching() {
    let g = gateway();
    let mut w = start_watch(&g.db, &g.root);
    let display = || -> Option<String> {
        let rows = g.json(&["--no-sync", "list", "--channel", "telegram"]);
        rows.as_array()?
            .iter()
            .find(|r| r["path"].as_str().unwrap().ends_with("/g1.jsonl"))?["gateway"]["displayName"]
            .as_str()
            .map(str::to_string)
    };
    wait_for("the first reconcile", || {
        display().as_deref() == Some("Family group")
    });
    // Rewritten whole, the way gateways save it (temp file + rename).
    let tmp = g.main.join("sessions.json.tmp");
    std::fs::write(&tmp, main_store("m-old", "Renamed group")).unwrap();
    std::fs::rename(&tmp, g.main.join("sessions.json")).unwrap();
    wait_for("the new display name", || {
        display().as_deref() == Some("Renamed group")
    });
    // The ops store repaired in place: its transcript gets its key.
    std::fs::write(
        g.root.join("agents/ops/sessions/sessions.json"),
        store(json!({"agent:ops:discord:channel:9": {"sessionId": "o1", "updatedAt": 5}})),
    )
    .unwrap();
    wait_for("the repaired store", || {
        g.listed(&["--agent", "ops"])
            .first()
            .is_some_and(|r| r.2 == "agent:ops:discord:channel:9")
    });
    assert_eq!(names(&g.listed(&["--chat-type", "room"])), ["o1.jsonl"]);
    stop_cleanly(&mut w);
}

#[test]
fn a_transcript_finds_its_key_and_first_silent_turn_by_seeking() {
    // Both of the view's lookups (by sessionFile, then by session id) seek on the folder and
    // the name: read by folder alone, a gateway of 6,000 transcripts and keys took 3-5 s to
    // list, growing with the square of its size (migration 0019).
    let g = gateway();
    assert!(g.run(&["sync"]).status.success());
    let store = pidx::store::Store::open(&g.db).unwrap();
    let mut stmt = store
        .conn
        .prepare("EXPLAIN QUERY PLAN SELECT file_id, session_key FROM gw_files")
        .unwrap();
    let plan: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let plan = plan.join("\n");
    assert!(
        plan.contains("gw_keys_by_file (dir=? AND session_file=?)"),
        "{plan}"
    );
    assert!(
        plan.contains("gw_keys_by_id (dir=? AND session_id=?)"),
        "{plan}"
    );
    // A listed transcript's first silent turn (src/query/list.rs add_gateway) is a seek too,
    // not a read of every entry row of the transcript.
    let silent: String = store
        .conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT min(seq) FROM entries WHERE file_id = ?1 AND silent = 1",
            [1],
            |r| r.get(3),
        )
        .unwrap();
    assert!(silent.contains("entries_silent (file_id=?)"), "{silent}");
}
