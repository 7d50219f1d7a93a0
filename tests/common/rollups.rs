//! The rollups held to the entries: the rollup tables as stored against a recount of their
//! facts views, and `stats` (which reads the rollups) against `stats_from_entries` (which never
//! does) for every grouping, zone and range.

use pidx::query::stats::{stats, stats_from_entries, Dim, Row, StatsOptions, Zone};
use pidx::store::Scope;
use pidx::store::Store;

/// A rollup table as stored, and as its facts view gives it afresh, one line per row.
pub fn stored_and_fresh(store: &Store, table: &str) -> (Vec<String>, Vec<String>) {
    let (facts, keys, sums) = match table {
        "usage_rollup" => (
            "usage_facts",
            "file_id, t, model, provider, dup",
            &[
                "user",
                "assistant",
                "tool_results",
                "tool_calls",
                "input",
                "output",
                "cache_read",
                "cache_write",
                "cost",
                "tool_errors",
                "compactions",
            ][..],
        ),
        _ => (
            "tool_facts",
            "file_id, t, model, provider, tool, dup",
            &["calls", "results", "errors"][..],
        ),
    };
    let width = keys.split(", ").count() + 1 + sums.len();
    let rows = |sql: &str| -> Vec<String> {
        let mut stmt = store.conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| {
            (0..width)
                .map(|i| Ok(format!("{:?}", r.get_ref(i)?)))
                .collect::<rusqlite::Result<Vec<_>>>()
        });
        rows.unwrap().map(|r| r.unwrap().join(",")).collect()
    };
    let plain = sums.join(", ");
    let summed: Vec<String> = sums.iter().map(|c| format!("sum({c})")).collect();
    let stored = rows(&format!(
        "SELECT {keys}, n, {plain} FROM {table} ORDER BY {keys}"
    ));
    let fresh = rows(&format!(
        "SELECT {keys}, count(*), {} FROM {facts} GROUP BY {keys} ORDER BY {keys}",
        summed.join(", ")
    ));
    (stored, fresh)
}

/// The groupings checked: each dimension alone and nestings of time, model, tool and session.
pub fn groupings() -> Vec<Vec<Dim>> {
    use Dim::*;
    let mut all: Vec<Vec<Dim>> = vec![vec![]];
    all.extend(
        [
            Day, Week, Month, Project, Model, Provider, Session, Tool, Agent, Channel,
        ]
        .map(|d| vec![d]),
    );
    all.extend([
        vec![Day, Model],
        vec![Tool, Model],
        vec![Tool, Provider, Day],
        vec![Session, Tool],
        vec![Month, Provider, Project],
        vec![Week, Session],
        vec![Project, Tool, Month],
    ]);
    all
}

/// The options checked for each grouping: zones whose days begin on a half or three-quarter
/// hour, ranges whose ends fall on quarter hours (the rollups' grain) and ranges whose ends do
/// not (around the conformance corpus's times and the fork corpus's).
pub fn options(dims: &[Dim]) -> Vec<StatsOptions> {
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    };
    let mut out = Vec::new();
    for zone in ["UTC", "Asia/Kathmandu", "+05:30", "America/New_York"] {
        for (since, until) in [
            (None, None),
            (Some(at("2026-01-01T00:15:00Z")), None),
            (None, Some(at("2026-03-06T00:00:00Z"))),
            (
                Some(at("2025-06-01T10:45:00Z")),
                Some(at("2026-06-01T00:00:00Z")),
            ),
            // Ends inside a quarter hour: in two, in one, in neighbours, one end only.
            (
                Some(at("2026-02-10T09:03:15Z")),
                Some(at("2026-03-04T02:07:30Z")),
            ),
            (
                Some(at("2026-02-10T09:01:07Z")),
                Some(at("2026-02-10T09:07:15Z")),
            ),
            (
                Some(at("2026-02-10T09:14:00Z")),
                Some(at("2026-02-10T09:20:00Z")),
            ),
            (Some(at("2026-01-02T00:00:01.500Z")), None),
            (None, Some(at("2026-03-06T13:59:59Z"))),
        ] {
            out.push(StatsOptions {
                dims: dims.to_vec(),
                since_ms: since,
                until_ms: until,
                cwd: None,
                zone: Zone::parse(zone).unwrap(),
            });
        }
    }
    out
}

/// Rows compared: keys and every figure exactly, cost to 1e-9 relative.
pub fn same(a: &[Row], b: &[Row]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let (mut fx, fy) = (x.figures.clone(), &y.figures);
            let close = (fx.cost - fy.cost).abs() <= 1e-9 * fy.cost.abs().max(1.0);
            fx.cost = fy.cost;
            close && x.key_order == y.key_order && &fx == fy
        })
}

/// Asserts both rollup tables equal a recount and `stats` equals the entries' answer for every
/// grouping and option; returns how many non-empty answers were compared.
pub fn assert_rollups_agree(store: &Store, scope: &Scope, when: &str) -> usize {
    for table in ["usage_rollup", "tool_rollup"] {
        let (stored, fresh) = stored_and_fresh(store, table);
        assert_eq!(stored, fresh, "{table} {when}");
    }
    assert_figures_agree(store, when);
    let mut compared = 0;
    for dims in groupings() {
        for opts in options(&dims) {
            let rolled = stats(&store.conn, scope, &opts).unwrap();
            let scanned = stats_from_entries(&store.conn, scope, &opts).unwrap();
            assert!(
                same(&rolled, &scanned),
                "{when} {dims:?} {:?} {:?}..{:?}\nrolled {rolled:#?}\nscanned {scanned:#?}",
                opts.zone,
                opts.since_ms,
                opts.until_ms
            );
            compared += usize::from(scanned.iter().any(|r| r.figures.sessions > 0));
        }
    }
    compared
}

/// Asserts each session's figures row (`session_figures`, kept at ingest) equals the figures
/// summed afresh from its entries' facts: cost, failed calls, assistant messages, and the model
/// tokens, tool calls, and the model of most assistant messages (ties to the first in binary order, none without one).
pub fn assert_figures_agree(store: &Store, when: &str) {
    type Fig = (Option<String>, f64, i64, i64, i64, i64);
    let mut fresh: std::collections::BTreeMap<i64, Fig> = Default::default();
    let mut most: std::collections::HashMap<i64, i64> = Default::default();
    let mut stmt = store
        .conn
        .prepare(
            "SELECT file_id, model, sum(assistant), sum(cost), sum(tool_errors),
                    sum(input + output + cache_read + cache_write), sum(tool_calls)
             FROM usage_facts GROUP BY file_id, model ORDER BY file_id, model",
        )
        .unwrap();
    let mut rows = stmt.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let (id, model, assistant): (i64, String, i64) =
            (r.get(0).unwrap(), r.get(1).unwrap(), r.get(2).unwrap());
        let f = fresh.entry(id).or_insert((None, 0.0, 0, 0, 0, 0));
        f.1 += r.get::<_, f64>(3).unwrap();
        f.2 += r.get::<_, i64>(4).unwrap();
        f.3 += assistant;
        f.4 += r.get::<_, i64>(5).unwrap();
        f.5 += r.get::<_, i64>(6).unwrap();
        let best = most.entry(id).or_insert(0);
        if assistant > *best {
            *best = assistant;
            f.0 = Some(model);
        }
    }
    let mut stmt = store
        .conn
        .prepare(
            "SELECT file_id, model, cost, tool_errors, assistant, tokens, tool_calls
             FROM session_figures ORDER BY file_id",
        )
        .unwrap();
    let stored: std::collections::BTreeMap<i64, Fig> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                (
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ),
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        fresh.keys().collect::<Vec<_>>(),
        "sessions with figures {when}"
    );
    for (id, f) in &fresh {
        let s = &stored[id];
        let close = (s.1 - f.1).abs() <= 1e-9 * f.1.abs().max(1.0);
        assert!(
            close && (s.0.as_ref(), s.2, s.3, s.4, s.5) == (f.0.as_ref(), f.2, f.3, f.4, f.5),
            "session_figures of file {id} {when}: stored {s:?}, from the entries {f:?}"
        );
    }
}
