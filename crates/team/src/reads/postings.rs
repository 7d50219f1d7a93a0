//! The top of a search of one word, or of several ANDed, from the words' postings
//! (`word_postings`, pg 0020): every text holding a word, with its count of it, its length and
//! its entry's time, packed about nine bytes a text (`pg::postings`); for several words, the
//! texts of the word with the fewest that every other word's postings hold too, with each
//! word's count. Each is scored exactly (the arithmetic of scoring it from its
//! body), all are sorted, and the best are looked up with their entries and sessions under the
//! search's filters into the hits the local rules show (`ranked::walk`: `--branch`, copies,
//! `--limit`); a posting whose text is gone (its transcript rewritten or removed) is not found
//! there and drops out. No heap page of `entry_text` is read per match, which is what a common
//! word's search cost before (`bounded.rs`).
//!
//! Taken when every source the search reads has its postings (`sources.postings`), the reader
//! reads every row (a limited one reads no postings), the query is words ANDed (no phrase of
//! several words, prefix, `OR` or `NOT`); and
//! given up (for `heads.rs` and `bounded.rs`) when the filters keep so few of the best texts
//! that [`MOST_LOOKED_UP`] are looked up without filling the hits: those ways filter on the
//! server.

use postgres::Transaction;

use super::ranked::{sort, walk, Keyed, Phrase, Prepared};
use super::search::On;
use super::unlisted::Mode;
use crate::pg::postings::{decode, Posting};
use crate::pg::server_err;
use pidx_core::error::{Error, Result};
use pidx_core::query::search::{blend, Hit, SearchOptions};

/// A text among every source's: its source (an index into the rows' sources), file, entry, kind.
type Key = (u32, i64, i64, i16);

/// Texts looked up at most before a selective filter hands the search to the ways that
/// filter on the server.
const MOST_LOOKED_UP: usize = 20_000;

/// The hits of a search of one word, or of several ANDed, from their postings, or `None` when
/// this way does not apply (see the module).
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
    let mode = Mode::now();
    if !mode.postings() {
        return Ok(None);
    }
    let one_word = |ph: &Phrase| ph.words.len() == 1 && !ph.prefix;
    if !crate::pg::words_posted()
        || !p.and_only
        || q.limit == 0
        || p.phrases.is_empty()
        || p.phrases.len() != p.facts.each.len()
        || !p.phrases.iter().all(one_word)
    {
        return mode.not_posted();
    }
    if !posted(tx, on)? {
        return mode.not_posted();
    }
    // Each phrase's word, each word read once.
    let mut words: Vec<String> = p.phrases.iter().map(|ph| ph.words[0].clone()).collect();
    words.sort();
    words.dedup();
    let slot: Vec<usize> = (p.phrases.iter())
        .map(|ph| words.binary_search(&ph.words[0]).unwrap_or(0))
        .collect();
    let rows = tx
        .query(
            "SELECT source, term, data FROM word_postings
             WHERE term = ANY($1) AND ($2::text IS NULL OR source = $2)",
            &[&words, &on.source],
        )
        .map_err(server_err)?;
    // Sources as indexes into `sources`, so that a million postings hold no string each.
    let mut sources: Vec<String> = Vec::new();
    let mut each: Vec<Vec<(u32, Posting)>> = vec![Vec::new(); words.len()];
    for r in &rows {
        let (source, term, data): (String, String, &[u8]) = (r.get(0), r.get(1), r.get(2));
        let Ok(w) = words.binary_search(&term) else {
            continue;
        };
        let at = match sources.iter().position(|s| *s == source) {
            Some(at) => at,
            None => {
                sources.push(source.clone());
                sources.len() - 1
            }
        } as u32;
        let list = &mut each[w];
        if !decode(data, |posting| list.push((at, posting))) {
            return Err(Error::Server(format!(
                "the server's postings of a word for source {source} do not decode (pg 0020)"
            )));
        }
    }
    let mut scored: Vec<(f64, u32, Posting)> = Vec::new();
    let score = |tfs: &[i64], posting: &Posting| {
        -p.facts.sum.score(tfs, i64::from(posting.ntok)) * blend(posting.ts_ms, p.now_ms)
    };
    if let [list] = each.as_slice() {
        let tfs_of = |posting: &Posting| vec![i64::from(posting.tf); slot.len()];
        for &(at, posting) in list.iter().filter(|(_, posting)| passes(q, posting)) {
            scored.push((score(&tfs_of(&posting), &posting), at, posting));
        }
    } else {
        // The texts holding every word: those of the word with the fewest, then each other
        // word's count in them.
        let fewest = (0..each.len()).min_by_key(|&w| each[w].len()).unwrap_or(0);
        let key = |at: u32, posting: &Posting| (at, posting.fid, posting.seq, posting.kind);
        let mut counts: std::collections::HashMap<Key, (Posting, Vec<u32>)> = (each[fewest].iter())
            .filter(|(_, posting)| passes(q, posting))
            .map(|&(at, posting)| {
                let mut tfs = vec![0; words.len()];
                tfs[fewest] = posting.tf;
                (key(at, &posting), (posting, tfs))
            })
            .collect();
        for (w, list) in each.iter().enumerate().filter(|(w, _)| *w != fewest) {
            for (at, posting) in list {
                if let Some((_, tfs)) = counts.get_mut(&key(*at, posting)) {
                    tfs[w] = posting.tf;
                }
            }
        }
        for ((at, ..), (posting, tfs)) in counts {
            if tfs.iter().all(|&tf| tf > 0) {
                let tfs: Vec<i64> = slot.iter().map(|&w| i64::from(tfs[w])).collect();
                scored.push((score(&tfs, &posting), at, posting));
            }
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
