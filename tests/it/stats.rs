//! `pidx stats`, `pidx sql`: figures equal an independent count over the raw JSONL, forks count
//! once, per-session figures are pi's /session numbers, and `sql` changes nothing whatever it
//! is asked.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use pidx::query::show;
use pidx::query::stats::{stats, Dim, Figures, StatsOptions, Zone};
use pidx::store::Scope;
use pidx::store::Store;
use serde_json::Value;

/// Totals counted straight from the JSONL with serde_json, the way pi's loader sees entries
/// (the first JSON value of a file is its header), each (id, timestamp) copy counted once.
fn independent_totals(root: &Path) -> Figures {
    let mut f = Figures::default();
    let mut seen: std::collections::HashMap<(String, String), std::path::PathBuf> =
        Default::default();
    let mut days = HashSet::new();
    let files = walkdir::WalkDir::new(root)
        .min_depth(2)
        .max_depth(2)
        .follow_links(true)
        .sort_by_file_name();
    let mut sessions = HashSet::new();
    for entry in files {
        let Ok(entry) = entry else { continue };
        let path = entry.path().to_path_buf();
        if !path.to_string_lossy().ends_with(".jsonl") || !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let mut first = true;
        for line in bytes.split(|&b| b == b'\n') {
            // JSON.parse accepts lone surrogate escapes; serde_json needs them replaced first.
            let text = String::from_utf8_lossy(line);
            let parsed = serde_json::from_str::<Value>(&text).ok().or_else(|| {
                serde_json::from_str(&pidx::pi::js::replace_lone_surrogates(&text)?).ok()
            });
            let Some(v) = parsed else { continue };
            if std::mem::take(&mut first) {
                continue;
            }
            let Value::Object(e) = v else { continue };
            let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
            if kind == "session" {
                continue;
            }
            if let (Some(Value::String(id)), Some(Value::String(ts))) =
                (e.get("id"), e.get("timestamp"))
            {
                let first = seen
                    .entry((id.clone(), ts.clone()))
                    .or_insert_with(|| path.clone());
                if *first != path {
                    continue; // a copy made by a fork (repeats inside one file all count)
                }
            }
            sessions.insert(path.clone());
            if let Some(ms) = e.get("timestamp").and_then(pidx::pi::js::date_ms) {
                days.insert(ms.div_euclid(86_400_000));
            }
            let mut usage = None;
            match kind {
                "message" => {
                    let m = e.get("message").and_then(Value::as_object);
                    match m.and_then(|m| m.get("role")).and_then(Value::as_str) {
                        Some("user") => f.user_messages += 1,
                        Some("assistant") => {
                            f.assistant_messages += 1;
                            let blocks = m.and_then(|m| m.get("content")).and_then(Value::as_array);
                            f.tool_calls += blocks
                                .map(|b| b.iter().filter(|x| x["type"] == "toolCall").count())
                                .unwrap_or(0) as i64;
                            usage = m.and_then(|m| m.get("usage"));
                        }
                        Some("toolResult") => {
                            f.tool_results += 1;
                            let err = m.and_then(|m| m.get("isError"));
                            f.tool_errors += i64::from(err.is_some_and(pidx::pi::js::truthy));
                            usage = m.and_then(|m| m.get("usage"));
                        }
                        _ => {}
                    }
                }
                "compaction" => {
                    f.compactions += 1;
                    usage = e.get("usage");
                }
                "branch_summary" | "usage" => usage = e.get("usage"),
                _ => {}
            }
            if let Some(Value::Object(u)) = usage {
                let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0) as i64;
                f.input += n("input");
                f.output += n("output");
                f.cache_read += n("cacheRead");
                f.cache_write += n("cacheWrite");
                f.cost += u
                    .get("cost")
                    .and_then(|c| c.get("total"))
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
            }
        }
    }
    f.total_tokens = f.input + f.output + f.cache_read + f.cache_write;
    f.sessions = sessions.len() as i64;
    f.active_days = days.len() as i64;
    f
}

fn utc(dims: Vec<Dim>) -> StatsOptions {
    StatsOptions {
        dims,
        since_ms: None,
        until_ms: None,
        cwd: None,
        zone: Zone::parse("UTC").unwrap(),
    }
}

#[test]
fn totals_equal_an_independent_count_of_the_jsonl() {
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let expected = independent_totals(&root);
    assert!(
        expected.assistant_messages > 100 && expected.cost > 0.0,
        "{expected:?}"
    );
    let total = stats(&store.conn, &scope, &utc(Vec::new())).unwrap();
    let mut got = total[0].figures.clone();
    // Cost is a float sum: compare to the cent-millionth, the rest exactly.
    assert!(
        (got.cost - expected.cost).abs() < 1e-9,
        "{} vs {}",
        got.cost,
        expected.cost
    );
    got.cost = expected.cost;
    assert_eq!(got, expected);
    // Grouped rows add up to the total.
    for dims in [
        vec![Dim::Month],
        vec![Dim::Day, Dim::Model],
        vec![Dim::Project],
        vec![Dim::Provider],
    ] {
        let rows = stats(&store.conn, &scope, &utc(dims.clone())).unwrap();
        let sum: i64 = rows.iter().map(|r| r.figures.total_tokens).sum();
        let users: i64 = rows.iter().map(|r| r.figures.user_messages).sum();
        assert_eq!(
            (sum, users),
            (expected.total_tokens, expected.user_messages),
            "{dims:?}"
        );
    }
    let tools = stats(&store.conn, &scope, &utc(vec![Dim::Tool])).unwrap();
    let calls: i64 = tools.iter().map(|r| r.figures.tool_calls).sum();
    let errors: i64 = tools.iter().map(|r| r.figures.tool_errors).sum();
    assert_eq!((calls, errors), (expected.tool_calls, expected.tool_errors));
}

#[test]
fn per_session_figures_are_pis_session_stats() {
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let rows = stats(&store.conn, &scope, &utc(vec![Dim::Session])).unwrap();
    assert!(rows.len() > 50);
    for r in rows {
        let path = &r.key_order[0];
        let file_id: i64 = store
            .conn
            .query_row("SELECT id FROM files WHERE path = ?1", [path], |x| x.get(0))
            .unwrap();
        let pi = show::session_stats(&store.conn, file_id).unwrap();
        let f = &r.figures;
        assert_eq!(
            (
                f.user_messages,
                f.assistant_messages,
                f.tool_calls,
                f.tool_results
            ),
            (
                pi.user_messages,
                pi.assistant_messages,
                pi.tool_calls,
                pi.tool_results
            ),
            "{path}"
        );
        assert_eq!(f.total_tokens, pi.tokens.total, "{path}");
        assert!((f.cost - pi.cost).abs() < 1e-12, "{path}");
    }
}

/// A session and a fork of it that copies its two entries and adds one.
fn fork_corpus(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let assistant = |id: &str, parent: &str, ts: &str, cost: f64| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"total":{cost}}}}},"timestamp":1}}}}"#
        )
    };
    let a1 = assistant("a1", "null", "2026-01-01T00:00:01.000Z", 1.0);
    let a2 = assistant("a2", "\"a1\"", "2026-01-01T00:00:02.000Z", 2.0);
    let b3 = assistant("b3", "\"a2\"", "2026-01-02T00:00:00.000Z", 0.5);
    let dir = root.join("--p--");
    std::fs::create_dir_all(&dir).unwrap();
    let original = dir.join("2026-01-01T00-00-00-000Z_a.jsonl");
    let fork = dir.join("2026-01-02T00-00-00-000Z_b.jsonl");
    std::fs::write(
        &original,
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"a\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n{a1}\n{a2}\n"),
    )
    .unwrap();
    std::fs::write(
        &fork,
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"b\",\"timestamp\":\"2026-01-02T00:00:00.000Z\",\"cwd\":\"/p\",\"parentSession\":\"{}\"}}\n{a1}\n{a2}\n{b3}\n", original.display()),
    )
    .unwrap();
    (original, fork)
}

/// The fork corpus indexed while the original was out of the tree (the fork's entries are the
/// canonical copies), with the original put back on disk but not yet synced.
struct ForkFirst {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    original: std::path::PathBuf,
    fork: std::path::PathBuf,
    store: Store,
}

fn fork_indexed_first() -> ForkFirst {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (original, fork) = fork_corpus(&root);
    let hidden = tmp.path().join("hidden.jsonl");
    std::fs::rename(&original, &hidden).unwrap();
    let (store, _) = common::indexed(&root, &tmp.path().join("i.db"));
    std::fs::rename(&hidden, &original).unwrap();
    ForkFirst {
        _tmp: tmp,
        root,
        original,
        fork,
        store,
    }
}

#[test]
fn a_fork_is_counted_once_whatever_the_order() {
    // Index the fork alone first, then the original appears: the canonical copy moves.
    let ForkFirst {
        root,
        original,
        fork,
        mut store,
        _tmp: _kept,
    } = fork_indexed_first();
    let scope = common::resync(&mut store, &root);
    let total = |store: &Store, scope: &Scope| {
        stats(&store.conn, scope, &utc(Vec::new())).unwrap()[0]
            .figures
            .clone()
    };
    let t = total(&store, &scope);
    assert_eq!((t.assistant_messages, t.cost, t.total_tokens), (3, 3.5, 45));
    // Per session, each file counts all its entries (pi's /session).
    let by_session: BTreeMap<String, f64> = stats(&store.conn, &scope, &utc(vec![Dim::Session]))
        .unwrap()
        .into_iter()
        .map(|r| (r.key_order[0].clone(), r.figures.cost))
        .collect();
    assert_eq!(by_session[&original.to_string_lossy().into_owned()], 3.0);
    assert_eq!(by_session[&fork.to_string_lossy().into_owned()], 3.5);
    // The copies the fork holds are the ones marked.
    let marked: i64 = store
        .conn
        .query_row("SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE e.dup = 1 AND f.path = ?1",
            [fork.to_string_lossy()], |r| r.get(0))
        .unwrap();
    assert_eq!(marked, 2);
    // Deleting the original hands the count to the fork's copies.
    std::fs::remove_file(&original).unwrap();
    let scope = common::resync(&mut store, &root);
    let t = total(&store, &scope);
    assert_eq!((t.assistant_messages, t.cost), (3, 3.5));
}

/// The usage rollups as stored, and as recomputed from the entries now.
fn rollups(store: &Store) -> (Vec<String>, Vec<String>) {
    let rows = |sql: &str| -> Vec<String> {
        let mut stmt = store.conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| {
            (0..17)
                .map(|i| Ok(format!("{:?}", r.get_ref(i)?)))
                .collect::<rusqlite::Result<Vec<_>>>()
        });
        rows.unwrap().map(|r| r.unwrap().join(",")).collect()
    };
    let cols = "file_id, t, model, provider, dup";
    let stored = rows(&format!(
        "SELECT {cols}, n, user, assistant, tool_results, tool_calls, input, output, cache_read,
                cache_write, cost, tool_errors, compactions FROM usage_rollup ORDER BY {cols}"
    ));
    let fresh = rows(&format!(
        "SELECT {cols}, count(*), sum(user), sum(assistant), sum(tool_results), sum(tool_calls),
                sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost),
                sum(tool_errors), sum(compactions)
         FROM usage_facts GROUP BY {cols} ORDER BY {cols}"
    ));
    (stored, fresh)
}

#[test]
fn usage_rollups_equal_a_recount_after_forks_appends_rewrites_and_deletes() {
    let ForkFirst {
        root,
        original,
        fork,
        mut store,
        _tmp: _kept,
    } = fork_indexed_first();
    let roots = vec![pidx::pi::layout::Root {
        path: root.clone(),
        layout: pidx::pi::layout::Layout::Tree,
    }];
    let check = |store: &Store, when: &str| {
        let (stored, fresh) = rollups(store);
        assert!(!fresh.is_empty(), "{when}");
        assert_eq!(stored, fresh, "{when}");
        // The tool rollups too, and every grouping's answer from the rollups equals the
        // entries' own.
        let scope = Scope::new(&store.conn, &roots).unwrap();
        assert!(common::rollups::assert_rollups_agree(store, &scope, when) > 0);
    };
    check(&store, "the fork alone");
    // The original appears: the fork's two entries become copies.
    common::resync(&mut store, &root);
    check(&store, "after the original appeared");
    // An append to the fork, in the same quarter hour as an entry it has.
    let more = r#"{"type":"message","id":"b4","parentId":"b3","timestamp":"2026-01-02T00:01:00.000Z","message":{"role":"user","content":"more","timestamp":1}}"#;
    let mut text = std::fs::read_to_string(&fork).unwrap();
    text.push_str(more);
    text.push('\n');
    std::fs::write(&fork, &text).unwrap();
    common::resync(&mut store, &root);
    check(&store, "after an append");
    // The original is rewritten (a different first entry): everything of it is read again.
    let rewritten = std::fs::read_to_string(&original)
        .unwrap()
        .replace("\"cwd\":\"/p\"", "\"cwd\":\"/q\"");
    std::fs::write(&original, rewritten).unwrap();
    common::resync(&mut store, &root);
    check(&store, "after a rewrite");
    // The original goes: the fork's copies count again.
    std::fs::remove_file(&original).unwrap();
    common::resync(&mut store, &root);
    check(&store, "after a delete");
}

#[test]
fn sql_refuses_writes_and_leaves_the_file_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    fork_corpus(&root);
    let db = tmp.path().join("i.db");
    common::pidx(&db, &root).arg("sync").assert().success();
    let bytes = |p: &Path| std::fs::read(p).unwrap_or_default();
    let wal = tmp.path().join("i.db-wal");
    let before = (bytes(&db), bytes(&wal));
    let refused = [
        "INSERT INTO files(path) VALUES ('x')",
        "DELETE FROM entries",
        "UPDATE entries SET cost = 0",
        "DROP TABLE entries",
        "DROP VIEW v_usage",
        "CREATE TABLE t(x)",
        "ATTACH DATABASE '/tmp/x.db' AS x",
        "PRAGMA writable_schema = ON",
        "PRAGMA user_version = 7",
        "PRAGMA query_only = OFF",
        "VACUUM",
        "REINDEX",
        "BEGIN",
        "SELECT 1; DELETE FROM entries",
        "WITH x AS (SELECT 1) DELETE FROM entries",
    ];
    for q in refused {
        let out = common::pidx(&db, &root)
            .args(["--no-sync", "sql", q])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{q} was not refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{q}: {err}");
    }
    assert!(before == (bytes(&db), bytes(&wal)), "the index changed");
    // Reads work, as table, JSON and CSV.
    let out = common::pidx(&db, &root)
        .args([
            "--no-sync",
            "--json",
            "sql",
            "SELECT model, count(*) AS n, sum(cost) AS cost FROM v_usage GROUP BY model",
        ])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([{"model": "m", "n": 3, "cost": 3.5}])
    );
    let out = common::pidx(&db, &root)
        .args([
            "--no-sync",
            "sql",
            "--csv",
            "SELECT name, count(*) AS n FROM v_tool_calls GROUP BY name",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "name,n\n");
    assert!(before == (bytes(&db), bytes(&wal)), "the index changed");
}

#[test]
fn stats_csv_and_json_parse() {
    let (tmp, root) = common::conformance_copy();
    let db = tmp.path().join("i.db");
    let out = common::pidx(&db, &root)
        .args([
            "stats", "--by", "month", "--by", "model", "--csv", "--tz", "UTC",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["month", "model", "sessions"]);
    let mut n = 0;
    for l in lines {
        assert_eq!(l.split(',').count(), header.len(), "{l}");
        n += 1;
    }
    assert!(n > 3);
    let out = common::pidx(&db, &root)
        .args([
            "--no-sync",
            "--json",
            "stats",
            "--by",
            "week",
            "--tz",
            "+02:00",
        ])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Entries without a valid timestamp fall in the "-" bucket.
    assert!(rows.as_array().unwrap().iter().all(|r| {
        let w = r["key"]["week"].as_str().unwrap();
        w == "-" || w.contains("-W")
    }));
    for bad in [
        ["--by", "decade"],
        ["--tz", "Mars/Olympus"],
        ["--since", "someday"],
    ] {
        let out = common::pidx(&db, &root)
            .arg("stats")
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    // The names people reach for get the dimension they meant, in one line; the wording is the
    // team server's too (`stats::parse_dim`).
    for (by, says) in [
        ("cwd", "--by cwd: group by one of day, week, month, project, model, provider, session, tool, agent, channel (a session's cwd is its project: --by project)"),
        ("source", "--by source: group by one of day, week, month, project, model, provider, session, tool, agent, channel (the team server's: add --pg URL)"),
    ] {
        let out = common::pidx(&db, &root)
            .args(["stats", "--by", by])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{by}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), format!("pidx: {says}\n"));
    }
}

/// `stats --by session` labels every session it shows: past 64 they come from one read of every
/// session instead of a lookup each. Both ways give the same sessions, handles and titles, in the
/// order asked, and leave out a path the index does not hold.
#[test]
fn session_labels_read_at_once_equal_those_looked_up() {
    use pidx::query::handle::sessions_at;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let dir = eighty_sessions(&root);
    let db = tmp.path().join("i.db");
    let (store, _) = common::indexed(&root, &db);
    let mut paths: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    paths.sort();
    paths.reverse();
    paths.truncate(75);
    paths.insert(10, "/nowhere/x.jsonl".into());
    let seen = |s: &pidx::query::handle::SessionAtPath| {
        (
            s.path.clone(),
            s.session_id.clone(),
            s.handle.clone(),
            s.title.clone(),
            s.cwd.clone(),
            s.created_ms,
        )
    };
    let many: Vec<_> = sessions_at(&store.conn, paths.iter().map(String::as_str))
        .unwrap()
        .iter()
        .map(seen)
        .collect();
    let one_by_one: Vec<_> = paths
        .iter()
        .flat_map(|p| sessions_at(&store.conn, [p.as_str()]).unwrap())
        .map(|s| seen(&s))
        .collect();
    assert_eq!(many.len(), 75);
    assert_eq!(many, one_by_one);
    assert!(many.iter().any(|s| s.3.is_none()) && many.iter().any(|s| s.3.is_some()));
    assert!(many.iter().all(|s| s.2.len() > 8), "{many:?}");
}

/// The table by session over all time reads its labels on a second connection while it sums
/// the figures; over a range it reads them after, for the rows found. Both give the same table.
#[test]
fn a_table_by_session_is_labelled_the_same_however_its_labels_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    eighty_sessions(&root);
    let db = tmp.path().join("i.db");
    common::pidx(&db, &root).arg("sync").assert().code(0);
    let table = |extra: &[&str]| {
        let out = common::pidx(&db, &root)
            .args(["stats", "--by", "session"])
            .args(extra)
            .env("COLUMNS", "200")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let all_time = table(&[]);
    // Every session's activity is on 2026-01-01: this range holds all of it.
    assert_eq!(all_time, table(&["--since", "2025-01-01", "--tz", "UTC"]));
    // A header and the 68 sessions with a message (every seventh has none).
    assert_eq!(all_time.lines().count(), 1 + 68, "{all_time}");
    assert!(all_time.contains("title 12 of a session"), "{all_time}");
    assert!(
        !all_time.contains(".jsonl"),
        "every row has a label: {all_time}"
    );
}

/// 80 sessions in one project folder of `root` (ids sharing 34 characters; every seventh has
/// no message), the folder returned.
fn eighty_sessions(root: &Path) -> std::path::PathBuf {
    let dir = root.join("--home-u-p--");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..80 {
        // Ids sharing their first 34 characters: every handle is longer than the shortest.
        let id = format!("0199aaaa-1111-7000-8000-0000000000{i:02}");
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p"}}"#
        )];
        if i % 7 != 0 {
            lines.push(common::live::user(
                "e1",
                None,
                &format!("title {i}\\n  of a session"),
            ));
        }
        let name = format!("2026-01-01T00-00-{:02}-000Z_{id}.jsonl", i % 60);
        std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
    }
    dir
}
