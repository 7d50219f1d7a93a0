//! The top of a one-word search from the word's postings (`word_postings`, pg 0020): every text
//! holding the word, with its count of it, its length and its entry's time, packed about eight
//! bytes a text (`pg::postings`). Each is scored exactly (the arithmetic of scoring it from its
//! body), all are sorted, and the best are looked up with their entries and sessions under the
//! search's filters into the hits the local rules show (`ranked::walk`: `--branch`, copies,
//! `--limit`); a posting whose text is gone (its transcript rewritten or removed) is not found
//! there and drops out. No heap page of `entry_text` is read per match, which is what a common
//! word's search cost before (`bounded.rs`).
//!
//! Taken when every source the search reads has its postings (`sources.postings`), the reader
//! reads every row (a limited one reads no postings), the query is one word, not a prefix; and
//! given up (for `heads.rs` and `bounded.rs`) when the filters keep so few of the best texts
//! that [`MOST_LOOKED_UP`] are looked up without filling the hits: those ways filter on the
//! server.

use postgres::Transaction;

use super::ranked::{sort, walk, Keyed, Prepared};
use super::search::On;
use super::unlisted::Mode;
use crate::pg::postings::{decode, Posting};
use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::query::search::{blend, Hit, SearchOptions};

/// Texts looked up at most before a selective filter hands the search to the ways that
/// filter on the server.
const MOST_LOOKED_UP: usize = 20_000;

/// The hits of a search of one word from its postings, or `None` when this way does not apply
/// (see the module).
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    p: &Prepared,
) -> Result<Option<Vec<Hit>>> {
    let ([phrase], [_]) = (p.phrases.as_slice(), p.facts.each.as_slice()) else {
        return Ok(None);
    };
    let [word] = phrase.words.as_slice() else {
        return Ok(None);
    };
    let mode = Mode::now();
    if !mode.postings() {
        return Ok(None);
    }
    if !crate::pg::words_posted() || !p.and_only || phrase.prefix || q.limit == 0 {
        return mode.not_posted();
    }
    if !posted(tx, on)? {
        return mode.not_posted();
    }
    let rows = tx
        .query(
            "SELECT source, data FROM word_postings
             WHERE term = $1 AND ($2::text IS NULL OR source = $2)",
            &[word, &on.source],
        )
        .map_err(server_err)?;
    let sources: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    // (relevance, source, posting): the source an index into `sources`, so that a million
    // postings hold no string each.
    let mut scored: Vec<(f64, u32, Posting)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let data: &[u8] = r.get(1);
        let whole = decode(data, |posting| {
            if passes(q, &posting) {
                let relevance = -p
                    .facts
                    .sum
                    .score(&[i64::from(posting.tf)], i64::from(posting.ntok))
                    * blend(posting.ts_ms, p.now_ms);
                scored.push((relevance, i as u32, posting));
            }
        });
        if !whole {
            return Err(Error::Server(format!(
                "the server's postings of a word for source {} do not decode (pg 0020)",
                sources[i]
            )));
        }
    }
    // Best first, then the later text, as `ranked::sort`; only as many sorted as are looked up.
    let order = |a: &(f64, u32, Posting), b: &(f64, u32, Posting)| {
        b.0.total_cmp(&a.0)
            .then((b.2.fid, b.2.seq, b.2.kind).cmp(&(a.2.fid, a.2.seq, a.2.kind)))
    };
    // Every text holding the word is looked up when there are few enough, else the best.
    let all = scored.len() <= MOST_LOOKED_UP;
    if !all {
        scored.select_nth_unstable_by(MOST_LOOKED_UP, order);
        scored.truncate(MOST_LOOKED_UP);
    }
    let mut keyed: Vec<Keyed> = scored
        .into_iter()
        .map(|(relevance, i, posting)| Keyed {
            relevance,
            source: sources[i as usize].clone(),
            fid: posting.fid,
            seq: posting.seq,
            kind: posting.kind,
        })
        .collect();
    sort(&mut keyed);
    match walk(tx, on, q, terms, &keyed)? {
        (hits, full) if full || all => Ok(Some(hits)),
        _ => mode.not_posted(),
    }
}

/// Whether every source this search reads has its postings, and the reader reads every row.
fn posted(tx: &mut Transaction, on: &On) -> Result<bool> {
    let all: Option<bool> = tx
        .query_one(
            "SELECT bool_and(postings) AND NOT pidx_read_limited(current_user) FROM sources
             WHERE $1::text IS NULL OR name = $1",
            &[&on.source],
        )
        .map_err(server_err)?
        .get(0);
    Ok(all.unwrap_or(false))
}

/// Whether a posting passes the filters its own fields answer (kinds, `--since`, `--until`,
/// as `search::filters` puts them to the server); the others are asked at the look-up.
fn passes(q: &SearchOptions, p: &Posting) -> bool {
    if !q.kinds.is_empty() && !q.kinds.iter().any(|k| *k as i64 == i64::from(p.kind)) {
        return false;
    }
    match (q.since_ms, q.until_ms, p.ts_ms) {
        (None, None, _) => true,
        (_, _, None) => false,
        (since, until, Some(t)) => since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u),
    }
}
