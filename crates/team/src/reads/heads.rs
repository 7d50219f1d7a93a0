//! The top of a one-word search without reading every text holding the word: the server's
//! analogue of the local impact blocks (`store::impacts`). Push lists each text under the words
//! whose impact in it (bm25 before the idf, at the mean length `pg::heads::AVGDL`) is at least
//! `pg::heads::MIN_IMPACT` (`text_heads`, pg 0006), with the word's count, the text's length and
//! its entry's time: all a score needs. This reads the word's listed rows (no body), scores each
//! exactly (the arithmetic of scoring it from its body), and walks them best first, looking up
//! their entries and sessions (64, then four times more each time) under the search's filters,
//! into the hits the local rules show (`ranked::shown`: `--branch`, copies, `--limit`). Only
//! the rows that can beat a text not listed come back from the server. A text not listed
//! holds the word with an impact below `MIN_IMPACT` at `AVGDL`: at the reader's mean length it
//! scores at most what `fts5::impact_below` says (`Bm25::most_below`), times the idf and the recency
//! weight of the newest entry the reader sees. Once the hits are full of listed texts scoring
//! above that, they are the first ones of every match, in the same order.
//!
//! [`search`] is the server's words search: for one word or several ANDed their postings
//! (`postings.rs`, pg 0020) when every source has them; else this way for one word,
//! `several.rs`'s for an AND of several words or phrases, else (a prefix, `OR`, `NOT`, or when
//! the listed texts cannot settle the top: too few pass the filters, or too few score above
//! the bound, a rare word or a long `--limit`) `ranked::every_match`.
//!
//! `PIDX_PG_HEADS=off` never takes these ways, `=only` makes a search they cannot settle an
//! error (the tests' proof that a search was answered from the listed texts, `unlisted.rs`).

use postgres::Transaction;

use super::ranked::{every_match, prepare, sort, walk, Facts, Keyed, Phrase};
use super::search::On;
use super::unlisted::{most_recency, Mode, ROOM};
use super::{bounded, expression, postings, several};
use crate::pg::heads::{AVGDL, MIN_IMPACT};
use crate::pg::server_err;
use pidx_core::error::Result;
use pidx_core::query::search::{blend, group_by_session, Hit, SearchOptions};
use pidx_core::store::fts5::impact_below;

/// Runs a words search, best first: from the listed texts when they settle it, else by
/// scoring every match.
///
/// # Errors
/// Server errors; a word too long for the server's index.
pub(super) fn search(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    fts: &str,
    terms: &[String],
) -> Result<Vec<Hit>> {
    let later = |phrases: &[_], and_only| {
        postings::may_answer(q, phrases, and_only) || expression::may_answer(q, phrases, and_only)
    };
    let Some(mut p) = prepare(tx, on, fts, later)? else {
        return Ok(Vec::new());
    };
    // Words ANDed from their postings; else any expression of words, prefixes and phrases
    // from theirs (`expression`; not a prefix beside a phrase of several words).
    let posted = if expression::may_answer(q, &p.phrases, p.and_only) {
        match expression::top(tx, on, q, terms, &mut p)? {
            Some(hits) => Some(hits),
            None => Mode::now().not_posted()?,
        }
    } else {
        postings::top(tx, on, q, terms, &mut p)?
    };
    // The other ways need every phrase's count of texts, which the postings may not have found.
    if posted.is_none() {
        p.count(tx, on)?;
    }
    let listed = match (posted, p.phrases.as_slice()) {
        (Some(hits), _) => Some(hits),
        (None, [one]) if one.words.len() == 1 => {
            match top(tx, on, q, terms, &p.phrases, p.and_only, &p.facts, p.now_ms)? {
                Some(hits) => Some(hits),
                None => bounded::top(tx, on, q, terms, &p)?,
            }
        }
        (None, _) => several::top(tx, on, q, terms, &p)?,
    };
    match listed {
        Some(hits) => Ok(group_by_session(hits)),
        None => every_match(tx, on, q, terms, p),
    }
}

/// The hits of a one-word search found from the word's listed texts, or `None` when they cannot
/// settle them (see the module).
///
/// # Errors
/// Server errors.
#[allow(clippy::too_many_arguments)]
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    phrases: &[Phrase],
    and_only: bool,
    facts: &Facts,
    now_ms: i64,
) -> Result<Option<Vec<Hit>>> {
    let [p] = phrases else { return Ok(None) };
    let ([word], [one]) = (p.words.as_slice(), facts.each.as_slice()) else {
        return Ok(None);
    };
    let mode = Mode::now();
    if !and_only || p.prefix || q.limit == 0 || mode.off() {
        return Ok(None);
    }
    // The most a text not listed scores: an impact under MIN_IMPACT, the newest entry this
    // reader sees.
    let most_recency = most_recency(tx, q, now_ms)?;
    let unlisted = one.most_below(MIN_IMPACT, AVGDL) * most_recency * ROOM;
    // Only the rows that can beat it come back: the same test as below (the idf on both
    // sides left out), computed by the server a little loosely, then again exactly here.
    let least = impact_below(MIN_IMPACT, AVGDL, one.avgdl()) * most_recency * (1.0 - 1e-6);
    let rows = tx
        .query(
            "SELECT source, fid, seq, kind, tf, ntok, ts_ms FROM text_heads
             WHERE term = $1 AND ($2::text IS NULL OR source = $2)
               AND (tf * 2.2::float8) / (tf + 1.2::float8 * (0.25::float8 + 0.75::float8 * ntok / $3::float8))
                   * (2.0::float8 / 3.0::float8 + power(0.5::float8,
                        greatest($4::int8 - coalesce(ts_ms, $4::int8 - 31536000000), 0)::float8
                        / 86400000.0::float8 / 30.0::float8) / 3.0::float8) >= $5::float8",
            &[word, &on.source, &one.avgdl(), &now_ms, &least],
        )
        .map_err(server_err)?;
    let mut listed: Vec<Keyed> = rows
        .iter()
        .map(|r| {
            let (tf, ntok): (i32, i32) = (r.get(4), r.get(5));
            let ts_ms: Option<i64> = r.get(6);
            let relevance =
                -facts.sum.score(&[i64::from(tf)], i64::from(ntok)) * blend(ts_ms, now_ms);
            Keyed::of(r, relevance)
        })
        .filter(|l| l.relevance > unlisted)
        .collect();
    sort(&mut listed);
    match walk(tx, on, q, terms, &listed)? {
        (hits, true) => Ok(Some(hits)),
        _ => mode.unsettled(),
    }
}
