//! The top of a words search whose every phrase is one word or a prefix, under any
//! expression (`OR`, `NOT`, a prefix alone or ANDed: what `postings::top` leaves), from the
//! terms' postings alone (`matching::Decoded`). Each text holding a term comes with its count
//! of each (a prefix's words summed: the tokens starting with it), is matched against the
//! expression exactly on those counts (a term is in a text where its count is not 0), scored
//! with the arithmetic of scoring it from its body, and the best are looked up as
//! `postings::top` looks its best up. Against the GIN index of before pg 0026, `fil*`,
//! `filter OR value` and `the -filter` at 10,000 sessions took 56, 38 and 45 ms against 882,
//! 310 and 499 ms (docs/performance.md).

use postgres::Transaction;

use super::matching::{parse, readable, Decoded, Key};
use super::postings::{keyed_of, passes, Best, MOST_LOOKED_UP};
use super::ranked::{sort, walk, Prepared};
use super::search::On;
use crate::pg::postings::Posting;
use pidx_core::error::Result;
use pidx_core::query::search::{blend, Hit, SearchOptions};

/// The hits of a words search whose every phrase is one word or a prefix, under any
/// expression (`OR`, `NOT`, a prefix: what `postings::top` leaves), scored from the postings
/// alone: each text holding a term with its count of each (a prefix's words summed), matched
/// against the expression exactly (a term counts where its count is not 0) and scored with the
/// arithmetic of scoring it from its body; the best looked up as `postings::top` does.
/// `None` when this way does not apply (a phrase of several words, the postings not
/// readable, or the filters leave too few of the best kept to fill the hits).
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
    let single = p.phrases.iter().all(|ph| ph.words.len() == 1);
    if !single || q.limit == 0 || p.phrases.len() != p.facts.each.len() {
        return Ok(None);
    }
    let Some(expr) = parse(&p.exact) else {
        return Ok(None);
    };
    let mut written = Vec::new();
    expr.terms_of(true, &mut written);
    let same = written.len() == p.phrases.len()
        && (written.iter().zip(&p.phrases))
            .all(|((w, prefix), ph)| ph.words[0] == *w && ph.prefix == *prefix);
    if !same || !readable(tx, on.source)? {
        return Ok(None);
    }
    let decoded = Decoded::read(tx, on.source, &written)?;
    let lists: Vec<Vec<(Key, Posting)>> = (written.iter())
        .map(|(w, prefix)| decoded.of(w, *prefix))
        .collect();
    let mut best = Best::new(MOST_LOOKED_UP);
    let mut heads = vec![0usize; lists.len()];
    let mut tfs = vec![0i64; lists.len()];
    // The texts of every list, each once, by key (each list is sorted by key).
    loop {
        let next = (lists.iter().zip(&heads))
            .filter_map(|(l, &h)| l.get(h).map(|t| t.0))
            .min();
        let Some(key) = next else {
            break;
        };
        let mut posting = None;
        for (i, l) in lists.iter().enumerate() {
            tfs[i] = 0;
            if let Some((k, p)) = l.get(heads[i]) {
                if *k == key {
                    tfs[i] = i64::from(p.tf);
                    posting.get_or_insert(*p);
                    heads[i] += 1;
                }
            }
        }
        let Some(posting) = posting else {
            break;
        };
        if !passes(q, &posting) || !expr.holds(&tfs, &mut 0) {
            continue;
        }
        let bm25 = -p.facts.sum.score(&tfs, i64::from(posting.ntok));
        if !best.beneath(bm25) {
            best.push(bm25 * blend(posting.ts_ms, p.now_ms), key);
        }
    }
    let (best, all) = best.finish();
    let mut keyed = keyed_of(best, &decoded.sources);
    sort(&mut keyed);
    match walk(tx, on, q, terms, &keyed)? {
        (hits, full) if full || all => Ok(Some(hits)),
        _ => Ok(None),
    }
}
