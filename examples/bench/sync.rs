//! The sync rows of the benchmark: first answer on a new index, the full sync (MB/s, entries/s,
//! peak RSS), the no-op re-sync and the index size.

use std::path::Path;

use anyhow::Result;

use crate::run::{self, time_with_rss};
use crate::{mb, ms, Bench, Row};

pub fn remove_index(db: &Path) {
    // The index, its journals and the full text a first sync builds beside it, as pidx itself
    // removes them; and the lock file, which pidx keeps.
    let _ = pidx::store::Store::destroy(db);
    let _ = std::fs::remove_file(format!("{}.lock", db.display()));
}

/// (first answer ms, full sync ms, peak RSS MB, what the sync row measured). By default two cold
/// syncs: a first `list` on a new index, then a plain `sync` on another new index. With
/// `--compact` one pass over the corpus: the first `list` on a new index, then a `sync` that
/// finishes whatever that list left (nothing, when the list's sync was complete).
fn first_and_cold(b: &Bench) -> Result<(f64, f64, Option<f64>, &'static str)> {
    let list = b.cmd(&["list", "--all", "--json", "--limit", "50"]);
    remove_index(&b.db);
    eprintln!("bench: first answer on a new index");
    if b.args.compact {
        let (first, rss1) = time_with_rss(&list, &b.work)?;
        eprintln!("bench: sync after the first answer");
        let (rest, rss2) = time_with_rss(&b.cmd(&["sync"]), &b.work)?;
        let rss = rss1.zip(rss2).map(|(a, c)| a.max(c));
        return Ok((
            first,
            first + rest,
            rss,
            "first list's sync + a `sync` after it",
        ));
    }
    let first = run::run_once(&list, &[0])?;
    // The first answer left the rest of the sync to a background process; a `sync` waits for
    // it, so it cannot go on writing beside the next index (its full text is built aside in a
    // file named after the index).
    run::run_once(&b.cmd(&["sync"]), &[0])?;
    remove_index(&b.db);
    eprintln!("bench: cold sync");
    let (cold, rss) = time_with_rss(&b.cmd(&["sync"]), &b.work)?;
    Ok((first, cold, rss, "first full sync"))
}

pub fn sync_rows(b: &mut Bench, bytes: u64) -> Result<Vec<Row>> {
    let (first, cold_ms, rss, how) = first_and_cold(b)?;
    let first = Row::new(
        "first answer on a new index (`list --all --json --limit 50`, sync included)",
        ms(first),
        "<= 10 s on 3.2 GB",
    );
    let conn = rusqlite::Connection::open(&b.db)?;
    let entries: i64 = conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0))?;
    b.entries = Some(entries);
    let secs = cold_ms / 1000.0;
    let fts = if b.has_command("search") {
        "with full-text"
    } else {
        "no full-text in this build"
    };
    let rss = rss.map_or("peak RSS not measured (no /usr/bin/time)".into(), |r| {
        format!("peak RSS {r:.0} MB")
    });
    let cold = Row::new(
        format!("{how} ({fts})"),
        format!(
            "{secs:.1} s = {:.0} MB/s, {:.0}k entries/s, {rss}",
            mb(bytes) / secs,
            entries as f64 / secs / 1000.0
        ),
        ">= 100 MB/s with full-text; <= 200 MB RSS",
    );
    eprintln!("bench: no-op sync");
    let noop = b.time_pidx(&["sync"], &[0])?;
    let noop = Row::new("no-op re-sync", ms(noop.median()), "<= 150 ms at 10k files");
    let db_bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", b.db.display())).ok())
        .map(|m| m.len())
        .sum();
    let size = Row::new(
        "index size",
        format!(
            "{:.0} MB = {:.2}x the JSONL",
            mb(db_bytes),
            db_bytes as f64 / bytes as f64
        ),
        "<= 0.5x the JSONL",
    );
    Ok(vec![first, cold, noop, size])
}
