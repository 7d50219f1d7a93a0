//! A literal or regex search's candidates newest first (timestamp, then rowid, both descending)
//! without joining every one to its entry row first. A common needle has tens of thousands of
//! candidates (`--literal _line`: 50,652 texts on a 1 GB corpus) and its first hits are among
//! the newest few; each join is a scattered page read. So each candidate is placed in its run
//! (`rid_runs`, migration 0018: rows written together for one file, with their newest
//! timestamp), the runs are joined newest first, and a joined candidate is given out once no run
//! left can hold one that sorts before it. The order is the one sorting every candidate gives.

use std::collections::BinaryHeap;

use rusqlite::{CachedStatement, Connection, OptionalExtension};

use super::one::One;
use super::raw::RawRuns;
use super::span::{RunBounds, Span};
use super::{Candidate, SearchOptions};
use crate::error::Result;
use crate::store::Scope;

/// The candidates of one run, and the newest timestamp any of them can have (`None`: none has
/// one; they sort after every timestamp).
struct Run {
    newest: Option<i64>,
    rows: Rows,
}

/// A run's candidates: found already, or every text of its rids, read when it is joined.
enum Rows {
    Found(Vec<i64>),
    Texts(i64, i64),
}

/// A joined candidate in the heap, ordered as it is given out.
struct Ready(Candidate);

/// Where a candidate comes in the order: the greatest first.
fn key(c: &Candidate) -> (Option<i64>, i64) {
    (c.ts_ms, c.rowid)
}

impl Ready {
    fn key(&self) -> (Option<i64>, i64) {
        key(&self.0)
    }
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ready {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The candidates, newest first, joined a run at a time.
pub(super) struct Newest<'c> {
    /// Runs not joined yet, the newest last.
    runs: Vec<Run>,
    ready: BinaryHeap<Ready>,
    one: One<'c>,
    /// The rowids of every text of a rid range (`?1` to `?2`), for [`Rows::Texts`].
    texts: Option<CachedStatement<'c>>,
    /// A test on the raw bytes of a run of texts: those it rejects are not listed.
    raw: Option<RawRuns<'c>>,
}

impl<'c> Newest<'c> {
    /// The candidates of `rowids` (full-text rowids, any order) that pass the search's filters.
    ///
    /// # Errors
    /// Index errors.
    fn new(
        conn: &'c Connection,
        scope: &Scope,
        opts: &SearchOptions,
        mut rowids: Vec<i64>,
    ) -> Result<Newest<'c>> {
        rowids.sort_unstable();
        rowids.dedup();
        let mut runs = group(conn, &rowids)?;
        // Newest last, to pop; `Some(_)` sorts after `None`, an unknown run (`i64::MAX`) last.
        runs.sort_by_key(|r| r.newest);
        Ok(Newest {
            runs,
            ready: BinaryHeap::new(),
            one: One::new(conn, scope, opts)?,
            texts: None,
            raw: None,
        })
    }

    /// The candidates of `source` (for its MATCH argument `arg`; with none, a scan of every
    /// text, read run by run, skipping the runs whose bytes `raw` rejects) in `span`, newest
    /// first.
    ///
    /// # Errors
    /// Index errors.
    pub(super) fn of(
        conn: &'c Connection,
        scope: &Scope,
        opts: &SearchOptions,
        from: super::Source,
        span: Option<&Span>,
        raw: Option<RawRuns<'c>>,
    ) -> Result<Newest<'c>> {
        let super::Source { sql: source, arg } = from;
        let runs = match span {
            _ if arg.is_some() => None,
            Some(span) => Some(span.runs()),
            None => Span::whole(conn)?.map(|whole| whole.runs()),
        };
        if let Some(runs) = runs {
            let texts = format!(
                "SELECT r FROM ({})",
                super::every_text(" AND e2.rid BETWEEN ?1 AND ?2")
            );
            let mut over = Newest::over_runs(conn, scope, opts, runs, &texts)?;
            over.raw = raw;
            return Ok(over);
        }
        let mut rowids = super::rowids_of(conn, source, arg)?;
        rowids.retain(|&r| span.is_none_or(|s| s.holds(r)));
        Newest::new(conn, scope, opts, rowids)
    }

    /// Every text of the runs `(lo, hi, newest)` that passes the search's filters, newest
    /// first: a run's texts are listed only when it is joined, so a needle found in the newest
    /// sessions never lists the rest (a scan of every text listed 401,440 of them on the 1 GB
    /// corpus before its first hit was given). `texts` is the query of the rowids of every
    /// text whose rid lies from `?1` to `?2`.
    ///
    /// # Errors
    /// Index errors.
    fn over_runs(
        conn: &'c Connection,
        scope: &Scope,
        opts: &SearchOptions,
        runs: impl IntoIterator<Item = RunBounds>,
        texts: &str,
    ) -> Result<Newest<'c>> {
        let mut runs: Vec<Run> = runs
            .into_iter()
            .map(|(lo, hi, newest)| Run {
                newest,
                rows: Rows::Texts(lo, hi),
            })
            .collect();
        runs.sort_by_key(|r| r.newest);
        Ok(Newest {
            runs,
            ready: BinaryHeap::new(),
            one: One::new(conn, scope, opts)?,
            texts: Some(conn.prepare_cached(texts)?),
            raw: None,
        })
    }

    fn join(&mut self, run: Run) -> Result<()> {
        // A run whose bytes cannot hold the needle holds no hit: its texts are not listed.
        if let (Rows::Texts(lo, hi), Some(raw)) = (&run.rows, &mut self.raw) {
            if !raw.may_hold(*lo, *hi)? {
                return Ok(());
            }
        }
        let rowids = match (run.rows, &mut self.texts) {
            (Rows::Found(rowids), _) => rowids,
            (Rows::Texts(lo, hi), Some(texts)) => texts
                .query_map([lo, hi], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?,
            // Never: only `over_runs` makes runs of texts, and it keeps their query.
            (Rows::Texts(..), None) => Vec::new(),
        };
        for rowid in rowids {
            if let Some(c) = self.one.join(rowid, 0.0)? {
                self.ready.push(Ready(c));
            }
        }
        Ok(())
    }
}

impl Iterator for Newest<'_> {
    type Item = Result<Candidate>;

    fn next(&mut self) -> Option<Result<Candidate>> {
        loop {
            // What is left unjoined sorts strictly after the best joined candidate: give it.
            let settled = match (self.ready.peek(), self.runs.last()) {
                (Some(top), Some(run)) => top.0.ts_ms > run.newest,
                (Some(_), None) => true,
                (None, None) => return None,
                (None, Some(_)) => false,
            };
            if settled {
                return self.ready.pop().map(|r| Ok(r.0));
            }
            let run = self.runs.pop()?;
            if let Err(e) = self.join(run) {
                self.runs.clear();
                self.ready.clear();
                return Some(Err(e));
            }
        }
    }
}

/// Candidates newest first from a looser query (`literal::loosened`: the same without its
/// prefixes, so a superset) for the first [`LOOSE_READS`], then from the query itself, past
/// the last one given: a prefix costs FTS5 its whole list of texts (`"fn m"*`: 364 ms on the
/// 1 GB corpus), where the candidates a search reads before its top is full are usually few and
/// hold the needle anyway. When most of the looser candidates do not (a prefix that narrows
/// much), the query's own candidates take over after that many, so the most this costs is the
/// looser query and that many reads more.
pub(super) struct Looser<'c, F> {
    first: Newest<'c>,
    given: usize,
    /// The key of the last candidate given.
    last: Option<(Option<i64>, i64)>,
    then: Option<F>,
    rest: Option<Newest<'c>>,
    failed: bool,
}

/// Candidates taken from the looser query before the query's own take over.
pub const LOOSE_READS: usize = 200;

impl<'c, F: FnOnce() -> Result<Newest<'c>>> Looser<'c, F> {
    /// `first` the looser query's candidates, `then` the query's own.
    pub(super) fn new(first: Newest<'c>, then: F) -> Looser<'c, F> {
        Looser {
            first,
            given: 0,
            last: None,
            then: Some(then),
            rest: None,
            failed: false,
        }
    }
}

impl<'c, F: FnOnce() -> Result<Newest<'c>>> Iterator for Looser<'c, F> {
    type Item = Result<Candidate>;

    fn next(&mut self) -> Option<Result<Candidate>> {
        if self.failed {
            return None;
        }
        if let Some(then) = self.then.take_if(|_| self.given >= LOOSE_READS) {
            match then() {
                Ok(rest) => self.rest = Some(rest),
                Err(e) => {
                    // Nothing after an error (the looser candidates would go on past where the
                    // query's own take over).
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let Some(rest) = &mut self.rest else {
            let c = self.first.next()?;
            if let Ok(c) = &c {
                self.given += 1;
                self.last = Some(key(c));
            }
            return Some(c);
        };
        // The query's candidates sort as the looser ones do, and each is one of them: those
        // up to the last given were given.
        loop {
            let c = rest.next()?;
            match &c {
                Ok(c) if self.last.is_some_and(|last| key(c) >= last) => {}
                _ => return Some(c),
            }
        }
    }
}

/// The sorted `rowids` by run. A rid in no run (not expected: every batch the writer inserts
/// records one) gets a run of its own that is joined first.
fn group(conn: &Connection, rowids: &[i64]) -> rusqlite::Result<Vec<Run>> {
    let mut find: CachedStatement = conn.prepare_cached(
        "SELECT lo, hi, max_ts FROM rid_runs WHERE lo <= ?1 ORDER BY lo DESC LIMIT 1",
    )?;
    let mut runs: Vec<Run> = Vec::new();
    // The run the last rid fell in: its bounds and its index in `runs`.
    let mut current: Option<(i64, i64, usize)> = None;
    for &rowid in rowids {
        let rid = crate::store::schema::fts_entry(rowid).0;
        if let Some((lo, hi, at)) = current {
            if (lo..=hi).contains(&rid) {
                if let Rows::Found(rowids) = &mut runs[at].rows {
                    rowids.push(rowid);
                }
                continue;
            }
        }
        let found: Option<(i64, i64, Option<i64>)> = find
            .query_row([rid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        match found {
            Some((lo, hi, newest)) if rid <= hi => {
                current = Some((lo, hi, runs.len()));
                runs.push(Run {
                    newest,
                    rows: Rows::Found(vec![rowid]),
                });
            }
            _ => {
                current = None;
                runs.push(Run {
                    newest: Some(i64::MAX),
                    rows: Rows::Found(vec![rowid]),
                });
            }
        }
    }
    Ok(runs)
}
