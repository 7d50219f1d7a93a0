//! The server's reads made for a team's size (issue 52) against a real PostgreSQL server
//! (tests/pg/run.sh): handles from each listed id's neighbours in byte order (migration
//! pg/0008) are the local index's, across sources and within one, on a server whose collation
//! is not byte order; `stats` and `stats --by source` from the rollups by source (pg/0009) are
//! the local figures in every zone and range, for a reader limited to sources too; and a
//! server of the schema before them is migrated and keeps answering the same.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use crate::pg_support::{json, outcome, pidx, push, server, Server, UNDO_8_9};

/// Writes one short session per id under `root` (file names `<n>_<tag>.jsonl`), at hours
/// spread over a few days, each with a user message and an answer with usage.
fn sessions_with_ids(root: &Path, tag: &str, ids: &[&str]) {
    let dir = root.join("--home-u-p--");
    std::fs::create_dir_all(&dir).unwrap();
    for (n, id) in ids.iter().enumerate() {
        // Every session of both sources at its own time and with its own figures, so that `list`
        // and `stats --by session` order them alike wherever their files are.
        let (day, hour, minute) = (1 + n % 4, n % 24, (n * 7) % 60);
        let second = if tag == "b" { 30 } else { 0 };
        let ts = |s: usize| {
            format!(
                "2026-02-{day:02}T{hour:02}:{minute:02}:{:02}.000Z",
                second + s
            )
        };
        let lines = [
            format!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/home/u/p"}}"#,
                ts(0)
            ),
            format!(
                r#"{{"type":"message","id":"u{n}","parentId":null,"timestamp":"{}","message":{{"role":"user","content":"question {n}","timestamp":0}}}}"#,
                ts(1)
            ),
            format!(
                r#"{{"type":"message","id":"a{n}","parentId":"u{n}","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {n}"}}],"provider":"p","model":"m{}","usage":{{"input":{},"output":5,"cacheRead":0,"cacheWrite":0,"cost":{{"total":0.00{}}}}},"timestamp":0}}}}"#,
                ts(2),
                n % 3,
                10 + n + second * 100,
                1 + n % 9
            ),
        ];
        std::fs::write(
            dir.join(format!("{n:03}_{tag}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
}

/// A temp index of the sessions of `ids_of` (tag, ids), synced.
fn index_of(ids_of: &[(&str, &[&str])]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    for (tag, ids) in ids_of {
        sessions_with_ids(&root, tag, ids);
    }
    let (code, _, err) = outcome(pidx(tmp.path(), &root).arg("sync"));
    assert_eq!(code, Some(0), "{err}");
    (tmp, root)
}

/// The handles of a `list` table (its `ID` column; the titles here are ASCII), sorted.
fn handles(table: &str) -> Vec<String> {
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    let (id, cwd) = (
        header.find("  ID  ").unwrap() + 2,
        header.find("  CWD").unwrap() + 2,
    );
    let mut out: Vec<String> = lines.map(|l| l[id..cwd].trim().to_string()).collect();
    out.sort();
    out
}

/// Ids sharing long prefixes, ids prefixing others, one id in both sources, and ids whose
/// order in a linguistic collation is not their byte order (`a000`, `A000x`, `a001`, in
/// source `a`, whose 51 sessions are looked up: in the server's collation `a000`'s next id
/// would be `A000x`, its handle 10 characters instead of 13; tried: without `COLLATE "C"` in
/// the lookups this test fails).
fn ids(tag: &str) -> Vec<String> {
    let offset = usize::from(tag == "b");
    let mut out: Vec<String> = (0..40)
        .map(|i| format!("019cb679-409f-7627-b31a-d5036{:07x}", i * 7 + offset * 3))
        .collect();
    out.extend((0..6).map(|i| format!("019cb6{:02}-{tag}", i * 2 + offset)));
    if tag == "a" {
        out.extend(
            [
                "019cb680-aaaa",
                "019cb690-shared",
                "019cb6c0-a000",
                "019cb6c0-A000x",
                "019cb6c0-a001",
            ]
            .map(String::from),
        );
    } else {
        out.extend(["019cb680-aaaa-1", "019cb690-shared"].map(String::from));
    }
    out
}

/// Makes `s`'s database again with a linguistic collation (ICU's root locale) when the server
/// has ICU, so that byte order and the server's order differ; else leaves it (C.UTF-8).
fn with_linguistic_collation(s: &mut Server) -> bool {
    let url = std::env::var("PIDX_TEST_PG_ADMIN_URL").unwrap();
    let mut cluster = pidx::team::pg::connect(&url).unwrap();
    cluster
        .batch_execute(&format!("DROP DATABASE {} WITH (FORCE)", s.db))
        .unwrap();
    let made = cluster
        .batch_execute(&format!(
            "CREATE DATABASE {} OWNER pidx_writer TEMPLATE template0
                 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'",
            s.db
        ))
        .map_err(|e| eprintln!("!!!! no ICU database ({e}): the collation part is not run"))
        .is_ok();
    if !made {
        cluster
            .batch_execute(&format!("CREATE DATABASE {} OWNER pidx_writer", s.db))
            .unwrap();
    }
    s.admin = pidx::team::pg::connect(&url.replacen("///postgres?", &format!("///{}?", s.db), 1))
        .unwrap();
    made
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn handles_from_neighbours_are_the_local_handles_across_sources_and_within_one() {
    let mut s = server("scale_handles");
    let icu = with_linguistic_collation(&mut s);
    let (a, b) = (ids("a"), ids("b"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    let (ta, ra) = index_of(&[("a", &a)]);
    let (tb, rb) = index_of(&[("b", &b)]);
    let (tab, rab) = index_of(&[("a", &a), ("b", &b)]);
    push(ta.path(), &ra, &s.url, &["--source", "a"]);
    push(tb.path(), &rb, &s.url, &["--source", "b"]);
    if icu {
        let order: Vec<String> = s
            .admin
            .query(
                "SELECT session_id FROM sessions WHERE session_id LIKE '019cb6c0-%'
                 ORDER BY session_id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(
            order,
            ["019cb6c0-a000", "019cb6c0-A000x", "019cb6c0-a001"],
            "the server's own order is not byte order"
        );
    }
    // Up to 64 sessions shown are looked up, more (99 of 99) read in one go: the local handles
    // either way, over both sources (99 sessions) and within one (51 and 48).
    for limit in ["5", "40", "1000"] {
        let args = ["list", "--all", "--limit", limit];
        let local = |tmp: &Path, root: &Path| {
            let (code, out, err) = outcome(pidx(tmp, root).args(args));
            assert_eq!(code, Some(0), "{err}");
            handles(&out)
        };
        let remote = |source: Option<&str>| {
            let mut cmd = pidx(tab.path(), &rab);
            cmd.args(["--pg", &s.url]);
            if let Some(source) = source {
                cmd.args(["--source", source]);
            }
            let (code, out, err) = outcome(cmd.args(args));
            assert_eq!(code, Some(0), "{err}");
            handles(&out)
        };
        let every = remote(None);
        assert_eq!(every, local(tab.path(), &rab), "every source, {args:?}");
        assert_eq!(
            remote(Some("a")),
            local(ta.path(), &ra),
            "--source a, {args:?}"
        );
        assert_eq!(
            remote(Some("b")),
            local(tb.path(), &rb),
            "--source b, {args:?}"
        );
        if limit == "1000" {
            assert_eq!(every.len(), 99);
            let shared = a.iter().position(|id| *id == "019cb690-shared").unwrap();
            assert!(
                every.contains(&format!("{shared:03}_a.jsonl")),
                "an id both sources hold"
            );
            let long = every.iter().filter(|h| h.len() > 30).count();
            assert!(long >= 70, "ids sharing long prefixes: {every:?}");
            assert!(every.contains(&"019cb6c0-a000".to_string()), "{every:?}");
        }
    }
    // `show` takes what `list` printed, and `stats --by session` labels by the same handles.
    let (code, out, err) = outcome(pidx(tab.path(), &rab).args([
        "--pg",
        &s.url,
        "--source",
        "a",
        "show",
        "019cb6c0-A",
    ]));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("019cb6c0-A000x"), "{out}");
    let by_session = ["stats", "--by", "session", "--tz", "UTC"];
    let (_, local, _) = outcome(pidx(tab.path(), &rab).args(by_session));
    let (_, remote, _) = outcome(
        pidx(tab.path(), &rab)
            .args(["--pg", &s.url])
            .args(by_session),
    );
    assert_eq!(remote, local);
}

/// The options of `stats` the rollups by source answer (and two they do not: a range bound
/// inside a quarter hour, a zone whose days do not begin on one).
fn stats_cases() -> Vec<Vec<String>> {
    let mut cases = Vec::new();
    for tz in [
        "UTC",
        "Europe/Paris",
        "+05:30",
        "-03:00",
        "+05:45",
        "+00:07",
    ] {
        for range in [
            &[][..],
            &["--since", "2026-02-02"][..],
            &["--until", "2026-02-03T06:15:00Z"][..],
            &["--since", "2026-02-01T12:00:00Z", "--until", "2026-02-04"][..],
            &["--since", "2026-02-02T00:00:00.001Z"][..],
        ] {
            let mut args = vec!["stats".to_string(), format!("--tz={tz}")];
            args.extend(range.iter().map(|a| a.to_string()));
            cases.push(args);
        }
    }
    cases
}

/// Stats rows equal but for the cost's last bits (the local index adds floats per quarter
/// hour; see pg_reads.rs).
fn same_figures(got: &Value, want: &Value, what: &str) {
    let rows = |v: &Value| v.as_array().unwrap().clone();
    let (got, want) = (rows(got), rows(want));
    assert_eq!(got.len(), want.len(), "{what}: {got:?}\n{want:?}");
    for (g, w) in got.iter().zip(&want) {
        let cost = |v: &Value| v["cost"].as_f64().unwrap();
        assert!((cost(g) - cost(w)).abs() < 1e-9, "{what}: {g} vs {w}");
        let without = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("cost");
            v.as_object_mut().unwrap().remove("source");
            v
        };
        assert_eq!(without(g), without(w), "{what}");
    }
}

/// The rollups by source as `usage_rollup` sums them afresh, and as kept (one line a row).
fn by_source_tables(admin: &mut postgres::Client) -> (String, String) {
    let q = crate::pg_support::text_of;
    let cols = "source, t, dup, n, user_msgs, assistant_msgs, tool_results, tool_calls, input,
                output, cache_read, cache_write, cost, tool_errors, compactions";
    let line = "string_agg(concat_ws(' ', source, t, dup, n, user_msgs, assistant_msgs,
                tool_results, tool_calls, input, output, cache_read, cache_write, cost,
                tool_errors, compactions), E'\\n' ORDER BY source, t, dup)";
    let kept = q(
        admin,
        &format!("SELECT {line} FROM (SELECT {cols} FROM usage_by_source) x"),
    ) + &q(
        admin,
        "SELECT string_agg(concat_ws(' ', source, fid, dup, n), E'\\n'
                               ORDER BY source, fid, dup) FROM usage_sessions",
    );
    // pg 0011's rollups of those: a row per source, UTC day and copy flag, with its first and
    // last quarter hour; the transcripts per source.
    let days = "string_agg(concat_ws(' ', source, day, dup, n, user_msgs, assistant_msgs,
                tool_results, tool_calls, input, output, cache_read, cache_write, cost,
                tool_errors, compactions, first_ms, last_ms), E'\\n' ORDER BY source, day, dup)";
    let kept = kept
        + &q(admin, &format!("SELECT {days} FROM usage_days"))
        + &q(
            admin,
            "SELECT string_agg(concat_ws(' ', source, dup, sessions), E'\\n'
                               ORDER BY source, dup) FROM usage_source_sessions",
        );
    let fresh = q(
        admin,
        &format!(
            "SELECT {line} FROM (SELECT source, t, dup, sum(n) AS n, sum(user_msgs) AS user_msgs,
                 sum(assistant_msgs) AS assistant_msgs, sum(tool_results) AS tool_results,
                 sum(tool_calls) AS tool_calls, sum(input) AS input, sum(output) AS output,
                 sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
                 sum(cost) AS cost, sum(tool_errors) AS tool_errors,
                 sum(compactions) AS compactions
               FROM usage_rollup GROUP BY 1, 2, 3) x"
        ),
    ) + &q(
        admin,
        "SELECT string_agg(concat_ws(' ', source, fid, dup, n), E'\\n' ORDER BY source, fid, dup)
         FROM (SELECT source, fid, dup, sum(n) AS n FROM usage_rollup GROUP BY 1, 2, 3) x",
    ) + &q(
        admin,
        &format!(
            "SELECT {days} FROM (
                 SELECT source, day, dup, sum(n) AS n, sum(user_msgs) AS user_msgs,
                        sum(assistant_msgs) AS assistant_msgs, sum(tool_results) AS tool_results,
                        sum(tool_calls) AS tool_calls, sum(input) AS input, sum(output) AS output,
                        sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
                        sum(cost) AS cost, sum(tool_errors) AS tool_errors,
                        sum(compactions) AS compactions, min(ts_ms) AS first_ms,
                        max(ts_ms) AS last_ms
                 FROM (SELECT *, CASE WHEN t = -9223372036854775808 THEN t
                                      ELSE t - ((t % 86400000) + 86400000) % 86400000 END AS day
                       FROM usage_rollup) r
                 GROUP BY 1, 2, 3) x"
        ),
    ) + &q(
        admin,
        "SELECT string_agg(concat_ws(' ', source, dup, n), E'\\n' ORDER BY source, dup)
         FROM (SELECT source, dup, count(DISTINCT fid) AS n FROM usage_rollup
               GROUP BY 1, 2) x",
    );
    (kept, fresh)
}

/// The conformance corpus (forks, compactions, tools, entries without a time) as source `me`
/// and generated sessions as `b`: `stats` and `stats --by source` over the server are the
/// local figures of each index, and a reader limited to both sources (who reads no row of the
/// rollups by source, so is answered from the rollups through its sessions) gets the same.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn stats_by_source_are_the_local_figures_in_every_zone_and_range() {
    let mut s = server("scale_stats");
    let (tme, rme) = common::conformance_copy();
    let b = ids("b");
    let (tb, rb) = index_of(&[("b", &b.iter().map(String::as_str).collect::<Vec<_>>())]);
    push(tme.path(), &rme, &s.url, &["--source", "me"]);
    push(tb.path(), &rb, &s.url, &["--source", "b"]);
    let (kept, fresh) = by_source_tables(&mut s.admin);
    assert!(kept.lines().count() > 50, "{kept}");
    assert_eq!(kept, fresh);
    let admin_url = std::env::var("PIDX_TEST_PG_ADMIN_URL").unwrap().replacen(
        "///postgres?",
        &format!("///{}?", s.db),
        1,
    );
    let (code, _, err) = outcome(pidx(tb.path(), &rb).args([
        "team",
        "add-member",
        "scale_limited",
        "--reader",
        "--reads",
        "me",
        "--reads",
        "b",
        "--admin",
        &admin_url,
    ]));
    assert_eq!(code, Some(0), "{err}");
    let limited = s.url.replacen("user=pidx_writer", "user=scale_limited", 1);
    let mut nonzero = 0;
    for args in stats_cases() {
        // `global` options before the command, `more` after it.
        let remote = |url: &str, global: &[&str], more: &[&str]| {
            json(
                pidx(tb.path(), &rb)
                    .args(["--pg", url])
                    .args(global)
                    .args(&args)
                    .args(more),
            )
        };
        let local_me = json(pidx(tme.path(), &rme).args(&args));
        let local_b = json(pidx(tb.path(), &rb).args(&args));
        same_figures(
            &remote(&s.url, &["--source", "me"], &[]),
            &local_me,
            &format!("me {args:?}"),
        );
        same_figures(
            &remote(&s.url, &["--source", "b"], &[]),
            &local_b,
            &format!("b {args:?}"),
        );
        // Grouped by source: each source's row is its own index's total.
        let by = ["--by", "source"];
        let grouped = remote(&s.url, &[], &by);
        let rows: Vec<&Value> = grouped.as_array().unwrap().iter().collect();
        for (source, local) in [("me", &local_me), ("b", &local_b)] {
            let want = &local[0];
            let got: Vec<Value> = rows
                .iter()
                .filter(|r| r["key"]["source"] == source)
                .map(|r| {
                    let mut r = (*r).clone();
                    r["key"] = serde_json::json!({});
                    r
                })
                .collect();
            if want["sessions"] == 0 {
                assert!(got.is_empty(), "{source} {args:?}: {got:?}");
            } else {
                nonzero += 1;
                same_figures(
                    &Value::Array(got),
                    &Value::Array(vec![want.clone()]),
                    &format!("{source} by source {args:?}"),
                );
            }
        }
        // Every source at once, and the limited reader's answers (the rollups through its
        // sessions): the same.
        let every = remote(&s.url, &[], &[]);
        same_figures(
            &remote(&limited, &[], &[]),
            &every,
            &format!("limited {args:?}"),
        );
        let b = ["--source", "b"];
        same_figures(
            &remote(&limited, &b, &by),
            &remote(&s.url, &b, &by),
            &format!("limited {args:?}"),
        );
        assert_eq!(
            every[0]["sessions"].as_i64().unwrap(),
            local_me[0]["sessions"].as_i64().unwrap() + local_b[0]["sessions"].as_i64().unwrap(),
            "{args:?}"
        );
    }
    assert!(nonzero > 40, "{nonzero}");
    // Those answers came from the rollups by source; the limited reader reads none of them.
    let scans: i64 = s
        .admin
        .query_one(
            "SELECT sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::int8
             FROM pg_stat_user_tables
             WHERE relid IN (SELECT relid FROM pg_partition_tree('usage_by_source'))",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(scans >= 60, "{scans}");
    let mut as_limited = pidx::team::pg::connect(&limited).unwrap();
    for table in ["usage_by_source", "usage_sessions"] {
        let rows: i64 = as_limited
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .unwrap()
            .get(0);
        assert_eq!(rows, 0, "{table}");
    }
    // Nothing in range: one row of zeros, as locally; grouped, no row.
    let none = ["stats", "--since", "2099-01-01", "--tz", "UTC"];
    let local = json(pidx(tme.path(), &rme).args(none));
    let remote = json(pidx(tme.path(), &rme).args(["--pg", &s.url]).args(none));
    same_figures(&remote, &local, "nothing in range");
    let grouped = json(
        pidx(tme.path(), &rme)
            .args(["--pg", &s.url])
            .args(none)
            .args(["--by", "source"]),
    );
    assert_eq!(grouped, Value::Array(Vec::new()));
}

/// A server of schema 7 (before pg/0008 and 0009), pushed, then migrated: the rollups by source
/// are filled from the usage rollups, readers are refused until then, and answers after the
/// migration and after a later push are the local ones. (The rows a push of schema 7 wrote are
/// the rows of a push now but for the tables pg/0008 and 0009 add, which `UNDO_8_9` drops.)
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_server_pushed_before_is_migrated_and_answers_the_same() {
    let mut s = server("scale_upgrade");
    let (tme, rme) = common::conformance_copy();
    // Pushed at schema 9, not partitioned (pg/0010), as a server of schema 7 was.
    crate::pg_support::push_at(9, tme.path(), &rme, &s.url, &["--source", "me"]);
    let list = ["list", "--all"];
    let listed = || outcome(pidx(tme.path(), &rme).args(["--pg", &s.url]).args(list));
    let before = outcome(
        pidx(tme.path(), &rme)
            .env("PIDX_PG_SCHEMA", "9")
            .args(["--pg", &s.url])
            .args(list),
    );
    assert_eq!(before.0, Some(0), "{}", before.2);
    s.admin.batch_execute(UNDO_8_9).unwrap();
    // A member as `pidx team add-member --writes me` made one at schema 7: the migration gives
    // it the same rights on the new tables, which its pushes write through the triggers.
    s.admin
        .batch_execute(&format!(
            "DO $$ BEGIN CREATE ROLE scale_old_member LOGIN;
                   EXCEPTION WHEN duplicate_object THEN NULL; END $$;
             GRANT CONNECT ON DATABASE {} TO scale_old_member;
             GRANT USAGE ON SCHEMA public TO scale_old_member;
             GRANT SELECT ON pidx_schema, v_sessions, v_entries, v_messages, v_usage,
                 v_tool_calls TO scale_old_member;
             GRANT SELECT, INSERT, UPDATE, DELETE ON sources, sessions, entries, entry_text,
                 text_heads, tool_uses, listing_text, bad_lines, usage_rollup TO scale_old_member;
             GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO scale_old_member;
             INSERT INTO pidx_members (role, source) VALUES ('scale_old_member', 'me');",
            s.db
        ))
        .unwrap();
    let member = s
        .url
        .replacen("user=pidx_writer", "user=scale_old_member", 1);
    let local = |args: &[&str]| json(pidx(tme.path(), &rme).args(args));
    let remote = |args: &[&str]| json(pidx(tme.path(), &rme).args(["--pg", &s.url]).args(args));
    let (code, _, err) = outcome(pidx(tme.path(), &rme).args(["--pg", &s.url]).args(list));
    assert_ne!(code, Some(0), "a schema-7 server is refused until migrated");
    assert!(err.contains("pidx pg migrate"), "{err}");
    let (code, _, err) = outcome(pidx(tme.path(), &rme).args(["pg", "migrate", "--pg", &s.url]));
    assert_eq!(code, Some(0), "{err}");
    let (kept, fresh) = by_source_tables(&mut s.admin);
    assert!(kept.lines().count() > 20, "{kept}");
    assert_eq!(kept, fresh, "filled by the migration");
    assert_eq!(listed(), before, "the same handles");
    let same = || {
        for stats in [
            &["stats", "--tz", "Europe/Paris"][..],
            &["stats", "--tz", "UTC", "--since", "2026-03-01"][..],
        ] {
            same_figures(&remote(stats), &local(stats), &format!("{stats:?}"));
        }
    };
    same();
    // The member's first push after the migration sends every transcript again (pg 0020: each
    // text's postings) and keeps them too.
    let all = push(tme.path(), &rme, &member, &["--source", "me"]);
    assert_eq!(all["appended"].as_u64(), Some(0), "{all}");
    assert!(all["rewritten"].as_u64() > Some(50), "{all}");
    let (kept, fresh) = by_source_tables(&mut s.admin);
    assert_eq!(kept, fresh, "after every transcript is sent again");
    same();
    // A later push by the member (a transcript grown by a line) keeps them; grown again in the
    // same quarter hour, its rollup row is updated (old and new rows of the same day at once),
    // not added.
    let file = crate::pg_support::session_files(&rme)
        .into_iter()
        .find(|f| crate::pg_support::appendable(f))
        .unwrap();
    for (id, text, what) in [
        (
            "after-9",
            "grown after the migration",
            "kept by the triggers",
        ),
        (
            "after-9-b",
            "grown again in the same quarter hour",
            "kept when a rollup row is updated",
        ),
    ] {
        crate::pg_support::append(&file, id, text);
        let again = push(tme.path(), &rme, &member, &["--source", "me"]);
        assert_eq!(again["appended"].as_u64(), Some(1), "{again}");
        let (kept, fresh) = by_source_tables(&mut s.admin);
        assert_eq!(kept, fresh, "{what}");
        same();
    }
}

/// A command's JSON output without its hits' scores, which move with the clock (the recency
/// weight); any other output as it is.
fn without_scores(out: &str) -> String {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("score");
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(out) {
        Ok(mut v) => {
            strip(&mut v);
            v.to_string()
        }
        Err(_) => out.to_string(),
    }
}

/// The large tables as pg/0010 makes them: (partitioned parents in `public`, partitions in
/// `pidx_parts`).
fn partitioned(admin: &mut postgres::Client) -> (i64, i64) {
    let r = admin
        .query_one(
            "SELECT count(*) FILTER (WHERE n.nspname = 'public' AND c.relkind = 'p'),
                    count(*) FILTER (WHERE n.nspname = 'pidx_parts' AND c.relkind = 'r')
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

/// A server of schema 9 (tables not partitioned), pushed by two sources with a member and a
/// limited reader registered, then migrated (through schema 10): every large table is partitioned by
/// source, the server holds the same rows (`dump`), every reading command answers the same for
/// each role, the member's next push lands, and no role reads a partition directly.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn a_server_of_schema_9_is_partitioned_by_source_and_answers_the_same() {
    let mut s = server("parts_upgrade");
    let (tme, rme) = common::conformance_copy();
    let tother = tempfile::tempdir().unwrap();
    let rother = tother.path().join("sessions");
    crate::pg_support::corpus(&rother, 5, 12);
    let at9 = |cmd: &mut std::process::Command| {
        cmd.env("PIDX_PG_SCHEMA", "9");
    };
    let admin = crate::pg_support::admin_url(&s.db);
    for (tmp, root, source) in [(tme.path(), &rme, "me"), (tother.path(), &rother, "other")] {
        crate::pg_support::push_at(9, tmp, root, &s.url, &["--source", source]);
    }
    // The shared reader role as the team docs set it up.
    s.admin
        .batch_execute(&crate::pg_support::reader_grants(&s.db))
        .unwrap();
    for args in [
        &["parts_member", "--writes", "me"][..],
        &["parts_reader", "--reads", "me"][..],
    ] {
        let mut cmd = pidx(tme.path(), &rme);
        at9(&mut cmd);
        let (code, _, err) = outcome(
            cmd.args(["team", "add-member"])
                .args(args)
                .args(["--admin", &admin]),
        );
        assert_eq!(code, Some(0), "{err}");
    }
    assert_eq!(partitioned(&mut s.admin), (0, 0), "schema 9: no partitions");
    let version = |admin: &mut postgres::Client| -> i32 {
        admin
            .query_one("SELECT max(version) FROM pidx_schema", &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(version(&mut s.admin), 9);
    let member = s.url.replacen("user=pidx_writer", "user=parts_member", 1);
    let limited = s.url.replacen("user=pidx_writer", "user=parts_reader", 1);
    let file = crate::pg_support::session_files(&rme)
        .into_iter()
        .find(|f| crate::pg_support::appendable(f))
        .unwrap();
    let path = file.to_str().unwrap().to_string();
    let reads: Vec<Vec<&str>> = vec![
        vec!["list", "--all", "--json"],
        vec!["search", "the", "--json"],
        vec!["search", "error", "--limit", "50", "--json"],
        vec!["search", "\"tool call\"", "--json"],
        vec!["search", "--literal", "=>", "--json"],
        vec!["stats", "--tz", "UTC", "--json"],
        vec!["stats", "--by", "source", "--tz", "UTC", "--json"],
        vec!["context", &path, "--json"],
    ];
    let answers = |at: bool| -> Vec<(String, Option<i32>, String)> {
        let mut out = Vec::new();
        for url in [&s.url, &s.reader, &limited, &member] {
            for args in &reads {
                let mut cmd = pidx(tme.path(), &rme);
                if at {
                    at9(&mut cmd);
                }
                let (code, stdout, err) = outcome(cmd.args(["--pg", url.as_str()]).args(args));
                let stdout = if code == Some(0) { stdout } else { err };
                out.push((format!("{url} {args:?}"), code, without_scores(&stdout)));
            }
        }
        out
    };
    let before = answers(true);
    assert!(before.iter().any(|(_, code, _)| *code == Some(0)));
    let held = crate::pg_support::dump(&mut s.admin);

    let (code, _, err) = outcome(pidx(tme.path(), &rme).args(["pg", "migrate", "--pg", &s.url]));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        version(&mut s.admin),
        pidx::team::pg::migrate::latest(),
        "the current schema"
    );
    assert_eq!(
        partitioned(&mut s.admin),
        (14, 112),
        "fourteen tables (pg 0019's counts of texts per word, pg 0020's postings and pg 0032's \
         passages and their marks too), eight partitions each"
    );
    // The same rows, but that pg 0016 marks transcripts with text past ASCII to be sent again
    // (`ino` -1) and pg 0018 gives each text its entry's time and silence, which must be the
    // entry's.
    assert_eq!(
        without_ino(&without_text_times(&crate::pg_support::dump(&mut s.admin))),
        without_ino(&without_text_times(&held)),
        "the same rows"
    );
    let copies = s
        .admin
        .query_one(
            "SELECT count(*) FILTER (WHERE t.ts_ms IS DISTINCT FROM e.ts_ms OR t.silent <> e.silent),
                    count(*) FILTER (WHERE t.ts_ms IS NOT NULL), count(*)
             FROM entry_text t JOIN entries e USING (source, fid, seq)",
            &[],
        )
        .unwrap();
    let (differ, timed, texts): (i64, i64, i64) = (copies.get(0), copies.get(1), copies.get(2));
    assert_eq!(
        differ, 0,
        "texts whose time or silence is not their entry's"
    );
    assert_eq!(
        crate::pg_support::word_counts_differ(&mut s.admin),
        0,
        "pg 0019's counts of texts per word, from the texts there"
    );
    assert!(
        timed > 100 && texts > timed,
        "{timed} of {texts} texts timed"
    );
    assert!(crate::pg_support::dump(&mut s.admin).contains("\"ino\": -1"));
    let after = answers(false);
    assert_eq!(after.len(), before.len());
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(a, b);
    }
    let (kept, fresh) = by_source_tables(&mut s.admin);
    assert_eq!(kept, fresh, "the rollups by source moved whole");
    // Nothing found is exit 1 and one line, as locally, words or literal.
    for q in [&["zzqqxyzzy"][..], &["--literal", "zzqq=>xyzzy"][..]] {
        let local = outcome(pidx(tme.path(), &rme).arg("search").args(q));
        let remote = outcome(
            pidx(tme.path(), &rme)
                .args(["--pg", &s.url, "search"])
                .args(q),
        );
        assert_eq!(local.0, Some(1), "{q:?}: {local:?}");
        assert_eq!(remote, local, "{q:?}");
    }

    // The member's next push (a transcript grown by a line) lands through the parents, and
    // its answers are the local ones. It sends every transcript again, the grown one with
    // them (pg 0020: each text's postings).
    crate::pg_support::append(&file, "after-10", "grown after partitioning");
    let again = push(tme.path(), &rme, &member, &["--source", "me"]);
    assert_eq!(again["appended"].as_u64(), Some(0), "{again}");
    assert!(again["rewritten"].as_u64() > Some(50), "{again}");
    let found = outcome(pidx(tme.path(), &rme).args(["--pg", &s.url, "search", "partitioning"]));
    assert!(found.1.contains("grown after partitioning"), "{found:?}");
    let (kept, fresh) = by_source_tables(&mut s.admin);
    assert_eq!(
        kept, fresh,
        "kept by the triggers on the partitioned tables"
    );
    // Still only its own source, and new file ids go on from the old sequence.
    let mut as_member = pidx::team::pg::connect(&member).unwrap();
    assert!(as_member
        .batch_execute("DELETE FROM sessions WHERE source = 'other'")
        .is_ok());
    let others: i64 = s
        .admin
        .query_one("SELECT count(*) FROM sessions WHERE source = 'other'", &[])
        .unwrap()
        .get(0);
    assert_eq!(others, 5, "a member deletes nothing of another source");
    let fids: (i64, i64) = {
        let r = s
            .admin
            .query_one("SELECT count(*), count(DISTINCT fid) FROM sessions", &[])
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(fids.0, fids.1, "file ids unique across sources");

    // No role but the tables' owner (the writer here) reads a partition directly, where no
    // policy would bind it.
    for url in [&s.reader, &limited, &member] {
        let mut c = pidx::team::pg::connect(url).unwrap();
        let err = c
            .query_one("SELECT count(*) FROM pidx_parts.entries_0", &[])
            .unwrap_err();
        assert!(
            format!("{err:?}").contains("permission denied"),
            "{url}: {err:?}"
        );
    }
    // Even granted one by mistake, a partition shows no row: row-level security is on there
    // with no policy.
    s.admin
        .batch_execute(
            "GRANT USAGE ON SCHEMA pidx_parts TO parts_reader;
             GRANT SELECT ON ALL TABLES IN SCHEMA pidx_parts TO parts_reader;",
        )
        .unwrap();
    let mut c = pidx::team::pg::connect(&limited).unwrap();
    let count =
        |c: &mut postgres::Client, sql: &str| -> i64 { c.query_one(sql, &[]).unwrap().get(0) };
    let direct: i64 = (0..8)
        .map(|n| {
            count(
                &mut c,
                &format!("SELECT count(*) FROM pidx_parts.entries_{n}"),
            )
        })
        .sum();
    assert_eq!(direct, 0);
    assert!(count(&mut c, "SELECT count(*) FROM entries") > 0);
}

/// A `dump` with each transcript's `ino` (its file's inode, or -1 to be sent again) left out.
/// `dump` without the texts' copies of their entries' times and silence (pg 0018), which a
/// server of schema 9 does not hold: dropped from every line holding a text's words (`tsv`).
fn without_text_times(dump: &str) -> String {
    let copies =
        regex::Regex::new(r#""ts_ms": (null|-?[0-9]+), |"silent": (true|false), "#).unwrap();
    (dump.split('\n'))
        .map(|line| {
            if line.contains("\"tsv\": ") {
                copies.replace_all(line, "").into_owned()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn without_ino(dump: &str) -> String {
    let mut out = String::with_capacity(dump.len());
    let mut rest = dump;
    while let Some(at) = rest.find("\"ino\": ") {
        let value = &rest[at + 7..];
        let end = value
            .find(|c: char| c != '-' && !c.is_ascii_digit())
            .unwrap_or(value.len());
        out.push_str(&rest[..at + 7]);
        out.push('_');
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}
