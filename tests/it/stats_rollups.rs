//! The tool and usage rollups answer every `stats` grouping exactly as the entries do: after a
//! full index of the conformance corpus (forks, tools, errors), after appends, rewrites and
//! deletions, and on an index upgraded from before the tool rollups existed.

use crate::common;

use std::path::{Path, PathBuf};

use common::rollups::{assert_rollups_agree, groupings, options};
use pidx::query::stats::stats;
use pidx::store::Store;

/// A file of the index holding tool calls and results.
fn file_with_tools(store: &Store, skip: i64) -> PathBuf {
    store
        .conn
        .query_row(
            "SELECT f.path FROM files f WHERE f.id IN
               (SELECT file_id FROM tool_rollup GROUP BY file_id
                HAVING sum(calls) > 0 AND sum(results) > 0)
             ORDER BY f.path LIMIT 1 OFFSET ?1",
            [skip],
            |r| r.get::<_, String>(0),
        )
        .unwrap()
        .into()
}

/// An assistant message calling `bash` and its failed result, parented on the file's last entry
/// (turn `n`: ids and times of its own, in the same quarter hours as every other turn, so a
/// second turn adds to the rollup rows the first made).
fn append_tool_turn(path: &Path, n: u32) {
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.lines().rev().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        v.get("id")?.as_str().map(str::to_owned)
    });
    let parent = last.map_or("null".into(), |id| format!("\"{id}\""));
    let call = format!(
        r#"{{"type":"message","id":"zz{n}a","parentId":{parent},"timestamp":"2026-03-01T10:0{n}:00.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c9","name":"bash","arguments":{{}}}}],"provider":"p","model":"m","usage":{{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{{"total":0.25}}}},"timestamp":1}}}}"#
    );
    let result = format!(
        r#"{{"type":"message","id":"zz{n}b","parentId":"zz{n}a","timestamp":"2026-03-01T10:2{n}:00.000Z","message":{{"role":"toolResult","toolCallId":"c9","toolName":"bash","content":[],"isError":true,"timestamp":2}}}}"#
    );
    let mut out = text;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("{call}\n{result}\n"));
    std::fs::write(path, out).unwrap();
}

#[test]
fn rolled_answers_equal_the_entries_after_appends_rewrites_and_deletes() {
    let (tmp, root) = common::conformance_copy();
    let (mut store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let copies: i64 = store
        .conn
        .query_row("SELECT count(*) FROM entries WHERE dup = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    let tools: i64 = store
        .conn
        .query_row("SELECT count(*) FROM tool_rollup", [], |r| r.get(0))
        .unwrap();
    assert!(
        copies > 0 && tools > 10,
        "{copies} copies, {tools} tool rows"
    );
    assert!(assert_rollups_agree(&store, &scope, "indexed") > 100);

    let appended = file_with_tools(&store, 0);
    append_tool_turn(&appended, 1);
    let scope = common::resync(&mut store, &root);
    assert_rollups_agree(&store, &scope, "after an append");
    append_tool_turn(&appended, 2);
    let scope = common::resync(&mut store, &root);
    assert_rollups_agree(
        &store,
        &scope,
        "after a second append to the same rollup rows",
    );
    // The second turn's failed result adds to the row of the first (2026-03-01 10:15 UTC).
    let errors: i64 = store
        .conn
        .query_row(
            "SELECT sum(errors) FROM tool_rollup WHERE tool = 'bash' AND t = 1772360100000",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        errors >= 2,
        "both failed results in one rollup row: {errors}"
    );

    // A rewrite: the file loses its second half (read again from byte 0).
    let rewritten = file_with_tools(&store, 1);
    let text = std::fs::read_to_string(&rewritten).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&rewritten, lines[..lines.len() / 2].join("\n") + "\n").unwrap();
    let scope = common::resync(&mut store, &root);
    assert_rollups_agree(&store, &scope, "after a rewrite");

    std::fs::remove_file(file_with_tools(&store, 2)).unwrap();
    let scope = common::resync(&mut store, &root);
    assert_rollups_agree(&store, &scope, "after a delete");
}

#[test]
fn an_upgraded_index_answers_as_a_rebuilt_one() {
    let (tmp, root) = common::conformance_copy();
    let upgraded = tmp.path().join("old.db");
    let (store, _) = common::indexed(&root, &upgraded);
    // The index as the build before the tool rollups left it (schema 11; 0013 and 0014 went
    // after).
    store
        .conn
        .execute_batch(&format!(
            "{}
             DROP INDEX sessions_by_cwd; DROP INDEX files_by_root;
             DROP TABLE words; DROP TABLE words_stale;
             DROP TRIGGER tool_rollup_dup; DROP TABLE tool_rollup; DROP VIEW tool_facts;
             DROP INDEX usage_rollup_by_t;
             PRAGMA user_version = 11;",
            common::UNDO_HUGE_TEXTS
        ))
        .unwrap();
    drop(store);
    let mut store = Store::open(&upgraded).unwrap();
    let version: i64 = store
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(version > 11);
    let scope = common::resync(&mut store, &root);
    assert!(assert_rollups_agree(&store, &scope, "upgraded") > 100);
    let (rebuilt, rebuilt_scope) = common::indexed(&root, &tmp.path().join("new.db"));
    for dims in groupings() {
        for opts in options(&dims) {
            let a = stats(&store.conn, &scope, &opts).unwrap();
            let b = stats(&rebuilt.conn, &rebuilt_scope, &opts).unwrap();
            let keys = |rows: &[pidx::query::stats::Row]| -> Vec<String> {
                rows.iter()
                    .map(|r| format!("{:?} {:?}", r.key_order, r.figures))
                    .collect()
            };
            assert_eq!(keys(&a), keys(&b), "{dims:?}");
        }
    }
}

#[test]
fn one_project_counts_the_sessions_list_gives_for_it() {
    use pidx::query::list::{list_sessions, ListOptions};
    use pidx::query::stats::{Dim, Row, StatsOptions};
    use std::collections::{BTreeMap, BTreeSet};
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let listed = |cwd: Option<&str>| -> BTreeSet<String> {
        let opts = ListOptions {
            cwd: cwd.map(str::to_owned),
            limit: None,
            with_text: false,
        };
        let sessions = list_sessions(&store.conn, &scope, &opts).unwrap();
        sessions.into_iter().map(|s| s.path).collect()
    };
    let listed_anywhere = listed(None);
    let cwds: BTreeSet<String> = list_sessions(
        &store.conn,
        &scope,
        &ListOptions {
            cwd: None,
            limit: None,
            with_text: false,
        },
    )
    .unwrap()
    .into_iter()
    // One cwd per folder: `/p/` and `/p` are one project once resolved, and `/a/b-c` and
    // `/a-b/c` share pi's folder `--a-b-c--`.
    .map(|s| {
        let resolved: PathBuf = Path::new(&s.cwd).components().collect();
        let resolved = resolved.to_string_lossy().into_owned();
        let folder = resolved
            .trim_start_matches('/')
            .replace(['/', '\\', ':'], "-");
        (folder, resolved)
    })
    .collect::<BTreeMap<String, String>>()
    .into_values()
    .collect();
    assert!(cwds.len() > 2, "projects: {cwds:?}");
    // Every session's figures, all projects at once, by path.
    let per_session = |cwd: Option<&str>, o: &StatsOptions| -> BTreeMap<String, Row> {
        let o = StatsOptions {
            dims: vec![Dim::Session],
            cwd: cwd.map(str::to_owned),
            ..o.clone()
        };
        let rows = stats(&store.conn, &scope, &o).unwrap();
        rows.into_iter()
            .filter(|r| !r.key_order.is_empty())
            .map(|r| (r.key_order[0].clone(), r))
            .collect()
    };
    for o in options(&[]).into_iter().step_by(4) {
        let everywhere = per_session(None, &o);
        let mut seen = BTreeSet::new();
        let mut counted = 0;
        for cwd in &cwds {
            let mine = per_session(Some(cwd), &o);
            let in_list = listed(Some(cwd));
            for (path, row) in &mine {
                // Files pi leaves out of every listing (a BOM before the header, say) are
                // counted, in their project.
                assert!(
                    in_list.contains(path) || !listed_anywhere.contains(path),
                    "{cwd}: {path} is in another project's list"
                );
                let all = &everywhere[path];
                assert_eq!(row.figures, all.figures, "{cwd} {path}");
                assert!(seen.insert(path.clone()), "{path} counted again, in {cwd}");
            }
            // The sessions of list(cwd) with activity in the range are all counted.
            for path in in_list.iter().filter(|p| everywhere.contains_key(*p)) {
                assert!(mine.contains_key(path), "{cwd}: {path} listed, not counted");
            }
            // Every grouping over one project: the rollups as the entries.
            for dims in groupings() {
                let o = StatsOptions {
                    dims,
                    cwd: Some(cwd.clone()),
                    ..o.clone()
                };
                let rolled = stats(&store.conn, &scope, &o).unwrap();
                let scanned =
                    pidx::query::stats::stats_from_entries(&store.conn, &scope, &o).unwrap();
                assert!(
                    common::rollups::same(&rolled, &scanned),
                    "{cwd} {:?}\nrolled {rolled:#?}\nscanned {scanned:#?}",
                    o.dims
                );
            }
            counted += mine.len();
        }
        // No session is left out of every project, or counted in two.
        assert_eq!(seen.len(), counted);
        assert_eq!(seen, everywhere.keys().cloned().collect());
        assert!(!seen.is_empty() || o.since_ms.is_some());
    }
}

#[test]
fn the_most_expensive_sessions_are_the_first_of_stats_by_session() {
    use pidx::query::per_session::most_expensive;
    use pidx::query::stats::{Dim, StatsOptions, Zone};
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let mut by_session = stats(
        &store.conn,
        &scope,
        &StatsOptions {
            dims: vec![Dim::Session],
            since_ms: None,
            until_ms: None,
            cwd: None,
            zone: Zone::Local,
        },
    )
    .unwrap();
    // The usage page's and the report's order: by cost, stable over `stats`'s own order.
    by_session.sort_by(|a, b| b.figures.cost.total_cmp(&a.figures.cost));
    let costly = by_session.iter().filter(|r| r.figures.cost > 0.0).count();
    assert!(costly > 10, "{costly} sessions with a cost");
    for n in [1, 10, by_session.len() + 5] {
        let top = most_expensive(&store.conn, &scope, n).unwrap();
        let want: Vec<_> = by_session.iter().take(n).collect();
        assert_eq!(top.len(), want.len(), "top {n}");
        for ((path, f), r) in top.iter().zip(&want) {
            assert_eq!(Some(path), r.key_order.first(), "top {n}");
            assert!((f.cost - r.figures.cost).abs() <= 1e-9 * r.figures.cost.max(1.0));
            assert_eq!(
                (f.tokens, f.tool_calls, f.tool_errors, f.assistant),
                (
                    r.figures.total_tokens,
                    r.figures.tool_calls,
                    r.figures.tool_errors,
                    r.figures.assistant_messages
                ),
                "{path}"
            );
        }
    }
}

#[test]
fn groupings_read_together_answer_as_each_alone() {
    use common::rollups::same;
    use pidx::query::stats::{stats_each, Dim, StatsOptions};
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    // Each grouping of `each` read together equals it read alone; how many were not empty.
    let check = |opts: &StatsOptions, each: &[Vec<Dim>]| -> usize {
        let together = stats_each(&store.conn, &scope, opts, each).unwrap();
        assert_eq!(together.len(), each.len());
        let mut compared = 0;
        for (rows, g) in together.iter().zip(each) {
            let alone = stats(
                &store.conn,
                &scope,
                &StatsOptions {
                    dims: g.clone(),
                    ..opts.clone()
                },
            )
            .unwrap();
            assert!(
                same(rows, &alone),
                "{each:?}, {g:?}: {rows:#?}\nalone {alone:#?}"
            );
            compared += usize::from(!alone.is_empty());
        }
        compared
    };
    let mut compared = 0;
    for dims in groupings() {
        for opts in options(&dims) {
            // This grouping with the total and a grouping by project (both read the same rows
            // unless it has a tool or a session: then each is read alone), and a tool grouping.
            check(
                &opts,
                &[
                    dims.clone(),
                    Vec::new(),
                    vec![Dim::Project],
                    vec![Dim::Tool],
                ],
            );
            // This grouping with the total: one read of the rollups unless it has a tool or a
            // session.
            compared += check(&opts, &[dims.clone(), Vec::new()]);
        }
    }
    assert!(compared > 100, "{compared}");
}
