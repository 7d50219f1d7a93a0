//! The top of a words search under any expression (`OR`, `NOT`, a prefix alone or ANDed: what
//! `postings::top` leaves), from the terms' postings alone. Each text holding a phrase comes
//! with its count of each (a prefix's words summed: the tokens starting with it, from
//! `matching::Decoded`; a phrase of several words, its places from its words' positions, from
//! `postings::each_phrase`), is matched against the expression exactly on those counts (a
//! phrase is in a text where its count is not 0), scored with the arithmetic of scoring it from
//! its body, and the best are looked up as `postings::top` looks its best up. Against the GIN
//! index of before pg 0026, `fil*`, `filter OR value` and `the -filter` at 10,000 sessions took
//! 56, 38 and 45 ms against 882, 310 and 499 ms; a phrase of several words under an `OR` or a
//! `NOT` was scored from every body holding its words (`function -"the borrow"` 5.5 s at
//! 100,000 sessions; docs/performance.md).

use postgres::Transaction;

use super::matching::{live, parse, readable, Decoded, Key};
use super::postings::{each_phrase, keyed_of, passes, Best, MOST_LOOKED_UP};
use super::ranked::{sort, walk, Phrase, Prepared};
use super::search::On;
use super::unlisted::Mode;
use crate::pg::postings::Posting;
use pidx_core::error::Result;
use pidx_core::query::search::{blend, Hit, SearchOptions};

/// Whether this way may answer a search of these phrases (before the server is asked, so that
/// the counts of texts of its phrases of several words are left to it: `ranked::prepare`'s
/// `later`): what `postings::top` leaves (not only ANDed, or a prefix), hits asked for, no
/// prefix beside a phrase of several words, and the server's postings (with their positions
/// for such a phrase).
pub(super) fn may_answer(q: &SearchOptions, phrases: &[Phrase], and_only: bool) -> bool {
    let several = phrases.iter().any(|ph| ph.words.len() > 1);
    let prefix = phrases.iter().any(|ph| ph.prefix);
    Mode::now().postings()
        && crate::pg::words_posted()
        && q.limit != 0
        && !phrases.is_empty()
        && (!and_only || prefix)
        && !(several && prefix)
        && (!several || crate::pg::words_positioned())
}

/// The hits of a words search under any expression (`OR`, `NOT`, a prefix: what
/// `postings::top` leaves), scored from the postings alone: each text holding a phrase with its
/// count of each (a prefix's words summed, a phrase's places), matched against the expression
/// exactly (a phrase counts where its count is not 0) and scored with the arithmetic of
/// scoring it from its body; the best looked up as `postings::top` does. The counts of texts
/// of the phrases of several words and of the prefixes that `p` was prepared without are found
/// here (`Prepared::counted`: the texts holding each, of transcripts still on the server; a
/// prefix's from the postings read here, not read a second time for it). `None`
/// when this way does not apply (a prefix beside a phrase of several words, the postings not
/// readable, or the filters leave too few of the best kept to fill the hits).
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    p: &mut Prepared,
) -> Result<Option<Vec<Hit>>> {
    if q.limit == 0 || p.phrases.len() != p.facts.each.len() {
        return Ok(None);
    }
    let Some(expr) = parse(&p.exact) else {
        return Ok(None);
    };
    let mut written = Vec::new();
    expr.phrases(&mut written);
    let same = written.len() == p.phrases.len()
        && (written.iter().zip(&p.phrases))
            .all(|((words, prefix), ph)| ph.words == *words && ph.prefix == *prefix);
    // A text holding none of the phrases must not match (else every text is a candidate).
    if !same || expr.holds(&vec![0; written.len()], &mut 0) || !readable(tx, on.source)? {
        return Ok(None);
    }
    let several = written.iter().any(|(words, _)| words.len() > 1);
    let lists: Vec<Vec<(Key, Posting)>>;
    let sources: Vec<String>;
    if several {
        if written.iter().any(|(_, prefix)| *prefix) || !crate::pg::words_positioned() {
            return Ok(None);
        }
        let phrases: Vec<Vec<String>> = written.iter().map(|(w, _)| w.clone()).collect();
        let Some((read, each)) = each_phrase(tx, on.source, &phrases)? else {
            return Ok(None);
        };
        lists = (each.into_iter())
            .map(|texts| {
                (texts.into_iter())
                    .map(|(k, n, mut posting)| {
                        posting.tf = u32::try_from(n).unwrap_or(u32::MAX);
                        (k, posting)
                    })
                    .collect()
            })
            .collect();
        sources = read;
    } else {
        let terms: Vec<(String, bool)> = (written.iter())
            .map(|(w, prefix)| (w[0].clone(), *prefix))
            .collect();
        let decoded = Decoded::read(tx, on.source, &terms)?;
        lists = (terms.iter())
            .map(|(w, prefix)| decoded.of(w, *prefix))
            .collect();
        sources = decoded.sources;
    }
    if !p.counted {
        // The counts `prepare` left: each such phrase's texts, those just read (a phrase's
        // places, a prefix's words' postings), of transcripts still on the server.
        let mut hits = Vec::with_capacity(lists.len());
        for (i, texts) in lists.iter().enumerate() {
            if !p.phrases[i].counted_later() {
                hits.push(p.hits[i]);
                continue;
            }
            let keys: Vec<Key> = texts.iter().map(|t| t.0).collect();
            hits.push(live(tx, &sources, &keys)?);
        }
        p.counted(&hits);
    }
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
    let mut keyed = keyed_of(best, &sources);
    sort(&mut keyed);
    match walk(tx, on, q, terms, &keyed)? {
        (hits, full) if full || all => Ok(Some(hits)),
        _ => Ok(None),
    }
}
