//! The best matches of a words query, exactly: FTS5 scores every match (bm25 needs them all
//! before the best are known); each is bounded by its relevance blended as the newest entry of
//! its run (`span.rs`: a narrowed search's span, else every run of the index), and they are
//! joined to their entries and filtered one at a time, best bound first, until no bound left
//! can reach the `limit` best once blended with recency ([`blend`]). The answer is the one
//! joining and ranking every match gives, and the bounds are tight (a session's entries are
//! close in time): `function` on 100,000 sessions joins 65 of its 865,439 matches. With
//! `--branch` a candidate counts only on its session's current branch (each session's path
//! walked once, when first met).

use rusqlite::Connection;

use super::one::One;
use super::span::Span;
use super::{fts_error, Candidate, OnPath, SearchOptions};
use crate::error::Result;
use crate::store::{fts5, impacts, Scope};

/// How a words query's matches get their bm25 scores.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scoring<'a> {
    /// `bm25()` through this statement (rows `r`, `score`).
    Sql(&'a str),
    /// One word or phrase (no prefix, alternative or exclusion): in one pass by
    /// `fts5::scores`, its count of texts the pass's own.
    OnePhrase,
    /// Several words or phrases ANDed, these (FTS5 phrases, in the query's order): in one pass
    /// by [`scores_each`].
    EachPhrase(&'a [String]),
}

/// Every match of `fts`, the AND of `phrases`, with its `bm25(fts)` bit for bit, in one pass:
/// each phrase's count in the text through `pidx_tfs_len` (walking its own matches, where
/// `bm25()` has FTS5 merge every phrase's into one array per text), and each phrase's count
/// of texts from a frequent word's impact blocks when kept, else counted by FTS5 once (where
/// `bm25()` walks every phrase's texts at each statement).
fn scores_each(conn: &Connection, fts: &str, phrases: &[String]) -> Result<Vec<(i64, f64)>> {
    let Some((rows, tokens)) = fts5::totals(conn, "fts")? else {
        return Ok(Vec::new());
    };
    let hits = phrases
        .iter()
        .map(|p| texts_holding(conn, p))
        .collect::<Result<Vec<i64>>>()?;
    let bm = fts5::Bm25Sum::new(rows, tokens, &hits);
    Ok(fts5::matches_each(conn, fts)
        .map_err(|e| fts_error(&e))?
        .into_iter()
        .map(|(rowid, tfs, len)| (rowid, bm.score(&tfs, len)))
        .collect())
}

/// How many texts hold `phrase`: a frequent word's count kept with its impact blocks and the
/// texts past them, else FTS5's count.
fn texts_holding(conn: &Connection, phrase: &str) -> Result<i64> {
    let count = |sql: &str, after: Option<i64>| -> Result<i64> {
        let mut stmt = conn.prepare_cached(sql)?;
        let n = match after {
            Some(after) => stmt.query_row(rusqlite::params![phrase, after], |r| r.get(0)),
            None => stmt.query_row([phrase], |r| r.get(0)),
        };
        n.map_err(|e| fts_error(&e))
    };
    if let Some(term) = fts5::term_of(conn, phrase).map_err(|e| fts_error(&e))? {
        if let Some((texts, through)) = impacts::texts_of(conn, &term)? {
            let past = count(
                "SELECT count(*) FROM fts WHERE fts MATCH ?1 AND rowid > ?2",
                Some(through),
            )?;
            return Ok(texts + past);
        }
    }
    count("SELECT count(*) FROM fts WHERE fts MATCH ?1", None)
}

/// The recency weight of a hit: a hit loses up to a third of its relevance with age (half of
/// that after 30 days); no timestamp counts as a year old.
pub fn blend(ts_ms: Option<i64>, now_ms: i64) -> f64 {
    let age_days = ts_ms.map_or(365.0, |t| ((now_ms - t).max(0) as f64) / 86_400_000.0);
    2.0 / 3.0 + 0.5f64.powf(age_days / 30.0) / 3.0
}

/// Of `matches` (rowid and bm25 score, best first), the candidates that pass the filters, as
/// far as they can still be among the `limit` best.
///
/// # Errors
/// Index errors.
pub(super) fn best_of(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    matches: Vec<(i64, f64)>,
    span: Option<&Span>,
    now_ms: i64,
) -> Result<Vec<Candidate>> {
    let mut best = Best::new(conn, scope, opts, span, now_ms)?;
    for (rowid, score) in matches {
        if !best.take(rowid, score)? {
            break;
        }
    }
    Ok(best.found)
}

/// The best matches of `source` (`rowid AS r, score`, its `MATCH ?` given `fts`) that pass the
/// filters, as far as they can be among the `limit` best. Every match is scored in one FTS5
/// pass (as a window of the best would be: bm25 needs every match before the best are
/// known) and bounded by the recency weight of its run's newest entry (`span.rs`'s runs, one
/// or a few per session file: a match blends no higher than that); they are joined in the
/// order of that bound until no later one can reach the `limit` best. A window of the best
/// 1,000 by bm25 alone was not enough for a common word on a large archive, whose many
/// matches of nearly equal bm25 blending reorders (`function`, 865,438 matches at 100,000
/// sessions: 14 of its top 20 were in its best 1,000), and taking them by bm25 until settled
/// joined a quarter of them (`function` at 10,000 sessions: 22,113 of 88,643). The scores come
/// as `scoring` says (the same scores every way). `None` when
/// the first `window` matches joined hold fewer than `limit` candidates: the filters leave
/// too few, and joining every match at once is cheaper than one at a time.
///
/// # Errors
/// Index errors.
pub(super) fn best_settled(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    scoring: Scoring,
    fts: &str,
    window: usize,
    now_ms: i64,
) -> Result<Option<Vec<Candidate>>> {
    let rows = match scoring {
        Scoring::Sql(source) => conn
            .prepare(source)
            .and_then(|mut all| {
                all.query_map([fts], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| fts_error(&e))?,
        Scoring::OnePhrase => fts5::scores(conn, fts).map_err(|e| fts_error(&e))?,
        Scoring::EachPhrase(phrases) => scores_each(conn, fts, phrases)?,
    };
    // A few matches are joined best bm25 first (bounded by a weight of 1): reading every run
    // would cost more than joining them all (10,000 runs: 2-3 ms).
    let runs = if rows.len() > window {
        Span::whole(conn)?
    } else {
        None
    };
    let timeless = blend(None, now_ms);
    let mut at = 0;
    let mut matches: Vec<(f64, i64, f64)> = rows
        .into_iter()
        .map(|(rowid, score)| {
            let newest = runs.as_ref().and_then(|r| r.newest_from(rowid, &mut at));
            let cap = newest.map_or(1.0, |t| blend(t, now_ms).max(timeless));
            (most(-score, cap), rowid, score)
        })
        .collect();
    // Best bound first; only the first `window` are sorted unless the top is not settled in
    // them (sorting all 865,439 matches of `function` took 34 ms).
    let order = |a: &(f64, i64, f64), b: &(f64, i64, f64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let head = window.min(matches.len());
    if head < matches.len() {
        matches.select_nth_unstable_by(head, order);
    }
    matches[..head].sort_unstable_by(order);
    let mut best = Best::new(conn, scope, opts, None, now_ms)?;
    for at in 0..matches.len() {
        if at == head {
            if best.found.len() < opts.limit {
                return Ok(None);
            }
            // The selection left the best of the rest here: the rest is sorted only if needed.
            if best.floor.below(matches[head].0) {
                break;
            }
            matches[head..].sort_unstable_by(order);
        }
        let (bound, rowid, score) = matches[at];
        if best.floor.below(bound) {
            break;
        }
        best.join(rowid, score)?;
    }
    Ok(Some(best.found))
}

/// Candidates taken best first, joined and kept while they can be among the `k` best.
pub(super) struct Best<'c, 's> {
    one: One<'c>,
    /// With `--branch`: only candidates on their session's current branch count.
    on_path: Option<OnPath<'c>>,
    pub(super) floor: Floor,
    span: Option<&'s Span>,
    now_ms: i64,
    /// The recency weight of a hit with no time.
    timeless: f64,
    pub(super) found: Vec<Candidate>,
}

impl<'c, 's> Best<'c, 's> {
    pub(super) fn new(
        conn: &'c Connection,
        scope: &Scope,
        opts: &SearchOptions,
        span: Option<&'s Span>,
        now_ms: i64,
    ) -> Result<Self> {
        // Every hit is older than `--until`, so none blends higher than an entry of that time.
        let top_blend = opts.until_ms.map_or(1.0, |u| blend(Some(u), now_ms));
        Ok(Best {
            one: One::new(conn, scope, opts)?,
            on_path: opts.branch.then(|| OnPath::new(conn)),
            floor: Floor::new(opts.limit, top_blend),
            span,
            now_ms,
            timeless: blend(None, now_ms),
            found: Vec::new(),
        })
    }

    /// Takes the next match; false when neither it nor any later one can be among the best.
    fn take(&mut self, rowid: i64, score: f64) -> Result<bool> {
        if self.floor.excludes(-score) {
            return Ok(false);
        }
        // Nor does it blend higher than the newest entry of its run (or one with no time):
        // a match in an old run that cannot reach the k best is not joined.
        let newest = self.span.and_then(|s| s.newest(rowid));
        if let Some(newest) = newest {
            let cap = blend(newest, self.now_ms).max(self.timeless);
            if self.floor.excludes_at(-score, cap) {
                return Ok(true);
            }
        }
        self.join(rowid, score)?;
        Ok(true)
    }

    /// Joins a match to its entry; kept when the filters let it through.
    pub(super) fn join(&mut self, rowid: i64, score: f64) -> Result<()> {
        if let Some(c) = self.one.join(rowid, score)? {
            if let Some(on_path) = &mut self.on_path {
                if !on_path.holds(&c)? {
                    return Ok(());
                }
            }
            self.floor.add(c.relevance * blend(c.ts_ms, self.now_ms));
            self.found.push(c);
        }
        Ok(())
    }
}

/// The most relevance `raw` can blend to with a recency weight of at most `weight` (a negative
/// relevance blends highest at the lowest weight, two thirds).
pub fn most(raw: f64, weight: f64) -> f64 {
    if raw >= 0.0 {
        raw * weight
    } else {
        raw * 2.0 / 3.0
    }
}

/// The `k` best blended relevances so far, to tell when no later candidate can join them.
pub(super) struct Floor {
    k: usize,
    /// The highest recency weight a candidate can have ([`blend`] of the newest time the
    /// filters let through: 1 without `--until`).
    top_blend: f64,
    best: Vec<f64>, // descending, at most k
}

impl Floor {
    fn new(k: usize, top_blend: f64) -> Floor {
        Floor {
            k,
            top_blend,
            best: Vec::new(),
        }
    }

    /// Counts a candidate's blended relevance. An equal one already counted is not counted
    /// again: a forked session's copy of an entry (same text, same time) blends the same and
    /// is one hit with it (`OneHitPerCopy`), so counting both could settle the top with a hit
    /// short; two other entries that blend exactly alike only make the floor lower (safe).
    fn add(&mut self, blended: f64) {
        let at = self.best.partition_point(|&b| b > blended);
        if self.best.get(at) == Some(&blended) {
            return;
        }
        if at < self.k {
            self.best.insert(at, blended);
            self.best.truncate(self.k);
        }
    }

    /// Whether a candidate of relevance `raw`, and every later one (no more relevant), is
    /// certainly outside the `k` best: blended, it is at most `raw` times the top weight (at
    /// most two thirds of it when negative), strictly below the k-th best (a tie could still
    /// win on its rowid).
    fn excludes(&self, raw: f64) -> bool {
        self.excludes_at(raw, self.top_blend)
    }

    /// Whether one candidate of relevance `raw`, weighing at most `weight`, is certainly
    /// outside the `k` best.
    fn excludes_at(&self, raw: f64, weight: f64) -> bool {
        self.below(most(raw, weight))
    }

    /// Whether a candidate that blends to at most `most` is certainly outside the `k` best.
    pub(super) fn below(&self, most: f64) -> bool {
        self.best.len() >= self.k && self.best.last().is_some_and(|&kth| most < kth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_excludes_only_what_cannot_reach_the_kth_best() {
        let mut f = Floor::new(2, 1.0);
        f.add(5.0);
        assert!(!f.excludes(0.1), "fewer than k seen: nothing is excluded");
        f.add(3.0);
        f.add(4.0);
        assert_eq!(f.best, [5.0, 4.0]);
        let mut copies = Floor::new(2, 1.0);
        copies.add(5.0);
        copies.add(5.0);
        assert!(!copies.excludes(0.1), "a copy is one hit with its original");
        assert!(f.excludes(3.9));
        assert!(!f.excludes(4.0), "a tie may still win on its rowid");
        assert!(!f.excludes(4.5));
        let mut neg = Floor::new(1, 1.0);
        neg.add(-3.0);
        // -4 blends to at most -4 * 2/3 = -2.67, above -3.
        assert!(!neg.excludes(-4.0));
        assert!(neg.excludes(-5.0));
        // Hits no newer than a time 30 days ago weigh at most 5/6: 4.7 * 5/6 < 4.
        let mut old = Floor::new(1, 2.0 / 3.0 + 1.0 / 6.0);
        old.add(4.0);
        assert!(old.excludes(4.7));
        assert!(!old.excludes(4.9));
    }

    #[test]
    fn blending_keeps_between_two_thirds_and_all() {
        let now = 1_000 * 86_400_000;
        assert_eq!(blend(Some(now), now), 1.0);
        assert_eq!(blend(Some(now + 5), now), 1.0);
        assert!((blend(Some(now - 30 * 86_400_000), now) - (2.0 / 3.0 + 1.0 / 6.0)).abs() < 1e-12);
        let old = blend(None, now);
        assert!(old > 2.0 / 3.0 && old < 0.67);
    }
}
