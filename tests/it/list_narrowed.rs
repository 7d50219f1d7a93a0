//! The sessions page's own filters and orders (`list::narrowed`, one SQL query over the
//! per-session figures kept at ingest) give the sessions, in the order, that filtering and
//! stably sorting pi's whole listing by each session's figures gives, for every project and
//! every project at once, on the conformance corpus (forks, several models, failed calls).

use crate::common;

use pidx::query::list::{list_sessions, narrowed, ListOptions, Narrow, NarrowOrder};
use pidx::query::per_session::figures;

/// The ids `narrow` keeps of pi's listing `opts`, by hand: pi's order, each session's figures,
/// a filter and a stable sort.
fn by_hand(
    store: &pidx::store::Store,
    scope: &pidx::store::Scope,
    opts: &ListOptions,
    n: &Narrow,
) -> Vec<i64> {
    let mut found = list_sessions(&store.conn, scope, opts).unwrap();
    let ids: Vec<i64> = found.iter().map(|s| s.file_id).collect();
    let figs = figures(&store.conn, &ids).unwrap();
    let none = Default::default();
    let fig = |id: i64| figs.get(&id).unwrap_or(&none);
    let model = n.model.clone().unwrap_or_default().to_lowercase();
    found.retain(|s| {
        let f = fig(s.file_id);
        (model.is_empty()
            || f.model
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(&model)))
            && (!n.errors || f.tool_errors > 0)
            && n.since_ms.is_none_or(|t| s.modified_ms >= t)
            && n.until_ms.is_none_or(|t| s.modified_ms < t)
    });
    match n.order {
        NarrowOrder::Cost => {
            found.sort_by(|a, b| fig(b.file_id).cost.total_cmp(&fig(a.file_id).cost))
        }
        NarrowOrder::Messages => found.sort_by_key(|s| std::cmp::Reverse(s.message_count)),
        NarrowOrder::Oldest => found.reverse(),
        NarrowOrder::Newest => {}
    }
    found.iter().map(|s| s.file_id).collect()
}

#[test]
fn narrowed_lists_equal_the_whole_listing_filtered_and_sorted_by_hand() {
    let (tmp, root) = common::conformance_copy();
    let (store, scope) = common::indexed(&root, &tmp.path().join("i.db"));
    let all = list_sessions(&store.conn, &scope, &ListOptions::default()).unwrap();
    let mut times: Vec<i64> = all.iter().map(|s| s.modified_ms).collect();
    times.sort_unstable();
    let mid = times[times.len() / 2];
    let mut cwds: Vec<Option<String>> = all.iter().map(|s| Some(s.cwd.clone())).collect();
    cwds.sort();
    cwds.dedup();
    cwds.insert(0, None);
    let models: Vec<String> = figures(
        &store.conn,
        &all.iter().map(|s| s.file_id).collect::<Vec<_>>(),
    )
    .unwrap()
    .into_values()
    .filter_map(|f| f.model)
    .collect();
    assert!(models.len() > 3, "models: {models:?}");
    // A model named in part and in another case, which several sessions use.
    let part: String = models[0].chars().take(3).collect::<String>().to_uppercase();
    let (mut kept, mut compared) = (0, 0);
    for cwd in &cwds {
        let opts = ListOptions {
            cwd: cwd.clone(),
            ..Default::default()
        };
        for order in [
            NarrowOrder::Newest,
            NarrowOrder::Oldest,
            NarrowOrder::Cost,
            NarrowOrder::Messages,
        ] {
            for n in [
                Narrow {
                    order,
                    ..Default::default()
                },
                Narrow {
                    order,
                    errors: true,
                    ..Default::default()
                },
                Narrow {
                    order,
                    model: Some(part.clone()),
                    ..Default::default()
                },
                Narrow {
                    order,
                    since_ms: Some(mid),
                    ..Default::default()
                },
                Narrow {
                    order,
                    until_ms: Some(mid),
                    errors: true,
                    ..Default::default()
                },
            ] {
                let (ids, before) = narrowed(&store.conn, &scope, &opts, &n).unwrap();
                let expected = by_hand(&store, &scope, &opts, &n);
                assert_eq!(ids, expected, "{cwd:?} {n:?}");
                assert_eq!(
                    before,
                    list_sessions(&store.conn, &scope, &opts).unwrap().len()
                );
                kept += ids.len();
                compared += usize::from(ids.len() > 1);
            }
        }
    }
    assert!(
        compared > 20 && kept > 100,
        "{compared} lists of two or more, {kept} rows"
    );
}
