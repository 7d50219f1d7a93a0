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
use super::{Candidate, SearchOptions};
use crate::error::Result;
use crate::query::Scope;

/// The candidates of one run, and the newest timestamp any of them can have (`None`: none has
/// one; they sort after every timestamp).
struct Run {
    newest: Option<i64>,
    rowids: Vec<i64>,
}

/// A joined candidate in the heap, ordered as it is given out.
struct Ready(Candidate);

impl Ready {
    fn key(&self) -> (Option<i64>, i64) {
        (self.0.ts_ms, self.0.rowid)
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
}

impl<'c> Newest<'c> {
    /// The candidates of `rowids` (full-text rowids, any order) that pass the search's filters.
    ///
    /// # Errors
    /// Index errors.
    pub(super) fn new(
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
        })
    }

    fn join(&mut self, run: Run) -> Result<()> {
        for rowid in run.rowids {
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
        let rid = rowid >> 3;
        if let Some((lo, hi, at)) = current {
            if (lo..=hi).contains(&rid) {
                runs[at].rowids.push(rowid);
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
                    rowids: vec![rowid],
                });
            }
            _ => {
                current = None;
                runs.push(Run {
                    newest: Some(i64::MAX),
                    rowids: vec![rowid],
                });
            }
        }
    }
    Ok(runs)
}
