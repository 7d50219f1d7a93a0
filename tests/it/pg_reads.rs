//! Every reading option with `--pg` against a real PostgreSQL server (started by
//! tests/pg/run.sh, as tests/it/pg.rs): `list --query`, `search --model/--session/--branch/re:`,
//! `stats --by tool/agent/channel` and `--csv` answer what the local command answers on the
//! pushed conformance corpus. Plain `cargo test` reports these as ignored; tests/pg/run.sh runs them.

use crate::common;

use serde_json::Value;

use crate::pg_support as support;

use support::*;

/// The conformance corpus pushed to a fresh database; `local` and `remote` run pidx on it.
struct Pushed {
    server: Server,
    tmp: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Pushed {
    fn new(name: &str) -> Pushed {
        let server = server(name);
        let (tmp, root) = common::conformance_copy();
        let report = push(tmp.path(), &root, &server.url, &["--source", "me"]);
        assert!(report["new"].as_u64().unwrap() >= 80, "{report}");
        Pushed { server, tmp, root }
    }

    fn local(&self, args: &[&str]) -> (Option<i32>, String, String) {
        outcome(pidx(self.tmp.path(), &self.root).args(args))
    }

    fn remote(&self, args: &[&str]) -> (Option<i32>, String, String) {
        outcome(
            pidx(self.tmp.path(), &self.root)
                .args(["--pg", &self.server.url])
                .args(args),
        )
    }

    fn local_json(&self, args: &[&str]) -> Value {
        json(pidx(self.tmp.path(), &self.root).args(args))
    }

    fn remote_json(&self, args: &[&str]) -> Value {
        json(
            pidx(self.tmp.path(), &self.root)
                .args(["--pg", &self.server.url])
                .args(args),
        )
    }
}

/// More transcripts than one statement reads the texts of (`reads::list`: 64 transcripts or
/// 4,096 messages a run): `list --query` still gives the local answer, each session's text its
/// own, whichever run read it.
#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn list_query_reads_many_transcripts_texts_a_few_at_a_time_as_locally() {
    let s = server("list_query_runs");
    // 150 transcripts of 100 messages (runs cut by the messages: 40 a run), and 140 of 3 (runs
    // cut by the count), each its own source and local index.
    let corpora: Vec<(tempfile::TempDir, std::path::PathBuf, &str)> =
        [(150, 100, "long"), (140, 3, "short")]
            .into_iter()
            .map(|(sessions, entries, source)| {
                let tmp = tempfile::tempdir().unwrap();
                let root = tmp.path().join("sessions");
                corpus(&root, sessions, entries);
                let report = push(tmp.path(), &root, &s.url, &["--source", source]);
                assert_eq!(report["new"].as_u64(), Some(sessions as u64), "{report}");
                (tmp, root, source)
            })
            .collect();
    for q in ["words 97", "re:words 9[0-9]", "some words 2", "zzqx"] {
        for (tmp, root, source) in &corpora {
            let args = ["list", "--all", "--query", q];
            let want = json(pidx(tmp.path(), root).args(args));
            let got = json(
                pidx(tmp.path(), root)
                    .args(["--pg", &s.url, "--source", source])
                    .args(args),
            );
            assert_eq!(without_source(&got), want, "list --query {q:?} of {source}");
        }
    }
    let (tmp, root, _) = &corpora[1];
    let with_text = ["list", "--all", "--query", "words", "--with-text"];
    let want = json(pidx(tmp.path(), root).args(with_text));
    assert_eq!(want.as_array().map(Vec::len), Some(140));
    let got = json(
        pidx(tmp.path(), root)
            .args(["--pg", &s.url, "--source", "short"])
            .args(with_text),
    );
    assert_eq!(without_source(&got), want, "list --with-text");
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn list_query_on_the_server_is_pis_picker_as_locally() {
    let p = Pushed::new("list_query");
    let golden = common::read_json(&common::conformance_dir().join("golden/picker.json"));
    let queries = golden["queries"].as_object().unwrap();
    let all = p.local_json(&["list", "--all"]).as_array().unwrap().len();
    let mut narrowing = 0;
    for q in queries.keys() {
        let args = ["list", "--all", "--query", q, "--json"];
        let (code, out, err) = p.local(&args);
        let got = p.remote(&args);
        if code != Some(0) {
            // A query pidx refuses (`re:` alone) is refused alike.
            assert_eq!(got, (code, out, err), "list --query {q:?}");
            continue;
        }
        assert_eq!((got.0, got.2.as_str()), (code, ""), "list --query {q:?}");
        let want: Value = serde_json::from_str(&out).unwrap();
        let remote: Value = serde_json::from_str(&got.1).unwrap();
        assert_eq!(without_source(&remote), want, "list --query {q:?}");
        let n = want.as_array().map_or(0, Vec::len);
        narrowing += usize::from(n > 0 && n < all);
    }
    assert!(
        narrowing * 5 > queries.len(),
        "only {narrowing} of {} queries narrow the list",
        queries.len()
    );
    for args in [
        &["--all", "--query", "fix", "--limit", "2"][..],
        &["--all", "--query", "hello", "--with-text"],
        &["--all", "--query", "re:[Ff]iller \\d+"],
        &["--cwd", "/home/user/projects/pidx", "--query", "a"],
    ] {
        let mut a = vec!["list"];
        a.extend_from_slice(args);
        let want = p.local_json(&a);
        assert!(!want.as_array().unwrap().is_empty(), "{a:?} finds nothing");
        assert_eq!(without_source(&p.remote_json(&a)), want, "{a:?}");
    }
    // Without --all or --cwd: the current directory's project, as locally (none here).
    let here = p.remote_json(&["list"]);
    assert_eq!(here.as_array().map(Vec::len), Some(0), "{here}");
    assert_eq!(here, p.local_json(&["list"]));
    // The same one-line refusals as locally.
    for bad in [&["--query", "re:("][..], &["--query", "x", "--limit", "0"]] {
        let mut a = vec!["list", "--all"];
        a.extend_from_slice(bad);
        let (code, out, err) = p.remote(&a);
        assert_eq!((code, out.as_str()), (Some(2), ""), "{a:?}: {err}");
        assert_eq!(err, p.local(&a).2, "{a:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// Hits as comparable rows: session, entry, kind and (`with_snippet`) the snippet's text.
fn hits(v: &Value, with_snippet: bool) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let mut row = format!("{} {} {}", h["path"], h["entryId"], h["kind"]);
            if with_snippet {
                // PostgreSQL's text cannot hold U+0000: the server keeps U+FFFD in its place.
                let text = h["snippet"]["text"].as_str().unwrap_or_default();
                row.push_str(&format!(" {:?}", text.replace('\0', "\u{fffd}")));
            }
            row
        })
        .collect();
    out.sort();
    out
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn search_options_on_the_server_find_what_the_local_search_finds() {
    let p = Pushed::new("search_options");
    let list = p.local_json(&["list", "--all"]);
    let sessions: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    let id = list
        .as_array()
        .unwrap()
        .iter()
        .find_map(|r| {
            r["id"]
                .as_str()
                .filter(|id| id.len() >= 8 && !id.starts_with("bad"))
        })
        .unwrap()
        .to_string();
    let mut cases: Vec<Vec<String>> = Vec::new();
    let mut case = |a: &[&str]| cases.push(a.iter().map(|s| s.to_string()).collect());
    for model in ["sonnet", "GPT", "gemini-2.5", "no-such-model", "%5", "_"] {
        case(&["test", "--model", model]);
        case(&["re:e", "--model", model]);
    }
    for s in sessions.iter().take(12) {
        case(&["test", "--session", s]);
        case(&["re:[a-z]+", "--session", s, "--branch"]);
        case(&["--literal", "e", "--session", s, "--branch"]);
    }
    case(&["test", "--session", &id]);
    for q in [
        "test",
        "branch",
        "hello",
        "re:h[ae]llo",
        "re:(?i)HELLO",
        r"re:\d{2,}",
        "re:fn \\w+",
        "re:README",
        "re:é",
        "re:^$",
    ] {
        case(&[q]);
        case(&[q, "--branch"]);
        case(&[q, "--in", "user,assistant"]);
    }
    let mut found = 0;
    for a in &cases {
        let mut args = vec!["search", "--limit", "1000"];
        args.extend(a.iter().map(String::as_str));
        let regex = a.iter().any(|s| s.starts_with("re:") || s == "--literal");
        let want = hits(&p.local_json(&args), regex);
        let got = p.remote_json(&args);
        assert_eq!(hits(&got, regex), want, "{args:?}");
        found += usize::from(!want.is_empty());
    }
    assert!(
        found * 3 > cases.len() * 2,
        "only {found} of {} find anything",
        cases.len()
    );
    // --limit keeps that many of the matches; the branch really narrows.
    let few = p.remote_json(&["search", "re:[a-z]+", "--limit", "5"]);
    assert_eq!(few.as_array().unwrap().len(), 5);
    let every = p.remote_json(&["search", "re:[a-z]+", "--limit", "100000"]);
    let branch = p.remote_json(&["search", "re:[a-z]+", "--limit", "100000", "--branch"]);
    assert!(branch.as_array().unwrap().len() < every.as_array().unwrap().len());
    // Errors as locally: an unknown session, an invalid pattern.
    for bad in [&["x", "--session", "no-such-session"][..], &["re:("]] {
        let mut args = vec!["search"];
        args.extend_from_slice(bad);
        let (code, out, err) = p.remote(&args);
        let (lcode, _, lerr) = p.local(&args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (lcode, "", lerr.as_str()),
            "{args:?}"
        );
    }
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn stats_by_every_dimension_on_the_server_is_the_local_figures() {
    let p = Pushed::new("stats_dims");
    let mut compared = 0;
    for by in [
        "tool",
        "agent",
        "channel",
        "tool,day",
        "project,tool",
        "model,agent",
        "channel,month",
        "session,tool",
        "day",
        "week,provider",
        // Periods alone: from the rollups by source (`reads::stats::periods_sql`).
        "month",
        "week,day",
    ] {
        for tz in ["UTC", "Europe/Paris", "+05:30", "-03:00"] {
            let tz = format!("--tz={tz}");
            let args = ["stats", "--by", by, &tz];
            let want = p.local_json(&args);
            assert!(!want.as_array().unwrap().is_empty(), "{args:?}");
            assert_same_figures(&p.remote_json(&args), &want, &format!("{args:?}"));
            compared += 1;
        }
    }
    let tools = p.local_json(&["stats", "--by", "tool", "--tz", "UTC"]);
    assert!(tools.as_array().unwrap().len() >= 5, "{tools}");
    // CSV is the local CSV with the source first when grouped by source.
    let csv = ["stats", "--by", "tool,month", "--csv", "--tz", "UTC"];
    let (code, out, err) = p.remote(&csv);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(out, p.local(&csv).1);
    let (_, by_source, _) = p.remote(&["stats", "--by", "source,tool", "--csv"]);
    assert!(
        by_source.starts_with("source,tool,sessions,"),
        "{by_source}"
    );
    assert!(by_source.contains("\nme,bash,"), "{by_source}");
    // What the server cannot know is one clear line.
    let (code, _, err) = p.remote(&["stats", "--tz", "local"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--tz local") && err.lines().count() == 1,
        "{err}"
    );
    eprintln!("compared {compared} groupings");
}

/// Stats rows equal but for the cost, a float sum whose last bits depend on the order of
/// addition (the local index adds rolled-up quarter hours): equal within 1e-9 dollars.
fn assert_same_figures(got: &Value, want: &Value, what: &str) {
    let rows = |v: &Value| v.as_array().unwrap().clone();
    let (got, want) = (rows(got), rows(want));
    assert_eq!(got.len(), want.len(), "{what}: {got:?}\n{want:?}");
    for (g, w) in got.iter().zip(&want) {
        let cost = |v: &Value| v["cost"].as_f64().unwrap();
        assert!((cost(g) - cost(w)).abs() < 1e-9, "{what}: {g} vs {w}");
        let without = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("cost");
            v
        };
        assert_eq!(without(g), without(w), "{what}");
    }
}

/// The server's rollups as `pidx_usage_facts` over the entries gives them afresh, one line per
/// row (costs to 1e-9: a sum kept by additions and subtractions differs in its last bits).
fn rollups(admin: &mut postgres::Client, fresh: bool) -> String {
    let facts: String = admin
        .query_one("SELECT pidx_usage_facts('entries', 1)", &[])
        .unwrap()
        .get(0);
    let from = if fresh {
        format!(
            "(SELECT source, fid, t, model, provider, dup, sum(n) AS n, sum(user_msgs) AS u,
                     sum(assistant_msgs) AS a, sum(tool_results) AS r, sum(tool_calls) AS c,
                     sum(input) AS i, sum(output) AS o, sum(cache_read) AS cr,
                     sum(cache_write) AS cw, sum(cost) AS cost, sum(tool_errors) AS te,
                     sum(compactions) AS co
              FROM ({facts}) f GROUP BY 1, 2, 3, 4, 5, 6) x"
        )
    } else {
        "(SELECT source, fid, t, model, provider, dup, n, user_msgs AS u, assistant_msgs AS a,
                 tool_results AS r, tool_calls AS c, input AS i, output AS o, cache_read AS cr,
                 cache_write AS cw, cost, tool_errors AS te, compactions AS co
          FROM usage_rollup) x"
            .to_string()
    };
    admin
        .query_one(
            &format!(
                "SELECT string_agg(concat_ws(' ', source, fid, t, model, provider, dup, n, u, a, r,
                                             c, i, o, cr, cw, round(cost::numeric, 9), te, co),
                                   E'\\n' ORDER BY source, fid, t, model, provider, dup)
                 FROM {from}"
            ),
            &[],
        )
        .unwrap()
        .get::<_, Option<String>>(0)
        .unwrap_or_default()
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn server_rollups_follow_every_change_and_answer_as_the_entries() {
    let mut p = Pushed::new("rollups");
    let admin = &mut p.server.admin;
    let first = rollups(admin, false);
    assert!(first.lines().count() > 100, "{first}");
    assert_eq!(first, rollups(admin, true));
    let dups = |admin: &mut postgres::Client| -> i64 {
        admin
            .query_one("SELECT count(*) FROM entries WHERE dup", &[])
            .unwrap()
            .get(0)
    };
    let dup_before = dups(admin);
    // An append, a rewrite, and the deletion of every session a fork copied from (its copies
    // in the forks become the counted ones: the copy flags change on the server).
    let files = session_files(&p.root);
    let parents: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let head = std::fs::read_to_string(f).ok()?;
            let v: Value = serde_json::from_str(head.lines().next()?).ok()?;
            let parent = v["parentSession"].as_str()?;
            Some(parent.rsplit('/').next()?.to_string())
        })
        .collect();
    let mut deleted = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if parents.contains(&name) {
            std::fs::remove_file(f).unwrap();
            deleted += 1;
        }
    }
    assert!(deleted >= 2, "{parents:?}");
    let usable: Vec<_> = files
        .iter()
        .filter(|f| crate::pg_support::appendable(f))
        .collect();
    append(usable[0], "rollup-append", "more words");
    let body = std::fs::read_to_string(usable[1]).unwrap();
    let half: Vec<&str> = body.lines().take(body.lines().count() / 2 + 1).collect();
    std::fs::write(usable[1], half.join("\n") + "\n").unwrap();
    push(p.tmp.path(), &p.root, &p.server.url, &["--source", "me"]);
    let admin = &mut p.server.admin;
    assert!(dups(admin) < dup_before, "no copy flag changed");
    assert_eq!(rollups(admin, false), rollups(admin, true));
    // The rollups' answers (quarter-hour bounds) equal the entries' (a bound inside one) and the
    // local index's.
    for by in [
        "model",
        "day,provider",
        "session",
        "project,week",
        "source,month",
        "month",
    ] {
        let rolled = p.remote_json(&["stats", "--by", by, "--since", "2000-01-01"]);
        let scanned = p.remote_json(&["stats", "--by", by, "--since", "2000-01-01T00:00:00.001Z"]);
        assert_same_figures(&rolled, &scanned, by);
        if !by.starts_with("source") {
            let local =
                p.local_json(&["stats", "--by", by, "--since", "2000-01-01", "--tz", "UTC"]);
            assert_same_figures(&rolled, &local, by);
        }
    }
}

/// A server answer's text with its source taken out: the `SOURCE` column of a table (the
/// last one), a `source:` line, and the `me  ` a search header starts with.
fn text_without_source(text: &str) -> String {
    let table = text
        .lines()
        .next()
        .is_some_and(|h| h.starts_with("SESSION ") && h.ends_with("  SOURCE"));
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("source:") {
            continue;
        }
        let line = if table {
            let cut = line.strip_suffix("  SOURCE").or(line.strip_suffix("  me"));
            cut.expect("a row without its source").trim_end()
        } else {
            line.strip_prefix("me  ").unwrap_or(line)
        };
        out.push(line.to_string());
    }
    out.join("\n")
}

/// Costs to 1e-9 dollars: float sums whose last bits depend on the order of addition.
fn rounded(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(rounded).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), rounded(v))).collect()),
        Value::Number(n) if n.is_f64() => {
            serde_json::json!((n.as_f64().unwrap() * 1e9).round() / 1e9)
        }
        other => other.clone(),
    }
}

/// A JSON answer without the `source` the server adds to each row or object.
fn json_without_source(v: &Value) -> Value {
    match v {
        Value::Array(rows) => Value::Array(rows.iter().map(json_without_source).collect()),
        Value::Object(m) => {
            let mut m = m.clone();
            m.remove("source");
            Value::Object(m)
        }
        other => other.clone(),
    }
}

#[test]
#[ignore = "needs a PostgreSQL server: bash tests/pg/run.sh"]
fn every_reading_command_prints_the_local_output_from_the_server() {
    let p = Pushed::new("same_output");
    let list = p.local_json(&["list", "--all"]);
    let rows = list.as_array().unwrap();
    // A session with a name, labels or several branches says more in `show` and `tree`.
    let path = rows
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .max_by_key(|path| p.local(&["tree", path]).1.lines().count())
        .unwrap()
        .to_string();
    let handle = p.local_json(&["show", &path])["handle"]
        .as_str()
        .unwrap()
        .to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["list", "--all"],
        vec!["list", "--all", "--limit", "5"],
        vec!["list", "--all", "--query", "test"],
        vec!["show", &path],
        vec!["show", &handle],
        vec!["context", &path],
        vec!["context", &handle, "--last", "2"],
        vec!["context", &path, "--max-chars", "500"],
        vec!["tree", &path],
        vec!["search", "hello", "--limit", "1000"],
        vec!["search", "--literal", "test", "--limit", "5"],
        vec!["search", "--literal", "hello"],
        vec!["stats", "--tz", "UTC"],
        vec!["stats", "--by", "model", "--tz", "UTC"],
        vec!["stats", "--by", "month,provider", "--tz", "Europe/Paris"],
        vec!["stats", "--by", "session", "--tz", "UTC"],
        vec!["stats", "--by", "tool,day", "--tz", "+05:30"],
    ];
    for args in &commands {
        let (code, want, err) = p.local(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!want.trim().is_empty(), "{args:?} prints nothing");
        let (code, got, err) = p.remote(args);
        assert_eq!(code, Some(0), "--pg {args:?}: {err}");
        let got = if args[0] == "context" || args[0] == "tree" || args[0] == "stats" {
            // No source column: the same text, byte for byte.
            got
        } else {
            assert_ne!(got, want, "{args:?}: the server's answer names no source");
            text_without_source(&got)
        };
        // Ranked words order by ts_rank on the server, bm25 here (the module doc of
        // query/search/server.rs): the same sessions' blocks, in another order.
        let ranked = args[..2] == ["search", "hello"];
        let blocks = |t: &str| {
            let mut b: Vec<String> = t.trim_end().split("\n\n").map(str::to_string).collect();
            if ranked {
                b.sort();
            }
            b
        };
        assert_eq!(blocks(&got), blocks(&want), "{args:?} as text");

        // `--json` (added by `local_json` and `remote_json`).
        let want = p.local_json(args);
        let got = p.remote_json(args);
        if args[0] == "stats" {
            assert_same_figures(&got, &want, &format!("{args:?} --json"));
        } else {
            let (mut got, mut want) = (rounded(&json_without_source(&got)), rounded(&want));
            if ranked {
                for v in [&mut got, &mut want] {
                    let rows = v.as_array_mut().unwrap();
                    rows.iter_mut().for_each(|h| {
                        h.as_object_mut().unwrap().remove("score");
                    });
                    rows.sort_by_key(|h| format!("{} {} {}", h["path"], h["entryId"], h["kind"]));
                }
            }
            assert_eq!(got, want, "{args:?} --json");
        }
    }
}
