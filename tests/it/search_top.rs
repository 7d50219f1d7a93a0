//! Ranked search stops joining matches once the top is settled: its hits must be exactly the
//! best of the whole window of 1000 bm25 matches once blended with recency (of every match in
//! range, for a search narrowed by time), the answer of joining and ranking all of them.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use pidx::query::search::{parse, search, SearchOptions};

const DAY_MS: i64 = 86_400_000;

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

/// (path, line) of the `k` best matches of the window (of every match, for a search narrowed
/// by time, which ranks all of its span), by bm25 blended with recency, among those in
/// `[since_ms, until_ms)`; `None` when the k-th and the next are too close to call.
fn expected(
    conn: &rusqlite::Connection,
    k: usize,
    (since_ms, until_ms): (i64, i64),
    now_ms: i64,
) -> Option<BTreeSet<(String, i64)>> {
    let window = if (since_ms, until_ms) == (i64::MIN, i64::MAX) {
        "LIMIT 1000"
    } else {
        ""
    };
    let mut stmt = conn
        .prepare(&format!(
            "SELECT m.score, e.ts_ms, f.path, e.line
             FROM (SELECT rowid AS r, bm25(fts) AS score FROM fts WHERE fts MATCH 'zebrafish'
                   ORDER BY score {window}) m
             JOIN entries e ON e.rid = m.r >> 3 JOIN files f ON f.id = e.file_id
             WHERE e.ts_ms >= ?1 AND e.ts_ms < ?2"
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
    assert!(ranked.len() > k, "the window holds more than {k} matches");
    if ranked[k - 1].0 - ranked[k].0 < 1e-9 * ranked[k].0 {
        return None;
    }
    Some(ranked.into_iter().take(k).map(|(_, p, l)| (p, l)).collect())
}

#[test]
fn the_top_hits_are_the_best_of_the_whole_window() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let now_ms = chrono::Utc::now().timestamp_millis();
    corpus(&root, now_ms);
    let (store, scope) = common::indexed(&root, &tmp.path().join("index.db"));
    let matches: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM fts WHERE fts MATCH 'zebrafish'",
            [],
            |r| r.get(0),
        )
        .unwrap();
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
            assert_eq!(got, want, "top {k}, days {since_days:?}..{until_days:?}");
            compared += 1;
        }
    }
    assert!(compared >= 16, "only {compared} cases could be told apart");
}
