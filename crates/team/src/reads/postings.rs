//! The top of a search of one word, or of several ANDed, from the words' postings
//! (`word_postings`, pg 0020): every text holding a word, with its count of it, its length and
//! its entry's time, about nine bytes a text (`pg::postings`); for several words, the texts of
//! the word with the fewest that every other word's postings hold too, with each word's count.
//! Each is scored exactly (the arithmetic of scoring it from its body), the best
//! [`MOST_LOOKED_UP`] kept and sorted, and looked up with their entries and sessions under the
//! search's filters into the hits the local rules show (`ranked::walk`: `--branch`, copies,
//! `--limit`); a posting whose text is gone (its transcript rewritten or removed) is not found
//! there and drops out. No heap page of `entry_text` is read per match, which is what a common
//! word's search cost before (`bounded.rs`).
//!
//! Taken when every source the search reads has its postings (`sources.postings`), the reader
//! reads every row (a limited one reads no postings), and the query is words ANDed (no phrase
//! of several words, prefix, `OR` or `NOT`); given up (for `heads.rs`, `bounded.rs` and
//! `several.rs`) when more texts hold the words than are kept and the filters leave too few
//! of the kept ones to fill the hits: those ways filter on the server.

use postgres::Transaction;

use super::ranked::{best_first, sort, walk, Keyed, Phrase, Prepared, Ranked};
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
    let score = |tfs: &[i64], posting: &Posting| {
        -p.facts.sum.score(tfs, i64::from(posting.ntok)) * blend(posting.ts_ms, p.now_ms)
    };
    let mut best = Best::default();
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
        // One word: each posting scored as it is read (a common word's millions are never
        // held); several: each word's postings held for the intersection below.
        let whole = if words.len() == 1 {
            // Each phrase is this word (a query may repeat it): every count is the posting's.
            let mut tfs = vec![0; slot.len()];
            decode(data, |posting| {
                if passes(q, &posting) {
                    tfs.fill(i64::from(posting.tf));
                    best.push(score(&tfs, &posting), key(at, &posting));
                }
            })
        } else {
            let list = &mut each[w];
            decode(data, |posting| list.push((at, posting)))
        };
        if !whole {
            return Err(Error::Server(format!(
                "the server's postings of a word for source {source} do not decode (pg 0020)"
            )));
        }
    }
    if words.len() > 1 {
        // The texts holding every word: those of the word with the fewest, then each other
        // word's count in them.
        let fewest = (0..each.len()).min_by_key(|&w| each[w].len()).unwrap_or(0);
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
        for (k, (posting, tfs)) in counts {
            if tfs.iter().all(|&tf| tf > 0) {
                let tfs: Vec<i64> = slot.iter().map(|&w| i64::from(tfs[w])).collect();
                best.push(score(&tfs, &posting), k);
            }
        }
    }
    // Every text holding the words is looked up when there are few enough, else the best.
    let (best, all) = best.finish();
    let mut keyed: Vec<Keyed> = best
        .into_iter()
        .map(|(relevance, (at, fid, seq, kind))| Keyed {
            relevance,
            source: sources[at as usize].clone(),
            fid,
            seq,
            kind,
        })
        .collect();
    sort(&mut keyed);
    match walk(tx, on, q, terms, &keyed)? {
        (hits, full) if full || all => Ok(Some(hits)),
        _ => mode.not_posted(),
    }
}

fn key(at: u32, posting: &Posting) -> Key {
    (at, posting.fid, posting.seq, posting.kind)
}

/// The [`MOST_LOOKED_UP`] best texts of those pushed, cut down to them whenever it holds a
/// million: a common word's millions of postings are never all held.
#[derive(Default)]
struct Best {
    texts: Vec<(f64, Key)>,
    cut: bool,
}

impl Best {
    const HELD: usize = 1 << 20;

    fn push(&mut self, relevance: f64, key: Key) {
        self.texts.push((relevance, key));
        if self.texts.len() >= Self::HELD {
            self.cut_to_best();
        }
    }

    /// Best first, then the later text (`ranked::sort`'s order, by which ties are cut too).
    fn cut_to_best(&mut self) {
        if self.texts.len() > MOST_LOOKED_UP {
            self.texts
                .select_nth_unstable_by(MOST_LOOKED_UP, best_first);
            self.texts.truncate(MOST_LOOKED_UP);
            self.cut = true;
        }
    }

    /// The best, and whether they are every text pushed.
    fn finish(mut self) -> (Vec<(f64, Key)>, bool) {
        self.cut_to_best();
        (self.texts, !self.cut)
    }
}

impl Ranked for (f64, Key) {
    fn order(&self) -> (f64, i64, i64, i16) {
        (self.0, self.1 .1, self.1 .2, self.1 .3)
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
