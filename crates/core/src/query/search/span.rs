//! Where a narrowed search can find its hits: the runs of entry rows (`rid_runs`, migrations
//! 0018 and 0020) of the session files `--cwd`, `--session`, `--model` and a gateway filter
//! leave, that hold an entry as new as `--since` and one older than `--until`. A full-text
//! match outside them cannot pass the filters, so it is dropped before it is scored against
//! the rest or joined to its entry row: a search of one project used to join every match of
//! every project (`function` in a 925-session project of 10,000: 88,647 joins), and was two to
//! four times slower than a search of all of them. Each run keeps its newest time, which bounds
//! how high a match in it can rank (`ranked.rs`), and a span of a few hundred rows is read
//! whole by literal and regex searches ([`READ_WHOLE`]). This relies on every entry row lying
//! in a run of its own file, which the writer records with each batch it inserts
//! (tests/it/search_newest.rs checks it against a rebuild).

use rusqlite::Connection;

use super::SearchOptions;
use crate::error::Result;
use crate::store::filter::{int, text, Where};
use crate::store::Scope;

/// A run's first rid, last rid and newest time.
pub(super) type RunBounds = (i64, i64, Option<i64>);

/// Up to this many rids (a session of a few hundred entries, or a few written together) a
/// literal or regex search reads every text of its span instead of asking the full-text
/// index: a few milliseconds (the 1 GB corpus: 6-7 ms for a 100-entry session, whatever the
/// needle; a plan and its query took 7-57 ms).
pub(super) const READ_WHOLE: i64 = 500;

/// Up to this many rids a plan makes no lookup that reads the whole words table: the texts
/// the plan would have narrowed are read instead (1,300 rows: 11 ms, against 64 ms for
/// `--literal the` planned).
const NO_VOCABULARY_SCAN: i64 = 2_000;

/// The entry rows (rids) a narrowed search can find hits in: its runs, sorted and disjoint,
/// each with the newest time of its entries.
pub(super) struct Span {
    runs: Vec<Run>,
}

/// A run of rids `lo..=hi` and the newest time among its entries.
#[derive(Clone, Copy)]
struct Run {
    lo: i64,
    hi: i64,
    max_ts: Option<i64>,
}

impl Span {
    /// The span of `opts`' file and time filters; `None` when it has none of them (every row
    /// can then hold a hit).
    ///
    /// # Errors
    /// Index errors.
    pub(super) fn of(
        conn: &Connection,
        scope: &Scope,
        opts: &SearchOptions,
    ) -> Result<Option<Span>> {
        let by_file = opts.cwd.is_some() || scope.narrows();
        let by_time = opts.since_ms.is_some() || opts.until_ms.is_some();
        if !by_file && !by_time && opts.file_id.is_none() && opts.model.is_none() {
            return Ok(None);
        }
        let mut w = Where::default();
        if by_file {
            let files = crate::query::list::project_files(scope, opts.cwd.as_deref());
            w.and_nested(
                "r.file_id IN (SELECT f.id FROM files f LEFT JOIN sessions s ON s.file_id = f.id
                               WHERE {})",
                &files,
                [],
            );
        }
        if let Some(id) = opts.file_id {
            w.and("r.file_id = ?", [int(id)]);
        }
        // Only here, not among the filters each candidate is joined through: an `IN` of a
        // subquery is computed again at every run of a statement, and a candidate joined alone
        // is one run (a scan of every entry each: `jalapeño --model claude` took 19 s).
        if let Some(m) = &opts.model {
            w.and(
                "r.file_id IN (SELECT file_id FROM entries WHERE model LIKE '%' || ? || '%')",
                [text(m.as_str())],
            );
        }
        // A run's oldest and newest timestamps bound its entries'; a run without them has no
        // entry that `e.ts_ms >= ?` or `e.ts_ms < ?` keeps.
        if let Some(t) = opts.since_ms {
            w.and("r.max_ts >= ?", [int(t)]);
        }
        if let Some(t) = opts.until_ms {
            w.and("r.min_ts < ?", [int(t)]);
        }
        Ok(Some(Span::read(conn, &w)?))
    }

    /// Every run of the index (what a scan of every text reads run by run); `None` when the
    /// runs do not reach the last entry row (not expected: the scan then lists every text).
    ///
    /// # Errors
    /// Index errors.
    pub(super) fn whole(conn: &Connection) -> Result<Option<Span>> {
        let (last_rid, last_run): (Option<i64>, Option<i64>) = conn.query_row(
            "SELECT (SELECT max(rid) FROM entries), (SELECT max(hi) FROM rid_runs)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if last_run < last_rid {
            return Ok(None);
        }
        Ok(Some(Span::read(conn, &Where::default())?))
    }

    /// The runs `w` keeps (over `rid_runs r`).
    fn read(conn: &Connection, w: &Where) -> Result<Span> {
        let mut stmt = conn.prepare(&format!(
            "SELECT r.lo, r.hi, r.max_ts FROM rid_runs r WHERE {} ORDER BY r.lo",
            w.sql()
        ))?;
        let rows = stmt.query_map(w.params(), |r| {
            Ok(Run {
                lo: r.get(0)?,
                hi: r.get(1)?,
                max_ts: r.get(2)?,
            })
        })?;
        let runs = rows.collect::<rusqlite::Result<Vec<Run>>>()?;
        Ok(Span::of_runs(runs))
    }

    /// The span of `runs`, sorted by their first rid. Runs never overlap (each rid is in one);
    /// if some did, one run covering both keeps every lookup right.
    fn of_runs(sorted: Vec<Run>) -> Span {
        let mut runs: Vec<Run> = Vec::with_capacity(sorted.len());
        for run in sorted {
            match runs.last_mut() {
                Some(last) if run.lo <= last.hi => {
                    last.hi = last.hi.max(run.hi);
                    last.max_ts = last.max_ts.max(run.max_ts);
                }
                _ => runs.push(run),
            }
        }
        Span { runs }
    }

    /// Whether no row can hold a hit.
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// How many rids lie from the span's first row to its last (what a scan of it reads).
    pub(super) fn rids(&self) -> i64 {
        match (self.runs.first(), self.runs.last()) {
            (Some(first), Some(last)) => last.hi - first.lo + 1,
            _ => 0,
        }
    }

    /// The run holding full-text row `rowid` (`rid * 8 + kind`), if the span does.
    fn run_of(&self, rowid: i64) -> Option<&Run> {
        let rid = crate::store::schema::fts_entry(rowid).0;
        let after = self.runs.partition_point(|r| r.lo <= rid);
        self.runs[..after].last().filter(|r| rid <= r.hi)
    }

    /// [`Span::newest`] for rows asked in ascending order (a full-text query's own order),
    /// walking the runs instead of searching them: `at` is where the last answer was found.
    pub(super) fn newest_from(&self, rowid: i64, at: &mut usize) -> Option<Option<i64>> {
        let rid = crate::store::schema::fts_entry(rowid).0;
        // Every run before `at` ends before the last row asked; one that does not end before
        // this row means it is out of order: start again.
        if *at > 0 && self.runs.get(*at - 1).is_none_or(|r| r.hi >= rid) {
            *at = 0;
        }
        while self.runs.get(*at).is_some_and(|r| r.hi < rid) {
            *at += 1;
        }
        self.runs.get(*at).filter(|r| r.lo <= rid).map(|r| r.max_ts)
    }

    /// The span's runs: first rid, last rid, newest time.
    pub(super) fn runs(&self) -> Vec<RunBounds> {
        self.runs.iter().map(|r| (r.lo, r.hi, r.max_ts)).collect()
    }

    /// Whether full-text row `rowid` lies in the span.
    pub(super) fn holds(&self, rowid: i64) -> bool {
        self.run_of(rowid).is_some()
    }

    /// The newest time an entry of row `rowid`'s run can have: `Some(None)` when no entry of
    /// the run has a time, `None` when the span does not hold the row.
    pub(super) fn newest(&self, rowid: i64) -> Option<Option<i64>> {
        self.run_of(rowid).map(|r| r.max_ts)
    }

    /// The SQL condition (` AND col BETWEEN lo AND hi`) that keeps a candidate query's rows,
    /// numbered by full-text rowid (`rids: false`) or by rid, within the span's first and last
    /// row: FTS5 seeks to it instead of reading and scoring every match.
    pub(super) fn within(&self, col: &str, rids: bool) -> String {
        // Runs are disjoint and sorted by their first rid, so the last one ends last.
        let (Some(first), Some(last)) = (self.runs.first(), self.runs.last()) else {
            return " AND 0".into();
        };
        let (lo, hi) = if rids {
            (first.lo, last.hi)
        } else {
            (
                first.lo.saturating_mul(8),
                last.hi.saturating_mul(8).saturating_add(7),
            )
        };
        format!(" AND {col} BETWEEN {lo} AND {hi}")
    }
}

/// The words-table lookups a literal or regex plan may make: in a span of a few thousand rows,
/// none that reads the whole vocabulary (the span's texts are read instead, in less time).
pub(super) fn lookups(span: Option<&Span>) -> super::literal::Lookups {
    match span {
        Some(s) if s.rids() <= NO_VOCABULARY_SCAN => super::literal::Lookups::Ranges,
        _ => super::literal::Lookups::All,
    }
}

/// [`Span::within`] of `span`, or nothing when there is no span.
pub(super) fn within(span: Option<&Span>, col: &str, rids: bool) -> String {
    span.map(|s| s.within(col, rids)).unwrap_or_default()
}

/// The rows `source` gives for its MATCH argument `arg` (`r, score`, all of them) that lie in
/// `span`, best bm25 first (lowest score; ties by rowid).
///
/// # Errors
/// Index errors.
pub(super) fn matches(
    conn: &Connection,
    source: &str,
    arg: Option<&str>,
    span: &Span,
) -> Result<Vec<(i64, f64)>> {
    let mut stmt = conn
        .prepare(&format!("SELECT r, score FROM ({source})"))
        .map_err(|e| super::fts_error(&e))?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(arg), |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
        })
        .map_err(|e| super::fts_error(&e))?;
    let mut found = Vec::new();
    for row in rows {
        let (rowid, score) = row.map_err(|e| super::fts_error(&e))?;
        if span.holds(rowid) {
            found.push((rowid, score));
        }
    }
    found.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_holds_exactly_the_rows_of_its_ranges() {
        let run = |lo, hi, max_ts| Run { lo, hi, max_ts };
        // The last run lies inside the one before (never written so): they are held as one.
        let span = Span::of_runs(vec![
            run(3, 5, Some(7)),
            run(10, 10, None),
            run(20, 30, Some(9)),
            run(22, 25, Some(8)),
        ]);
        let held: Vec<i64> = (0..40).filter(|rid| span.holds(rid * 8 + 5)).collect();
        let expected: Vec<i64> = [3, 4, 5, 10].into_iter().chain(20..=30).collect();
        assert_eq!(held, expected);
        assert!(span.holds(3 * 8) && span.holds(30 * 8 + 7));
        assert!(!span.holds(3 * 8 - 1) && !span.holds(31 * 8));
        assert_eq!(span.within("rowid", false), " AND rowid BETWEEN 24 AND 247");
        assert_eq!(span.within("e2.rid", true), " AND e2.rid BETWEEN 3 AND 30");
        assert_eq!(span.newest(4 * 8 + 1), Some(Some(7)));
        assert_eq!(span.newest(10 * 8), Some(None));
        assert_eq!(span.newest(30 * 8 + 7), Some(Some(9)));
        assert_eq!(span.newest(6 * 8), None);
        // Walking gives what searching gives, in order and out of it.
        let mut at = 0;
        for rowid in (0..40 * 8).chain([30 * 8, 4 * 8, 10 * 8, 0, 39 * 8]) {
            assert_eq!(
                span.newest_from(rowid, &mut at),
                span.newest(rowid),
                "{rowid}"
            );
        }
        let empty = Span { runs: Vec::new() };
        assert!(empty.is_empty() && !empty.holds(0));
        assert_eq!(empty.within("rowid", false), " AND 0");
    }
}
