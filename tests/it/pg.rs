//! The team tier against a real PostgreSQL server (started by tests/pg/run.sh, which sets
//! PIDX_TEST_PG_URL and friends and runs them with `--ignored`). Plain `cargo test` reports every
//! test here as ignored, never as passed. Each test works in a database of its own.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::pg_support as support;

use crate::plant;

use support::*;

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_pushed_conformance_corpus_answers_as_the_local_index() {
    let mut s = server("answers");
    let (tmp, root) = common::conformance_copy();
    let report = push(tmp.path(), &root, &s.url, &["--source", "me"]);
    assert!(report["new"].as_u64().unwrap() >= 80, "{report}");
    // Listing texts equal to their body are sent empty (pg 0014) and others whole, lines
    // without their texts' pieces (pg 0015, a leading 0 byte) and whole; `tree`, `list` and
    // every `context` below read each way back.
    let r = s
        .admin
        .query_one(
            "SELECT count(*) FILTER (WHERE text = ''), count(*) FILTER (WHERE text <> ''),
                    count(*) FILTER (WHERE substr(raw_z, 1, 1) = '\\x00'::bytea),
                    count(*) FILTER (WHERE substr(raw_z, 1, 1) <> '\\x00'::bytea)
             FROM entries",
            &[],
        )
        .unwrap();
    let (in_body, whole): (i64, i64) = (r.get(0), r.get(1));
    assert!(in_body > 100 && whole > 0, "{in_body} {whole}");
    let (short, long): (i64, i64) = (r.get(2), r.get(3));
    assert!(short > 100 && long > 0, "{short} {long}");
    let local = |args: &[&str]| json(pidx(tmp.path(), &root).args(args));
    let remote = |args: &[&str]| json(pidx(tmp.path(), &root).args(["--pg", &s.url]).args(args));

    let list = local(&["list", "--all"]);
    assert_eq!(without_source(&remote(&["list", "--all"])), list);
    assert_eq!(
        without_source(&remote(&["list", "--all", "--limit", "7"])),
        Value::Array(list.as_array().unwrap()[..7].to_vec())
    );

    let mut contexts = 0;
    let mut sessions_with_leaves = 0;
    for row in list.as_array().unwrap() {
        let path = row["path"].as_str().unwrap();
        let tree = local(&["tree", path]);
        assert_eq!(remote(&["tree", path]), tree, "tree of {path}");
        let mut ids = Vec::new();
        leaves(&tree, &mut ids);
        sessions_with_leaves += usize::from(!ids.is_empty());
        for leaf in ids {
            let want =
                outcome(pidx(tmp.path(), &root).args(["context", path, "--json", "--leaf", &leaf]));
            let got = outcome(
                pidx(tmp.path(), &root)
                    .args(["--pg", &s.url, "context", path, "--json", "--leaf", &leaf]),
            );
            assert_eq!(got, want, "context of {path} at {leaf}");
            contexts += 1;
        }
        let want = outcome(pidx(tmp.path(), &root).args(["context", path, "--json"]));
        let got =
            outcome(pidx(tmp.path(), &root).args(["--pg", &s.url, "context", path, "--json"]));
        assert_eq!(got, want, "context of {path}");
    }
    assert!(
        sessions_with_leaves >= 20,
        "only {sessions_with_leaves} sessions with leaves"
    );
    eprintln!("compared {contexts} contexts at leaves of {sessions_with_leaves} sessions");

    let hit_set = |v: Value| {
        let mut hits: Vec<(String, String, String)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["path"].to_string(),
                    h["entryId"].to_string(),
                    h["kind"].to_string(),
                )
            })
            .collect();
        hits.sort();
        hits
    };
    for word in ["hello", "test", "branch"] {
        let want = hit_set(local(&["search", word, "--limit", "1000"]));
        assert!(!want.is_empty(), "{word} finds nothing locally");
        assert_eq!(
            hit_set(remote(&["search", word, "--limit", "1000"])),
            want,
            "search {word}"
        );
    }

    let figures = |v: Value| v.as_array().unwrap()[0].clone();
    let want = figures(local(&["stats", "--tz", "UTC"]));
    assert_eq!(figures(remote(&["stats", "--tz", "UTC"])), want);
    let by_source = remote(&["stats", "--by", "source"]);
    assert_eq!(by_source[0]["key"]["source"], "me");
    assert_eq!(by_source[0]["cost"], want["cost"]);
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn append_rewrite_and_delete_move_only_what_changed() {
    let mut s = server("changes");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 6, 40);
    let first = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(
        (first["new"].as_u64(), first["entries"].as_u64()),
        (Some(6), Some(240)),
        "{first}"
    );
    let files = session_files(&root);

    // Two transcripts grow in one push, one of them changing a flag of an entry the server
    // already holds: an entry that takes an earlier one's id shadows it.
    append(&files[0], "added1", "zebracorn appended");
    let body = std::fs::read_to_string(&files[3]).unwrap();
    let taken: Value = serde_json::from_str(body.lines().nth(5).unwrap()).unwrap();
    append(
        &files[3],
        taken["id"].as_str().unwrap(),
        "the same id again",
    );
    let second = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(
        (
            second["appended"].as_u64(),
            second["entries"].as_u64(),
            second["unchanged"].as_u64()
        ),
        (Some(2), Some(2), Some(4)),
        "only the new lines move: {second}"
    );
    let shadowed: i64 = (s.admin)
        .query_one("SELECT count(*) FROM entries WHERE shadowed", &[])
        .unwrap()
        .get(0);
    assert_eq!(shadowed, 1, "the entry whose id was taken");
    let again = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(
        (again["entries"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(6)),
        "{again}"
    );

    // A rewrite (fewer, different lines) and a deletion.
    let body = std::fs::read_to_string(&files[1]).unwrap();
    let kept: Vec<&str> = body.lines().take(10).collect();
    std::fs::write(
        &files[1],
        kept.join("\n").replace("words", "rewritten") + "\n",
    )
    .unwrap();
    std::fs::remove_file(&files[2]).unwrap();
    let third = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(
        (third["rewritten"].as_u64(), third["deleted"].as_u64()),
        (Some(1), Some(1)),
        "{third}"
    );

    let remote = |args: &[&str]| json(pidx(tmp.path(), &root).args(["--pg", &s.url]).args(args));
    let local = |args: &[&str]| json(pidx(tmp.path(), &root).args(args));
    assert_eq!(
        without_source(&remote(&["list", "--all"])),
        local(&["list", "--all"])
    );
    assert_eq!(
        remote(&["search", "zebracorn"]).as_array().unwrap().len(),
        1
    );
    assert_eq!(
        remote(&["search", "rewritten", "--limit", "100"])
            .as_array()
            .unwrap()
            .len(),
        9
    );
    let server_entries: i64 = s
        .admin
        .query_one("SELECT count(*) FROM entries", &[])
        .unwrap()
        .get(0);
    assert_eq!(server_entries, 40 * 2 + 41 * 2 + 9);
    text_totals_hold(&mut s.admin);
    let tmp2 = tempfile::tempdir().unwrap();
    let fresh = server("changes_fresh");
    let mut fresh_admin = fresh.admin;
    push(
        tmp2.path(),
        &root,
        &fresh.url,
        &["--source", first["source"].as_str().unwrap()],
    );
    assert_eq!(
        dump(&mut s.admin),
        dump(&mut fresh_admin),
        "incremental pushes differ from one fresh push"
    );
    assert_eq!(
        crate::pg_support::rollups(&mut s.admin),
        crate::pg_support::rollups(&mut fresh_admin),
        "the rollups kept through a rewrite and a removal differ from a fresh push's"
    );
    assert_eq!(
        crate::pg_support::word_counts_differ(&mut s.admin),
        0,
        "the counts of texts per word kept through a rewrite and a removal"
    );
}

/// A source's first push copies its counts of texts per word (the server holds none of its
/// texts, so none of its words is counted); a count the server holds for it anyway, out of
/// step with its texts, is added to as a later push adds to its counts, not a failed push.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_first_push_adds_to_a_count_the_server_held_for_its_source() {
    let mut s = server("stray_count");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 6, 40);
    assert!(pidx(tmp.path(), &root)
        .args(["pg", "migrate", "--pg", &s.url])
        .status()
        .unwrap()
        .success());
    s.admin
        .execute(
            "INSERT INTO word_texts (source, term, n) VALUES ('stray', 'words', 1000)",
            &[],
        )
        .unwrap();
    let report = push(tmp.path(), &root, &s.url, &["--source", "stray"]);
    assert_eq!(report["new"].as_u64(), Some(6), "{report}");
    let count = |admin: &mut postgres::Client, sql: &str| -> i64 {
        admin.query_one(sql, &[]).unwrap().get(0)
    };
    let texts = count(
        &mut s.admin,
        "SELECT count(*) FROM entry_text t
         WHERE t.source = 'stray' AND 'words' = ANY(tsvector_to_array(t.tsv))",
    );
    assert!(texts > 0, "no text holds `words`");
    assert_eq!(
        count(
            &mut s.admin,
            "SELECT n FROM word_texts WHERE source = 'stray' AND term = 'words'"
        ),
        1000 + texts,
        "the held count added to"
    );
    assert_eq!(
        count(
            &mut s.admin,
            "SELECT count(*) FROM word_texts WHERE source = 'stray' AND term = 'some'"
        ),
        1,
        "the other words counted once"
    );
}

/// An append that changes flags of entries the server already holds, in several transcripts
/// of one push: a `NO_REPLY` reply in a gateway transcript silences the question before it.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn replies_appended_to_gateway_transcripts_silence_what_the_server_holds() {
    let mut s = server("silent");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&root).unwrap();
    let sids = ["t1", "t2", "t3"];
    for sid in sids {
        let header = serde_json::json!({"type": "session", "version": 3, "id": sid,
            "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/home/bot/workspace"});
        std::fs::write(root.join(format!("{sid}.jsonl")), format!("{header}\n")).unwrap();
        append(
            &root.join(format!("{sid}.jsonl")),
            &format!("{sid}-q"),
            "a question",
        );
    }
    let first = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(first["new"].as_u64(), Some(3), "{first}");
    let silent = |admin: &mut postgres::Client| -> i64 {
        (admin.query_one("SELECT count(*) FROM entries WHERE silent", &[]))
            .unwrap()
            .get(0)
    };
    assert_eq!(silent(&mut s.admin), 0);

    for sid in &sids[..2] {
        let reply = serde_json::json!({"type": "message", "id": format!("{sid}-r"),
            "parentId": format!("{sid}-q"), "timestamp": "2026-03-01T10:00:05.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "NO_REPLY"}],
                        "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2}});
        let mut f = (std::fs::OpenOptions::new().append(true))
            .open(root.join(format!("{sid}.jsonl")))
            .unwrap();
        writeln!(f, "{reply}").unwrap();
    }
    let second = push(tmp.path(), &root, &s.url, &[]);
    assert_eq!(
        (second["appended"].as_u64(), second["unchanged"].as_u64()),
        (Some(2), Some(1)),
        "{second}"
    );
    assert_eq!(silent(&mut s.admin), 4, "two questions and their replies");
    // The texts' copy of the flag (pg 0018) follows it: a search leaves silent turns out from
    // the texts alone, as the local index does.
    let silent_texts: i64 = (s.admin)
        .query_one("SELECT count(*) FROM entry_text WHERE silent", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        silent_texts, 4,
        "the texts of two questions and their replies"
    );
    let paths = |v: Value| -> Vec<String> {
        let mut p: Vec<String> = (v.as_array().unwrap().iter())
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect();
        p.sort();
        p
    };
    for (args, n) in [
        (&["search", "question"][..], 1),
        (&["search", "question", "--include-silent"][..], 3),
    ] {
        let local = paths(json(pidx(tmp.path(), &root).args(["--no-sync"]).args(args)));
        let remote = paths(json(
            pidx(tmp.path(), &root).args(["--pg", &s.url]).args(args),
        ));
        assert_eq!((remote.len(), &remote), (n, &local), "{args:?}");
    }
    let tmp2 = tempfile::tempdir().unwrap();
    let mut fresh = server("silent_fresh");
    push(
        tmp2.path(),
        &root,
        &fresh.url,
        &["--source", first["source"].as_str().unwrap()],
    );
    assert_eq!(silent(&mut fresh.admin), 4);
    assert_eq!(dump(&mut s.admin), dump(&mut fresh.admin));
    assert_eq!(crate::pg_support::word_counts_differ(&mut s.admin), 0);
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn push_killed_at_three_points_then_resumed_equals_a_fresh_push() {
    let mut s = server("killed");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 120, 400);
    // The local index first, so the kills land in the push, not in the sync.
    assert!(pidx(tmp.path(), &root)
        .arg("sync")
        .status()
        .unwrap()
        .success());
    let total = 120 * 400;
    let mut kills = Vec::new();
    // A push is one transaction (readers see all of it or none, tests/it/pg_many.rs), so its
    // rows show only at the end: the kills aim at moments after it has written entries (it
    // holds the table's write lock) instead of at counts of rows on the server.
    for delay in [0, 300, 1500] {
        let mut child = pidx(tmp.path(), &root)
            .args(["--no-sync", "push", "--images", "--pg", &s.url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut writing = false;
        while !writing && Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            writing = writes_entries(&mut s.admin);
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(delay));
        let finished_first = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let at_kill = entries_on(&mut s.admin);
        eprintln!("kill {delay} ms after the push wrote entries ({writing}): {at_kill} of {total} entries on the server, finished first: {finished_first}");
        assert!(
            at_kill == 0 || at_kill == total,
            "a killed push left part of itself: {at_kill} of {total} entries"
        );
        kills.push((at_kill, writing && !finished_first));
    }
    assert!(
        kills.iter().any(|&(at, mid)| mid && at == 0),
        "no kill landed mid-push: {kills:?}"
    );
    push(
        tmp.path(),
        &root,
        &s.url,
        &["--source", &push_source(tmp.path(), &root)],
    );
    assert_eq!(entries_on(&mut s.admin), total);
    let fresh = server("killed_fresh");
    let mut fresh_admin = fresh.admin;
    let tmp2 = tempfile::tempdir().unwrap();
    push(
        tmp2.path(),
        &root,
        &fresh.url,
        &["--source", &push_source(tmp.path(), &root)],
    );
    assert_eq!(
        dump(&mut s.admin),
        dump(&mut fresh_admin),
        "killed-then-resumed differs from a fresh push"
    );
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn four_sources_pushing_at_once_lose_and_duplicate_nothing() {
    let mut s = server("four");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 40, 100);
    assert!(pidx(tmp.path(), &root)
        .arg("sync")
        .status()
        .unwrap()
        .success());
    pidx(tmp.path(), &root)
        .args(["pg", "migrate", "--pg", &s.url])
        .status()
        .unwrap();
    let children: Vec<_> = (0..4)
        .map(|n| {
            pidx(tmp.path(), &root)
                .args([
                    "--no-sync",
                    "push",
                    "--pg",
                    &s.url,
                    "--source",
                    &format!("machine-{n}"),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let per_source: Vec<(String, i64, i64)> = s
        .admin
        .query(
            "SELECT source, count(*), count(DISTINCT (fid, seq)) FROM entries GROUP BY source ORDER BY source",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let want: Vec<(String, i64, i64)> = (0..4)
        .map(|n| (format!("machine-{n}"), 4000, 4000))
        .collect();
    assert_eq!(per_source, want);
    let remote = json(pidx(tmp.path(), &root).args(["--pg", &s.url, "stats", "--by", "source"]));
    assert_eq!(remote.as_array().unwrap().len(), 4, "{remote}");
    let one = json(pidx(tmp.path(), &root).args([
        "--pg",
        &s.url,
        "--source",
        "machine-2",
        "list",
        "--all",
    ]));
    assert_eq!(one.as_array().unwrap().len(), 40);
    assert!(one
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["source"] == "machine-2"));
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn the_reader_role_runs_every_reading_command_and_cannot_write() {
    let mut s = server("reader");
    let (tmp, root) = common::conformance_copy();
    push(tmp.path(), &root, &s.url, &["--source", "me"]);
    s.admin
        .batch_execute(&crate::pg_support::reader_grants(&s.db))
        .unwrap();
    let list = json(pidx(tmp.path(), &root).args(["--pg", &s.reader, "list", "--all"]));
    let path = list[0]["path"].as_str().unwrap().to_string();
    for args in [
        vec!["list", "--all"],
        vec!["show", &path],
        vec!["context", &path],
        vec!["tree", &path],
        vec!["search", "hello"],
        vec!["stats", "--by", "source"],
        vec!["sql", "SELECT source, count(*) FROM v_usage GROUP BY source"],
        vec!["sql", "SELECT count(*) FROM v_sessions JOIN v_entries USING (source, path) JOIN v_messages USING (source, path, seq) JOIN v_tool_calls USING (source, path)"],
    ] {
        let out = pidx(tmp.path(), &root).args(["--pg", &s.reader]).args(&args).output().unwrap();
        assert!(out.status.success(), "reader: {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let write = pidx(tmp.path(), &root)
        .args(["--pg", &s.url, "sql", "DELETE FROM sessions RETURNING 1"])
        .output()
        .unwrap();
    assert!(!write.status.success(), "a write ran through `pidx sql`");
    assert!(
        String::from_utf8_lossy(&write.stderr).contains("read-only"),
        "{}",
        String::from_utf8_lossy(&write.stderr)
    );
    let push_as_reader = pidx(tmp.path(), &root)
        .args(["push", "--pg", &s.reader, "--source", "me"])
        .output()
        .unwrap();
    assert!(!push_as_reader.status.success(), "the reader role pushed");
    let mut reader = postgres::Client::connect(&s.reader, postgres::NoTls).unwrap();
    let err = reader
        .execute("UPDATE sessions SET name = 'x'", &[])
        .unwrap_err();
    assert!(
        err.to_string().contains("permission denied")
            || format!("{err:?}").contains("permission denied"),
        "{err:?}"
    );
    let count: i64 = s
        .admin
        .query_one("SELECT count(*) FROM sessions WHERE name = 'x'", &[])
        .unwrap()
        .get(0);
    assert_eq!(count, 0);
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn passwords_never_reach_the_terminal() {
    let s = server("secret");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    // Wrong port, password in the URL and in PGPASSWORD: the errors must not show them.
    let url = s
        .url
        .replacen("user=pidx_writer", "user=pidx_writer&password=hunter2pw", 1)
        .replacen("host=/", "host=/nonexistent/", 1);
    let out = pidx(tmp.path(), &root)
        .env("PGPASSWORD", "envsecret9")
        .args(["--pg", &url, "list", "--all"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("cannot connect"), "{text}");
    assert!(
        !text.contains("hunter2pw") && !text.contains("envsecret9"),
        "{text}"
    );
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn the_team_page_examples_run_against_the_server() {
    let s = server("readme");
    let (tmp, root) = common::conformance_copy();
    push(tmp.path(), &root, &s.url, &["--source", "me"]);
    let examples = team_examples(&s.url);
    assert!(examples.len() >= 9, "{examples:?}");
    for mut args in examples {
        // `watch` does not return by itself (tests/it/pg.rs runs it in its own test): parse only.
        if args.first().is_some_and(|a| a == "watch") {
            args.push("--help".into());
        }
        let out = pidx(tmp.path(), &root).args(&args).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "`pidx {args:?}`: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn watch_push_catches_up_when_the_server_appears_and_follows_appends() {
    let mut s = server("watch");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 3, 10);
    // A database that does not exist yet: the watcher indexes locally and retries the push.
    let later = s.url.replacen("///t_watch?", "///t_watch_later?", 1);
    s.admin
        .batch_execute("DROP DATABASE IF EXISTS t_watch_later WITH (FORCE)")
        .unwrap();
    let mut watch = pidx(tmp.path(), &root)
        .args(["watch", "--push", &later, "--source", "w"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let files = session_files(&root);
    std::thread::sleep(Duration::from_millis(1500));
    append(
        &files[0],
        "offline1",
        "quokkaline written while the server is away",
    );
    let local_sees = || {
        json(pidx(tmp.path(), &root).args(["--no-sync", "search", "quokkaline"]))
            .as_array()
            .is_some_and(|a| a.len() == 1)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !local_sees() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(local_sees(), "the local index waited for the network");
    s.admin
        .batch_execute("CREATE DATABASE t_watch_later OWNER pidx_writer")
        .unwrap();
    let remote_has = |word: &str| {
        let out = pidx(tmp.path(), &root)
            .args(["--pg", &later, "search", word, "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v.as_array().map(Vec::len))
            == Some(1)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !remote_has("quokkaline") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(remote_has("quokkaline"), "the watcher did not catch up");
    append(
        &files[1],
        "online1",
        "wombatline written while the server answers",
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !remote_has("wombatline") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        remote_has("wombatline"),
        "an append did not reach the server"
    );
    terminate(&mut watch);
    let out = watch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("push failed") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(!stderr.contains("password="), "{stderr}");
    let mut admin = s.admin;
    admin
        .batch_execute("DROP DATABASE IF EXISTS t_watch_later WITH (FORCE)")
        .unwrap();
}

/// SIGTERM, so the watcher stops as a person's Ctrl-C would.
/// Whether a push holds the write lock on `entries`: its transaction has written rows there.
fn writes_entries(admin: &mut postgres::Client) -> bool {
    admin
        .query_one(
            "SELECT count(*) > 0 FROM pg_locks l
             WHERE l.relation = 'entries'::regclass AND l.mode = 'RowExclusiveLock'
               AND l.pid <> pg_backend_pid()",
            &[],
        )
        .map(|r| r.get(0))
        .unwrap_or(false)
}

fn terminate(child: &mut std::process::Child) {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
}

/// The pieces of a secret that must not appear anywhere on the server, whatever escaping its
/// rows are dumped with (a private key's lines one by one).
fn pieces(secret: &str) -> Vec<&str> {
    secret.split('\n').filter(|p| p.len() >= 8).collect()
}

/// The last word of four letters or more before the secret in its text.
fn word_before(p: &plant::Planted) -> String {
    p.text[..p.at]
        .split(|c: char| !c.is_ascii_alphabetic())
        .rfind(|w| w.len() >= 4)
        .unwrap_or("the")
        .to_string()
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn no_planted_secret_reaches_the_server_unless_the_user_says_no_redact() {
    let mut s = server("redact");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let planted = plant::plant_all(361, 6);
    plant::write_session(&root, "secrets", &planted);
    push(tmp.path(), &root, &s.url, &["--source", "me"]);
    let held = dump(&mut s.admin);
    for p in &planted {
        for piece in pieces(&p.secret) {
            assert!(
                !held.contains(piece),
                "a {} reached the server: {piece}",
                p.rule
            );
        }
    }
    for rule in pidx::redact::RULES {
        assert!(
            held.contains(&pidx::redact::marker(rule)),
            "no marker of {rule} on the server"
        );
    }
    // Found by the words around a secret, never by the secret.
    for p in planted.iter().step_by(6) {
        let search = |args: &[&str]| {
            json(
                pidx(tmp.path(), &root)
                    .args(["--pg", &s.url, "search"])
                    .args(args),
            )
        };
        let by_secret = search(&["--literal", pieces(&p.secret)[0]]);
        assert!(
            by_secret.as_array().is_none_or(|a| a.is_empty()),
            "{}: {by_secret}",
            p.rule
        );
        let around = search(&[&word_before(p)]);
        assert!(
            around.as_array().is_some_and(|a| !a.is_empty()),
            "{}: {}",
            p.rule,
            word_before(p)
        );
    }
    // --no-redact is the user's explicit choice, said on stderr.
    let out = pidx(tmp.path(), &root)
        .args(["push", "--pg", &s.url, "--source", "raw", "--no-redact"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-redact"));
    let held = dump(&mut s.admin);
    assert!(planted.iter().all(|p| held.contains(pieces(&p.secret)[0])));
}

/// Takes a server of schema 7 back to schema 6 (before pg 0007) as a schema-6 push left it:
/// each line as text in `raw` (filled from `raw_z` first), no `raw_z` (after `UNDO_8_9`).
const UNDO_RAW_Z: &str = "ALTER TABLE entries DROP CONSTRAINT entries_line;
    ALTER TABLE entries DROP COLUMN raw_z;
    ALTER TABLE entries ALTER COLUMN raw SET NOT NULL;
    DELETE FROM pidx_schema WHERE version = 7;";

/// (rows whose line is compressed, rows whose line is text).
fn line_ways(admin: &mut postgres::Client) -> (i64, i64) {
    let r = admin
        .query_one(
            "SELECT count(raw_z), count(*) FILTER (WHERE raw_z IS NULL AND raw IS NOT NULL)
             FROM entries",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn lines_pushed_before_compression_still_answer_and_new_pushes_compress() {
    let mut s = server("raw_lines");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    corpus(&root, 4, 30);
    // Pushed at schema 9, not partitioned (pg/0010), as a server of schema 6 was.
    crate::pg_support::push_at(9, tmp.path(), &root, &s.url, &["--source", "me"]);
    let rows = s
        .admin
        .query("SELECT source, fid, seq, raw_z FROM entries", &[])
        .unwrap();
    for r in &rows {
        let z: Vec<u8> = r.get(3);
        let line = pidx::team::pg::lines::line(None, Some(&z)).unwrap();
        s.admin
            .execute(
                "UPDATE entries SET raw = $4 WHERE source = $1 AND fid = $2 AND seq = $3",
                &[
                    &r.get::<_, String>(0),
                    &r.get::<_, i64>(1),
                    &r.get::<_, i64>(2),
                    &line,
                ],
            )
            .unwrap();
    }
    s.admin.batch_execute(UNDO_8_9).unwrap();
    s.admin.batch_execute(UNDO_RAW_Z).unwrap();
    let reader = |args: &[&str]| outcome(pidx(tmp.path(), &root).args(["--pg", &s.url]).args(args));
    let (code, _, err) = reader(&["list", "--all"]);
    assert_ne!(
        code,
        Some(0),
        "a schema-6 server is refused until migrated: {err}"
    );
    assert!(err.contains("pidx pg migrate"), "{err}");

    let migrated = pidx(tmp.path(), &root)
        .args(["pg", "migrate", "--pg", &s.url])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    assert_eq!(
        line_ways(&mut s.admin),
        (0, rows.len() as i64),
        "old rows keep their text"
    );
    let same_as_local = |files: &[std::path::PathBuf]| {
        for f in files {
            let path = f.to_str().unwrap();
            for args in [
                vec!["context", path, "--json"],
                vec!["context", path, "--last", "3"],
            ] {
                let want = outcome(pidx(tmp.path(), &root).args(&args));
                assert_eq!(want.0, Some(0), "{args:?}: {}", want.2);
                assert_eq!(reader(&args), want, "{args:?}");
            }
            let (code, want, err) = outcome(pidx(tmp.path(), &root).args(["show", path]));
            assert_eq!(code, Some(0), "show: {err}");
            let (code, got, err) = reader(&["show", path]);
            assert_eq!(code, Some(0), "--pg show: {err}");
            let got: Vec<&str> = got.lines().filter(|l| !l.starts_with("source:")).collect();
            assert_eq!(got.join("\n"), want.trim_end(), "show {path}");
        }
    };
    let files = session_files(&root);
    same_as_local(&files);

    // A push after the migration: pg 0020 has every transcript sent again (for its texts'
    // postings), so every line is compressed now, the grown transcript's new one too, and
    // every answer is the same as the local index's.
    append(&files[0], "after7", "zebracorn after the migration");
    let again = push(tmp.path(), &root, &s.url, &["--source", "me"]);
    assert_eq!(again["rewritten"].as_u64(), Some(4), "{again}");
    let (compressed, text) = line_ways(&mut s.admin);
    assert_eq!((compressed, text), (rows.len() as i64 + 1, 0), "{again}");
    same_as_local(&files);
    let after = outcome(pidx(tmp.path(), &root).args(["--pg", &s.url, "search", "zebracorn"]));
    assert!(after.1.contains("after the migration"), "{after:?}");

    // A rewrite sends the transcript again, compressed; the lines are the ones first pushed.
    let body = std::fs::read_to_string(&files[1]).unwrap();
    let header_time = "\"timestamp\":\"2026-01-01T00:00:00.000Z\"";
    assert!(body.contains(header_time));
    let body = body.replacen(header_time, "\"timestamp\":\"2026-01-01T00:00:00.001Z\"", 1);
    std::fs::write(&files[1], body).unwrap();
    push(tmp.path(), &root, &s.url, &["--source", "me"]);
    let (compressed, text) = line_ways(&mut s.admin);
    assert!(
        compressed > 1 && text < rows.len() as i64,
        "{compressed} {text}"
    );
    same_as_local(&files);
}
