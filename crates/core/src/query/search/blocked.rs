//! The best matches of a one-word query whose word has impact blocks (`store/impacts.rs`),
//! exactly, without scoring every match: each block is bounded by the most its texts can
//! score (its impact times the word's idf, allowing for the mean length's growth since) blended
//! as its newest entry. Blocks and texts are taken best bound first: a block's texts are scored
//! from its list, a text at the top is bounded again by its own entry's time, and joined through
//! the filters once that exact blended score is at the top, until no bound left can reach the
//! `limit` best. Scores are computed as FTS5's `bm25()` computes them, bit for bit
//! (`store/fts5.rs`); texts past the blocks are all scored. The answer is the one
//! `ranked::best_settled` gives: on 10,000 sessions `to` (in 246,403 texts) reads 53 of its
//! 1,926 blocks and joins 20 texts.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::ranked::{blend, most, Best};
use super::{fts_error, Candidate, SearchOptions};
use crate::error::Result;
use crate::store::fts5::{self, Bm25};
use crate::store::{impacts, Scope};

/// How a search used a word's impact blocks (`search --explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlocksRead {
    /// Blocks whose texts were scored.
    pub read: usize,
    /// The word's blocks.
    pub of: usize,
    /// The top may have needed a text the blocks leave out, so every match was scored after
    /// all.
    pub left_out: bool,
}

/// The best candidates of `fts` (a query of one word or phrase) and how many blocks that read;
/// `None` when its term has no blocks (a rare word, a phrase of several words, an index built
/// before them). When the top may need a text its blocks leave out (the filters rejected most
/// of their best texts, or a long limit), no candidates but `left_out`: every match is to be
/// scored.
///
/// # Errors
/// Index errors.
pub(super) fn best(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    fts: &str,
    now_ms: i64,
) -> Result<Option<(Option<Vec<Candidate>>, BlocksRead)>> {
    let Some(term) = fts5::term_of(conn, fts).map_err(|e| fts_error(&e))? else {
        return Ok(None);
    };
    let Some(blocks) = impacts::of_term(conn, &term)? else {
        return Ok(None);
    };
    let Some((rows, tokens)) = fts5::totals(conn, "fts")? else {
        return Ok(None);
    };
    // Texts past the blocks: every one scored, bounded by the top weight.
    let past = fts5::matches(conn, fts, Some(blocks.through)).map_err(|e| fts_error(&e))?;
    // bm25's idf counts every text holding the word (FTS5 counts them for each statement):
    // the blocks' count and those past them, or counted once here when texts left the index
    // since the blocks were counted.
    let hits = match blocks.texts {
        Some(n) => n + past.len() as i64,
        None => conn
            .prepare_cached("SELECT count(*) FROM fts WHERE fts MATCH ?1")?
            .query_row([fts], |r| r.get(0))
            .map_err(|e| fts_error(&e))?,
    };
    let bm = Bm25::new(rows, tokens, hits);
    let mut waiting: BinaryHeap<Text> = past
        .into_iter()
        .map(|(rowid, tf, len)| Text::new(rowid, bm.score(tf, len), 1.0))
        .collect();
    let timeless = blend(None, now_ms);
    // (bound, first rowid, last rowid, recency weight) of each block; the texts left out of
    // them last of all, as a block of no rowids bounded by the newest weight.
    let left_out = blocks
        .tail
        .map(|tail| (most(bm.most(tail, blocks.avgdl), 1.0), i64::MAX, None, 1.0));
    let mut order: Vec<(f64, i64, Option<i64>, f64)> = blocks
        .list
        .iter()
        .map(|b| {
            let weight = blend(b.newest, now_ms).max(timeless);
            let bound = most(bm.most(b.impact, blocks.avgdl), weight);
            (bound, b.first, Some(b.last), weight)
        })
        .chain(left_out)
        .collect();
    let mut read = BlocksRead {
        read: 0,
        of: blocks.list.len(),
        left_out: false,
    };
    order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best = Best::new(conn, scope, opts, None, now_ms)?;
    let mut time = conn.prepare_cached("SELECT ts_ms FROM entries WHERE rid = ?1")?;
    let mut next = order.into_iter().peekable();
    loop {
        let block = next.peek().map(|b| b.0);
        match waiting.peek() {
            Some(t) if block.is_none_or(|b| t.bound >= b) => {
                if best.floor.below(t.bound) {
                    break;
                }
                let mut t = waiting.pop().expect("peeked");
                if t.exact {
                    best.join(t.rowid, t.score)?;
                } else if let Some(ts) = time.query_row([t.rowid >> 3], |r| r.get(0)).optional()? {
                    // Its own time instead of its block's newest: it waits for its turn again,
                    // and only the texts that can reach the top are joined (each a statement
                    // through every filter, where this is one row read by its key).
                    t.bound = most(-t.score, blend(ts, now_ms));
                    t.exact = true;
                    waiting.push(t);
                }
            }
            _ => {
                let Some((bound, _, last, weight)) = next.next() else {
                    break;
                };
                if best.floor.below(bound) {
                    break;
                }
                let Some(last) = last else {
                    read.left_out = true;
                    return Ok(Some((None, read)));
                };
                read.read += 1;
                // A block may reach past the blocks' end (when a removal lowered it): those of
                // its texts are among the ones past the end, already waiting.
                let block = impacts::texts(conn, &term, last)?;
                for (rowid, tf, len) in block.into_iter().filter(|t| t.0 <= blocks.through) {
                    waiting.push(Text::new(rowid, bm.score(tf, len), weight));
                }
            }
        }
    }
    Ok(Some((Some(best.found), read)))
}

/// A scored text waiting to be joined, best bound first (then the lower rowid).
struct Text {
    bound: f64,
    rowid: i64,
    score: f64,
    /// Whether `bound` is its blended relevance (its entry's time read), not a bound by its
    /// block's newest.
    exact: bool,
}

impl Text {
    /// A text of bm25 `score`, bounded by a recency weight of at most `weight`.
    fn new(rowid: i64, score: f64, weight: f64) -> Text {
        Text {
            bound: most(-score, weight),
            rowid,
            score,
            exact: false,
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> Ordering {
        self.bound
            .total_cmp(&other.bound)
            .then(other.rowid.cmp(&self.rowid))
    }
}
