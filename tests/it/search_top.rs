//! Ranked search stops joining matches once the top is settled: its hits must be exactly the
//! best of every match once blended with recency, the answer of joining and ranking all of
//! them, also when the best are not among the 1000 best by bm25 alone.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use pidx::ingest::sync::{sync, SyncOptions};
use pidx::pi::layout::{Layout, Root};
use pidx::query::search::{parse, search, SearchOptions};
use pidx::store::{Scope, Store};

const DAY_MS: i64 = 86_400_000;

/// The tree root `root` indexed into a new index `db`, with impact blocks (`store::impacts`)
/// for every word in `min_texts` texts or more.
fn indexed(root: &Path, db: &Path, min_texts: i64) -> (Store, Scope) {
    let mut store = Store::open(db).unwrap();
    let scope = resync(&mut store, root, min_texts, false);
    (store, scope)
}

/// Syncs `root` into `store` again (`big`: as a sync that reads much).
fn resync(store: &mut Store, root: &Path, min_texts: i64, big: bool) -> Scope {
    let roots = vec![Root {
        path: root.to_path_buf(),
        layout: Layout::Tree,
    }];
    let opts = SyncOptions {
        impact_min_texts: Some(min_texts),
        words_from_vocabulary: big.then_some(0),
        ..SyncOptions::default()
    };
    sync(store, &roots, opts).unwrap();
    Scope::new(&store.conn, &roots).unwrap()
}

/// Each corpus is searched twice: "zebrafish" scored in every text (FTS5), and from its impact
/// blocks (`blocked.rs`: the word is given blocks from one text on).
const BOTH_WAYS: [(&str, i64); 2] = [("every text", i64::MAX), ("blocks", 1)];

/// The one number `sql` gives on `store`.
fn count(store: &Store, sql: &str) -> i64 {
    store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// How many impact blocks "zebrafish" has: some exactly when they were asked for.
fn blocks_of_zebrafish(store: &Store, min_texts: i64) {
    let blocks = count(
        store,
        "SELECT count(*) FROM impact_blocks WHERE term = 'zebrafish'",
    );
    assert_eq!(blocks > 1, min_texts == 1, "{blocks} blocks");
}

/// 60 sessions of 80 user messages of 0 to 60 filler words, written 0 to 199 days ago; about a
/// quarter say "zebrafish" one to three times: some 1200 matches with spread-out bm25 scores
/// and ages.
fn corpus(root: &Path, now_ms: i64) {
    let dir = root.join("--home-u-fish--");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed: u64 = 7;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    for s in 0..60 {
        let id = format!("{s:08}-0000-4000-8000-000000000000");
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/fish"}}"#
        )];
        let mut parent = "null".to_string();
        for m in 0..80 {
            let ts =
                pidx::pi::js::iso(now_ms - next(200) as i64 * DAY_MS - next(DAY_MS as u64) as i64);
            let mut words: Vec<String> =
                (0..next(61)).map(|w| format!("filler{}", w % 9)).collect();
            let times = if next(4) == 0 { 1 + next(3) } else { 0 };
            for _ in 0..times {
                let at = next(words.len() as u64 + 1) as usize;
                words.insert(at, "zebrafish".into());
            }
            let entry = format!("e{s}x{m}");
            lines.push(format!(
                r#"{{"type":"message","id":"{entry}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"{}","timestamp":1}}}}"#,
                words.join(" ")
            ));
            parent = format!("\"{entry}\"");
        }
        std::fs::write(
            dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
}

/// (path, line) of the `k` best of every match, by bm25 blended with recency, among those in
/// `[since_ms, until_ms)`; `None` when the k-th and the next are too close to call.
fn expected(
    conn: &rusqlite::Connection,
    k: usize,
    range: (i64, i64),
    now_ms: i64,
) -> Option<BTreeSet<(String, i64)>> {
    expected_where(conn, k, range, now_ms, "1")
}

/// [`expected`] among the entries `cond` (SQL over `e`) keeps.
fn expected_where(
    conn: &rusqlite::Connection,
    k: usize,
    range: (i64, i64),
    now_ms: i64,
    cond: &str,
) -> Option<BTreeSet<(String, i64)>> {
    expected_of(conn, "zebrafish", k, range, now_ms, cond)
}

/// [`expected_where`] for the FTS5 query `query`.
fn expected_of(
    conn: &rusqlite::Connection,
    query: &str,
    k: usize,
    (since_ms, until_ms): (i64, i64),
    now_ms: i64,
    cond: &str,
) -> Option<BTreeSet<(String, i64)>> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT m.score, e.ts_ms, f.path, e.line
             FROM (SELECT rowid AS r, bm25(fts) AS score FROM fts WHERE fts MATCH '{query}') m
             JOIN entries e ON e.rid = m.r >> 3 JOIN files f ON f.id = e.file_id
             WHERE e.ts_ms >= ?1 AND e.ts_ms < ?2 AND {cond}"
        ))
        .unwrap();
    let mut ranked: Vec<(f64, String, i64)> = stmt
        .query_map([since_ms, until_ms], |r| {
            let age = (now_ms - r.get::<_, i64>(1)?).max(0) as f64 / DAY_MS as f64;
            let blended = -r.get::<_, f64>(0)? * (2.0 / 3.0 + 0.5f64.powf(age / 30.0) / 3.0);
            Ok((blended, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert!(ranked.len() > k, "more than {k} matches");
    if ranked[k - 1].0 - ranked[k].0 < 1e-9 * ranked[k].0 {
        return None;
    }
    Some(ranked.into_iter().take(k).map(|(_, p, l)| (p, l)).collect())
}

#[test]
fn the_top_hits_are_the_best_of_every_match() {
    for (how, min_texts) in BOTH_WAYS {
        the_top_hits_are_the_best_of_every_match_by(how, min_texts);
    }
}

fn the_top_hits_are_the_best_of_every_match_by(how: &str, min_texts: i64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    corpus(&root, now_ms);
    let (store, scope) = indexed(&root, &tmp.path().join("index.db"), min_texts);
    blocks_of_zebrafish(&store, min_texts);
    let matches = count(
        &store,
        "SELECT count(*) FROM fts WHERE fts MATCH 'zebrafish'",
    );
    assert!(matches > 1000, "more matches than the window: {matches}");
    let mut compared = 0;
    // Days ago: since, until (the newest hits weigh less under an --until in the past).
    let ranges = [
        (None, None),
        (Some(100), None),
        (None, Some(40)),
        (None, Some(120)),
        (Some(150), Some(60)),
    ];
    let ago = |days: Option<i64>, open: i64| days.map_or(open, |d| now_ms - d * DAY_MS);
    for (since_days, until_days) in ranges {
        for k in [1, 5, 20, 50] {
            let range = (ago(since_days, i64::MIN), ago(until_days, i64::MAX));
            let Some(want) = expected(&store.conn, k, range, now_ms) else {
                continue;
            };
            let mut opts = SearchOptions::everywhere(parse("zebrafish", false).unwrap(), k);
            opts.since_ms = since_days.map(|_| range.0);
            opts.until_ms = until_days.map(|_| range.1);
            let got: BTreeSet<(String, i64)> = search(&store.conn, &scope, &opts)
                .unwrap()
                .into_iter()
                .map(|h| (h.path, h.line))
                .collect();
            assert_eq!(
                got, want,
                "{how}: top {k}, days {since_days:?}..{until_days:?}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 16, "only {compared} cases could be told apart");
    // Several words, scored in one pass (`ranked::Scoring::EachPhrase`): each word's count of
    // texts from its blocks (when it has them) or from FTS5.
    let mut compared = 0;
    for (query, fts) in [
        ("zebrafish filler3", "zebrafish AND filler3"),
        (
            "filler1 zebrafish filler7",
            "filler1 AND zebrafish AND filler7",
        ),
        (
            r#"zebrafish "filler2 filler3""#,
            r#"zebrafish AND "filler2 filler3""#,
        ),
    ] {
        for k in [1, 5, 20, 50] {
            let Some(want) = expected_of(&store.conn, fts, k, (i64::MIN, i64::MAX), now_ms, "1")
            else {
                continue;
            };
            let opts = SearchOptions::everywhere(parse(query, false).unwrap(), k);
            let hits = search(&store.conn, &scope, &opts).unwrap();
            assert_scores(&store, fts, &hits, now_ms, &format!("{how}: {query}"));
            let got: BTreeSet<(String, i64)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
            assert_eq!(got, want, "{how}: {query}, top {k}");
            compared += 1;
        }
    }
    assert!(
        compared >= 8,
        "only {compared} cases of several words could be told apart"
    );
}

/// Whether message `n` of [`crowded`] is one of the new ones.
fn is_new(n: usize) -> bool {
    n % 15 >= 11
}

/// Message `n`'s age and filler words in the crowded corpora: a new one of six words from the
/// last three days, or an old one of four words 100 to 199 days old.
fn crowd_shape(n: i64, new: bool) -> (i64, usize) {
    if new {
        ((n * 1_731_113) % (3 * DAY_MS), 5)
    } else {
        (100 * DAY_MS + (n * 5_683_201) % (99 * DAY_MS), 3)
    }
}

/// A user message `entry` (child of `parent`, or a root) saying "zebrafish" after `fillers`
/// filler words, `age_ms` old.
fn zebrafish(
    entry: &str,
    parent: Option<&str>,
    age_ms: i64,
    fillers: usize,
    now_ms: i64,
) -> String {
    let mut words: Vec<String> = (0..fillers).map(|w| format!("filler{w}")).collect();
    words.push("zebrafish".into());
    serde_json::json!({"type": "message", "id": entry, "parentId": parent,
        "timestamp": pidx::pi::js::iso(now_ms - age_ms),
        "message": {"role": "user", "content": words.join(" "), "timestamp": 1}})
    .to_string()
}

/// Writes session `id` of `cwd` (its header, then `lines`) into `root`'s folder for `cwd`.
fn write_session(root: &Path, folder: &str, cwd: &str, id: &str, lines: &[String]) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let header = serde_json::json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd});
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
        format!("{header}\n{}\n", lines.join("\n")),
    )
    .unwrap();
}

/// 1,500 messages saying "zebrafish" once: 1,100 of four words 100 to 199 days old (the best
/// 1,000 by bm25 are all among them) and 400 of six words from the last three days, whose
/// recency lifts every one of them above the old ones once blended (bm25 0.88 against 1.05,
/// weighed 0.98 against 0.70).
fn crowded(root: &Path, now_ms: i64) {
    for s in 0..60 {
        let mut lines = Vec::new();
        let mut parent: Option<String> = None;
        for m in 0..25 {
            let n = s * 25 + m;
            let (age_ms, fillers) = crowd_shape(n as i64, is_new(n));
            let entry = format!("c{s}x{m}");
            lines.push(zebrafish(
                &entry,
                parent.as_deref(),
                age_ms,
                fillers,
                now_ms,
            ));
            parent = Some(entry);
        }
        let id = format!("{s:08}-0000-4000-8000-00000000c0de");
        write_session(root, "--home-u-crowd--", "/home/u/crowd", &id, &lines);
    }
}

#[test]
fn the_top_hits_are_exact_when_the_best_are_past_the_first_window() {
    for (how, min_texts) in BOTH_WAYS {
        the_top_hits_are_exact_when_the_best_are_past_the_first_window_by(how, min_texts);
    }
}

fn the_top_hits_are_exact_when_the_best_are_past_the_first_window_by(how: &str, min_texts: i64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    crowded(&root, now_ms);
    let (store, scope) = indexed(&root, &tmp.path().join("index.db"), min_texts);
    blocks_of_zebrafish(&store, min_texts);
    // The setting is what the test is about: the newest hit is not in the best 1,000 by bm25.
    let newest_in_window: i64 = store
        .conn
        .query_row(
            "SELECT max(e.ts_ms) FROM (SELECT rowid AS r FROM fts WHERE fts MATCH 'zebrafish'
             ORDER BY bm25(fts) LIMIT 1000) m JOIN entries e ON e.rid = m.r >> 3",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(newest_in_window < now_ms - 99 * DAY_MS);
    let mut compared = 0;
    for k in [1, 5, 20, 50] {
        let Some(want) = expected(&store.conn, k, (i64::MIN, i64::MAX), now_ms) else {
            continue;
        };
        let opts = SearchOptions::everywhere(parse("zebrafish", false).unwrap(), k);
        let hits = search(&store.conn, &scope, &opts).unwrap();
        // Entry `c{s}x{m}` is message `s * 25 + m` of `crowded`; the best are all new ones.
        for h in &hits {
            let id = h.entry_id.as_deref().unwrap();
            let (s, m) = id[1..].split_once('x').unwrap();
            let n = s.parse::<usize>().unwrap() * 25 + m.parse::<usize>().unwrap();
            assert!(is_new(n), "{how}: top {k}: {id} is an old message");
        }
        let got: BTreeSet<(String, i64)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
        assert_eq!(got, want, "{how}: top {k}");
        compared += 1;
    }
    assert!(compared >= 3, "only {compared} cases could be told apart");
}

/// One session: a root, then an abandoned branch of 100 messages of the last day (`x*`, lines 3
/// to 102), then the current branch from the root: 1,100 of four words 100 to 199 days old and
/// 300 of six words from the last three days (`c*`). Every message says "zebrafish" once.
fn branched(root: &Path, now_ms: i64) {
    let start = serde_json::json!({"type": "message", "id": "r", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "start", "timestamp": 1}});
    let mut lines = vec![start.to_string()];
    let mut parent = "r".to_string();
    for n in 0..100i64 {
        let entry = format!("x{n}");
        lines.push(zebrafish(&entry, Some(&parent), n * 600_000, 5, now_ms));
        parent = entry;
    }
    parent = "r".to_string();
    for n in 0..1400i64 {
        let entry = format!("c{n}");
        let (age_ms, fillers) = crowd_shape(n, n % 14 >= 11);
        lines.push(zebrafish(&entry, Some(&parent), age_ms, fillers, now_ms));
        parent = entry;
    }
    let id = "0000000b-0000-4000-8000-00000000b4a7";
    write_session(root, "--home-u-branch--", "/home/u/branch", id, &lines);
}

#[test]
fn the_top_hits_on_the_current_branch_are_exact() {
    for (how, min_texts) in BOTH_WAYS {
        the_top_hits_on_the_current_branch_are_exact_by(how, min_texts);
    }
}

fn the_top_hits_on_the_current_branch_are_exact_by(how: &str, min_texts: i64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    branched(&root, now_ms);
    let (store, scope) = indexed(&root, &tmp.path().join("index.db"), min_texts);
    blocks_of_zebrafish(&store, min_texts);
    let mut compared = 0;
    for k in [1, 5, 20, 50] {
        let mut opts = SearchOptions::everywhere(parse("zebrafish", false).unwrap(), k);
        opts.branch = true;
        let Some(want) =
            expected_where(&store.conn, k, (i64::MIN, i64::MAX), now_ms, "e.line > 102")
        else {
            continue;
        };
        let hits = search(&store.conn, &scope, &opts).unwrap();
        // The best on the branch are its new messages, past the best 1,000 by bm25.
        for h in &hits {
            let id = h.entry_id.as_deref().unwrap();
            let n: i64 = id.strip_prefix('c').unwrap().parse().unwrap();
            assert!(n % 14 >= 11, "{how}: top {k}: {id} is an old message");
        }
        let got: BTreeSet<(String, i64)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
        assert_eq!(got, want, "{how}: top {k}");
        // Without --branch the abandoned branch's messages, newer still, lead.
        opts.branch = false;
        let all = search(&store.conn, &scope, &opts).unwrap();
        assert!(all[0].entry_id.as_deref().unwrap().starts_with('x'));
        compared += 1;
    }
    assert!(compared >= 3, "only {compared} cases could be told apart");
}

/// The hits of "zebrafish", and of "filler0 zebrafish" (two words, each with its count of
/// texts), in `store` are the best of every match, for a few `k`, with FTS5's scores blended.
fn assert_exact(store: &Store, scope: &Scope, now_ms: i64, what: &str) {
    for (query, fts) in [
        ("zebrafish", "zebrafish"),
        ("filler0 zebrafish", "filler0 AND zebrafish"),
    ] {
        let mut compared = 0;
        for k in [1, 5, 20] {
            let Some(want) = expected_of(&store.conn, fts, k, (i64::MIN, i64::MAX), now_ms, "1")
            else {
                continue;
            };
            let opts = SearchOptions::everywhere(parse(query, false).unwrap(), k);
            let hits = search(&store.conn, scope, &opts).unwrap();
            assert_scores(store, fts, &hits, now_ms, &format!("{what}: {query}"));
            let got: BTreeSet<(String, i64)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
            assert_eq!(got, want, "{what}: {query}: top {k}");
            compared += 1;
        }
        assert!(
            compared >= 2,
            "{what}: {query}: only {compared} cases could be told apart"
        );
    }
}

/// Each hit's score is FTS5's `bm25()` for the query `fts`, blended with its entry's age.
fn assert_scores(
    store: &Store,
    fts: &str,
    hits: &[pidx::query::search::Hit],
    now_ms: i64,
    what: &str,
) {
    let mut fts5 = store
        .conn
        .prepare(&format!(
            "SELECT m.score, e.ts_ms
             FROM (SELECT rowid AS r, bm25(fts) AS score FROM fts WHERE fts MATCH '{fts}') m
             JOIN entries e ON e.rid = m.r >> 3 JOIN files f ON f.id = e.file_id
             WHERE f.path = ?1 AND e.line = ?2"
        ))
        .unwrap();
    for h in hits {
        let (score, ts): (f64, i64) = fts5
            .query_row(rusqlite::params![h.path, h.line], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let age = (now_ms - ts).max(0) as f64 / DAY_MS as f64;
        let blended = -score * (2.0 / 3.0 + 0.5f64.powf(age / 30.0) / 3.0);
        // The search's clock is up to a few seconds later (1e-8 of a score a second): far
        // below what a wrong count of texts moves it (2% here).
        let off = (h.score - blended).abs() / blended;
        assert!(
            off < 1e-5,
            "{what}: score {} against FTS5's {blended}",
            h.score
        );
    }
}

/// `(through, counted)` of the impact blocks.
fn impacts_state(store: &Store) -> (i64, bool) {
    store
        .conn
        .query_row("SELECT through, counted FROM impacts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
}

/// `n` messages saying "zebrafish" after one filler word, the last `n` minutes, chained from
/// `parent`: newer and shorter than any of [`crowded`], so they lead its top.
fn newest_lines(prefix: &str, parent: &str, n: i64, now_ms: i64) -> Vec<String> {
    let mut parent = parent.to_string();
    (0..n)
        .map(|i| {
            let entry = format!("{prefix}{i}");
            let line = zebrafish(&entry, Some(&parent), i * 60_000, 1, now_ms);
            parent = entry;
            line
        })
        .collect()
}

/// `n` user messages `{prefix}0`, `{prefix}1`, ..., each the child of the one before.
fn chain(prefix: &str, n: usize, text: impl Fn(usize) -> String) -> Vec<String> {
    (0..n)
        .map(|i| {
            let parent = i.checked_sub(1).map(|p| format!("{prefix}{p}"));
            common::live::user(&format!("{prefix}{i}"), parent.as_deref(), &text(i))
        })
        .collect()
}

/// Impact blocks stay exact as the index changes under them: the session holding the highest
/// entry rows removed (the word's count of texts is then unknown, and the blocks end below the
/// rows the index gives next), a new session taking those rows, texts appended past the blocks,
/// and a big sync extending the blocks over them and counting again.
#[test]
fn impact_blocks_stay_exact_as_the_index_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    crowded(&root, now_ms);
    // Texts without the word, so its idf (and every score) depends on how many hold it.
    let others = chain("o", 4000, |i| format!("other words {i}"));
    let other = "0000000f-0000-4000-8000-00000000f00f";
    write_session(&root, "--home-u-other--", "/home/u/other", other, &others);
    let (mut store, mut scope) = indexed(&root, &tmp.path().join("index.db"), 1);
    blocks_of_zebrafish(&store, 1);
    assert_exact(&store, &scope, now_ms, "built");
    let (built_through, counted) = impacts_state(&store);
    assert!(counted);

    let top: String = store
        .conn
        .query_row(
            "SELECT f.path FROM entries e JOIN files f ON f.id = e.file_id ORDER BY e.rid DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    std::fs::remove_file(&top).unwrap();
    scope = resync(&mut store, &root, 1, false);
    let (through, counted) = impacts_state(&store);
    assert!(
        through < built_through,
        "the blocks end below the rows given next"
    );
    assert!(!counted);
    assert_exact(&store, &scope, now_ms, "a session removed");

    let reused = "0000000e-0000-4000-8000-00000000f00d";
    let mut lines = vec![zebrafish("n", None, 0, 1, now_ms)];
    lines.extend(newest_lines("n", "n", 12, now_ms));
    write_session(&root, "--home-u-new--", "/home/u/new", reused, &lines);
    scope = resync(&mut store, &root, 1, false);
    let lowest_new: i64 = store
        .conn
        .query_row(
            "SELECT min(e.rid) * 8 FROM entries e JOIN sessions s ON s.file_id = e.file_id
             WHERE s.session_id = ?1",
            [reused],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        lowest_new < built_through,
        "the new session took the removed one's rows"
    );
    assert_exact(
        &store,
        &scope,
        now_ms,
        "a new session on the removed one's rows",
    );

    let kept = root
        .join("--home-u-crowd--")
        .join("2026-01-01T00-00-00-000Z_00000003-0000-4000-8000-00000000c0de.jsonl");
    let mut more = std::fs::read_to_string(&kept).unwrap();
    more.push_str(&(newest_lines("a", "c3x24", 8, now_ms - 30_000).join("\n") + "\n"));
    std::fs::write(&kept, more).unwrap();
    scope = resync(&mut store, &root, 1, false);
    assert_eq!(
        impacts_state(&store).0,
        through,
        "small syncs leave the blocks as they are"
    );
    assert_exact(&store, &scope, now_ms, "texts appended past the blocks");

    scope = resync(&mut store, &root, 1, true);
    let (through, counted) = impacts_state(&store);
    let end: i64 = store
        .conn
        .query_row("SELECT max(rid) * 8 + 7 FROM entries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(through, end);
    assert!(counted);
    let (counted_texts, fts5_texts): (i64, i64) = store
        .conn
        .query_row(
            "SELECT (SELECT texts FROM impact_terms WHERE term = 'zebrafish'),
                    (SELECT count(*) FROM fts WHERE fts MATCH 'zebrafish')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(counted_texts, fts5_texts);
    assert_exact(&store, &scope, now_ms, "blocks extended by a big sync");

    // A word that becomes frequent through small syncs gets blocks once the index has grown
    // by a quarter since its vocabulary was last walked.
    let quokkas = chain("q", 4200, |i| format!("quokka {i}"));
    let quokka = "0000000a-0000-4000-8000-0000000a0a0a";
    write_session(
        &root,
        "--home-u-quokka--",
        "/home/u/quokka",
        quokka,
        &quokkas,
    );
    scope = resync(&mut store, &root, 1, false);
    let blocks = count(
        &store,
        "SELECT count(*) FROM impact_blocks WHERE term = 'quokka'",
    );
    assert!(blocks >= 4200 / 128, "quokka: {blocks} blocks");
    assert!(common::live::check_impact_blocks(&tmp.path().join("index.db")) > 1);
    assert_exact(
        &store,
        &scope,
        now_ms,
        "a word made frequent by a small sync",
    );

    // Texts past blocks whose counts are kept: a word's count of texts is its blocks' and
    // those past them.
    let (through, counted) = impacts_state(&store);
    assert!(counted);
    let mut more = std::fs::read_to_string(&kept).unwrap();
    more.push_str(&(newest_lines("p", "a7", 30, now_ms - 20_000).join("\n") + "\n"));
    std::fs::write(&kept, more).unwrap();
    scope = resync(&mut store, &root, 1, false);
    assert_eq!(impacts_state(&store), (through, true));
    assert_exact(
        &store,
        &scope,
        now_ms,
        "texts appended past blocks with their counts",
    );
}

/// A frequent word's blocks list only the texts that can reach its top (the others raise its
/// tail): a search is answered from them, and one whose top needs a text they leave out (here
/// a limit of most of the matches) scores every match instead; both exactly.
#[test]
fn texts_left_out_of_the_blocks_are_ranked_when_the_top_needs_them() {
    use pidx::query::search::search_explained;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    corpus(&root, now_ms);
    let (store, scope) = indexed(&root, &tmp.path().join("index.db"), 1);
    assert!(common::live::check_impact_blocks(&tmp.path().join("index.db")) >= 1);
    let matches = count(
        &store,
        "SELECT count(*) FROM fts WHERE fts MATCH 'zebrafish'",
    ) as usize;
    let blocks = pidx::store::impacts::of_term(&store.conn, "zebrafish")
        .unwrap()
        .unwrap();
    let listed: usize = blocks
        .list
        .iter()
        .map(|b| {
            pidx::store::impacts::texts(&store.conn, "zebrafish", b.last)
                .unwrap()
                .len()
        })
        .sum();
    assert!(
        listed < matches && blocks.tail.is_some(),
        "{listed} of {matches} texts listed, tail {:?}",
        blocks.tail
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut told = [false; 2];
    for k in [5, 20, matches - 50] {
        let Some(want) = expected(&store.conn, k, (i64::MIN, i64::MAX), now_ms) else {
            continue;
        };
        let opts = SearchOptions::everywhere(parse("zebrafish", false).unwrap(), k);
        let (hits, explain) = search_explained(&store.conn, &scope, &opts, &stop).unwrap();
        let used = explain.blocks.expect("ranked from its blocks");
        let needs_left_out = k > listed;
        assert_eq!(used.left_out, needs_left_out, "top {k}: {used:?}");
        told[usize::from(needs_left_out)] = true;
        let got: BTreeSet<(String, i64)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
        assert_eq!(got, want, "top {k}");
    }
    assert_eq!(told, [true, true], "both ways compared");
}
