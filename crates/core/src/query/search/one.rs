//! Candidates joined to their entries one at a time, through the search's filters: for a window
//! of ranked matches (`ranked.rs`) and for runs of literal or regex candidates (`newest.rs`),
//! where joining every candidate in one statement would read far more entry rows than needed.

use rusqlite::types::Value;
use rusqlite::{Connection, Statement};

use super::{candidate, candidate_sql, filters, Candidate, SearchOptions};
use crate::error::Result;
use crate::store::filter::{int, Where};
use crate::store::Scope;

/// The statement that joins one full-text rowid to its entry and file, with the filters.
pub(super) struct One<'c> {
    stmt: Statement<'c>,
    filters: Where,
}

impl<'c> One<'c> {
    /// # Errors
    /// Index errors.
    pub(super) fn new(conn: &'c Connection, scope: &Scope, opts: &SearchOptions) -> Result<Self> {
        let filters = filters(scope, opts, []);
        let stmt = conn.prepare(&candidate_sql(
            "SELECT ?1 AS r, ?2 AS score",
            opts,
            &filters,
        ))?;
        Ok(One { stmt, filters })
    }

    /// Full-text row `rowid` (of bm25 `score`, 0 for literal and regex candidates) as a
    /// candidate; `None` when the filters leave it out.
    ///
    /// # Errors
    /// Index errors.
    pub(super) fn join(&mut self, rowid: i64, score: f64) -> Result<Option<Candidate>> {
        let first = [int(rowid), Value::Real(score)];
        let params = rusqlite::params_from_iter(first.iter().chain(self.filters.values()));
        let mut rows = self.stmt.query(params)?;
        Ok(rows.next()?.map(candidate).transpose()?)
    }
}
