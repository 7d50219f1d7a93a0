//! What a text not listed under a word (`text_heads`, pg 0006) can score, shared by the top of
//! one word (`heads.rs`) and of several words or phrases (`several.rs`): the recency weight of
//! the newest entry the reader sees, the rounding room on a bound, the chunks the listed texts
//! are looked up in, and `PIDX_PG_HEADS`'s say on whether the listed texts are tried at all.

use postgres::Transaction;

use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::query::search::{blend, SearchOptions};

/// Rounding room on a bound: the scores and the bound are computed in floating point in
/// different orders of operations.
pub(super) const ROOM: f64 = 1.0 + 1e-9;

/// Listed texts looked up first (then four times more at each look-up: a filter that keeps few
/// texts, `--cwd`, takes a few round trips, not one per chunk).
const CHUNK: usize = 64;

/// The ranges of `len` listed texts looked up one after another, best first: [`CHUNK`], then
/// each four times the one before.
pub(super) fn chunks(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let (mut at, mut size) = (0, CHUNK);
    std::iter::from_fn(move || {
        let range = at..(at + size).min(len);
        (at < len).then(|| {
            at = range.end;
            size *= 4;
            range
        })
    })
}

/// `PIDX_PG_HEADS`: `off` never reads the listed texts nor the postings, `only` makes a search
/// the listed texts cannot settle an error and reads no postings, `postings` makes a search of
/// words its postings do not answer an error (the tests' proofs that a search was answered
/// from them, `postings.rs`).
pub(super) struct Mode(String);

impl Mode {
    pub(super) fn now() -> Mode {
        Mode(std::env::var("PIDX_PG_HEADS").unwrap_or_default())
    }

    pub(super) fn off(&self) -> bool {
        self.0 == "off"
    }

    /// Whether the postings are read.
    pub(super) fn postings(&self) -> bool {
        !self.off() && self.0 != "only"
    }

    /// What a search the postings do not answer gives: `None` (the other ways), or the error
    /// `postings` asks for.
    pub(super) fn not_posted<T>(&self) -> Result<Option<T>> {
        if self.0 == "postings" {
            Err(Error::Invalid(
                "PIDX_PG_HEADS=postings: the postings do not answer this search".into(),
            ))
        } else {
            Ok(None)
        }
    }

    /// What a search the listed texts do not settle gives: `None` (score every match), or the
    /// error `only` asks for.
    pub(super) fn unsettled<T>(&self) -> Result<Option<T>> {
        if self.0 == "only" {
            Err(Error::Invalid(
                "PIDX_PG_HEADS=only: the listed texts do not settle this search".into(),
            ))
        } else {
            Ok(None)
        }
    }
}

/// The most recency weight a text this reader sees can have: that of the newest entry, before
/// `--until` (a text without a time weighs as a year old).
///
/// # Errors
/// Server errors.
pub(super) fn most_recency(tx: &mut Transaction, q: &SearchOptions, now_ms: i64) -> Result<f64> {
    let mut newest: Option<i64> = tx
        .query_one("SELECT max(ts_ms) FROM entries", &[])
        .map_err(server_err)?
        .get(0);
    if let (Some(t), Some(until)) = (newest, q.until_ms) {
        newest = Some(t.min(until - 1));
    }
    Ok(blend(newest, now_ms).max(blend(None, now_ms)))
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_cover_every_text_once_each_four_times_the_last() {
        let ends = |len| chunks(len).map(|r| (r.start, r.end)).collect::<Vec<_>>();
        assert_eq!(ends(0), []);
        assert_eq!(ends(10), [(0, 10)]);
        assert_eq!(ends(1000), [(0, 64), (64, 320), (320, 1000)]);
    }
}
