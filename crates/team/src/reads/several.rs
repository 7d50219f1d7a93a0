//! The top of a search of several words, or of phrases, from the texts listed under their words
//! (`text_heads`, pg 0006), as `heads.rs` does for one word. FTS5 scores an AND of phrases as
//! the sum of each phrase's bm25 with its own idf (`fts5::Bm25Sum`), a phrase's count in a text
//! being the places it starts there. A phrase starts at most as often as its least word occurs,
//! and a text's impact grows with the count, so a phrase's part in a text is at most its idf
//! times the least impact of its words there; a word the text is not listed under has an
//! impact under `MIN_IMPACT` at `AVGDL` (at the reader's mean length, at most what
//! `fts5::impact_below` says: `Bm25::most_below`). So:
//!
//! - a text listed under no word of a phrase, or under only some of them, gives that phrase at
//!   most the phrase's unlisted bound; a text that is not listed under every word of at least
//!   one phrase scores at most the sum of the bounds (times the best recency weight);
//! - the others (the candidates) are bounded from their listed counts and walked best bound
//!   first, 64 then four times more at a time: their entries looked up under the search's
//!   filters and scored exactly, from their listed counts when every phrase is one word listed
//!   there, else from their bodies split again (the count of each phrase; a text missing one is
//!   no match);
//! - the exact scores above both the next candidate's bound and the unlisted sum are the first
//!   hits of every match, in order; once they fill the top (`ranked::Shown`) the search ends.
//!
//! Rows under a word whose impact times recency is below the unlisted bound are not read back
//! (the server tests it, as `heads.rs` does): a text whose row was left so counts as not listed
//! under that word, its impact being under the bound too. What this does not save is each
//! phrase's idf: its count of texts, counted by `ranked::prepare` (for a phrase of several
//! words, by reading the texts holding all its words); see docs/team.md.

use std::collections::HashMap;

use postgres::Transaction;

use super::ranked::{looked_up, sort, Phrase, Prepared, Ranked, Scored, Shown, Wanted};
use super::search::On;
use super::unlisted::{chunks, most_recency, Mode, ROOM};
use crate::pg::heads::{AVGDL, MIN_IMPACT};
use crate::pg::server_err;
use crate::pg::words::shown_tokens;
use pidx_core::error::Result;
use pidx_core::query::search::{blend, Hit, SearchOptions};
use pidx_core::store::fts5::impact_below;

/// A text on the server: source, file, entry and kind.
type Key = (String, i64, i64, i16);

/// A text listed under some of the query's words: their counts, its length and time.
#[derive(Default)]
struct Listed {
    tfs: HashMap<String, i32>,
    ntok: i32,
    ts_ms: Option<i64>,
}

/// A candidate: the most it can score, and its exact score when its listed counts tell it.
struct Candidate {
    key: Key,
    most: f64,
    exact: Option<f64>,
}

impl Ranked for Candidate {
    /// By the most it can score.
    fn order(&self) -> (f64, i64, i64, i16) {
        (self.most, self.key.1, self.key.2, self.key.3)
    }
}

impl Wanted for Candidate {
    fn key(&self) -> (&str, i64, i64, i16) {
        let (source, fid, seq, kind) = &self.key;
        (source, *fid, *seq, *kind)
    }

    /// Its body is read, and scored, when its listed counts do not tell its score.
    fn known(&self) -> Option<f64> {
        self.exact
    }
}

/// The hits of an AND of phrases (but one word alone) found from the texts listed under their
/// words, or `None` when they cannot settle them (see the module).
///
/// # Errors
/// Server errors; with `PIDX_PG_HEADS=only`, a search they cannot settle.
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    p: &Prepared,
) -> Result<Option<Vec<Hit>>> {
    let mode = Mode::now();
    let prefix = p.phrases.iter().any(|ph| ph.prefix);
    if !p.and_only || prefix || p.phrases.is_empty() || q.limit == 0 || mode.off() {
        return Ok(None);
    }
    let recency = most_recency(tx, q, p.now_ms)?;
    // Each phrase's most in a text not listed under all its words, before recency.
    let unlisted: Vec<f64> = p
        .facts
        .each
        .iter()
        .map(|b| b.most_below(MIN_IMPACT, AVGDL))
        .collect();
    let bound = unlisted.iter().sum::<f64>() * recency * ROOM;
    let candidates = candidates(tx, on, p, &unlisted, recency, bound)?;
    let mut scored: Vec<Scored> = Vec::new();
    let mut shown = Shown::new(tx, q)?;
    // The best scores above every bound still unread are final: they are shown once each.
    let mut fed = 0;
    for range in chunks(candidates.len()) {
        // What no text still unread can beat.
        let over = candidates
            .get(range.end)
            .map_or(0.0, |c| c.most * ROOM)
            .max(bound);
        scored.extend(looked_up(
            tx,
            on,
            q,
            &candidates[range],
            |body, ntok, ts_ms| score(&p.phrases, p, body, ntok, ts_ms),
        )?);
        sort(&mut scored);
        let settled = scored.iter().take_while(|s| s.relevance > over).count();
        if shown.feed(tx, &scored[fed..settled])? {
            return Ok(Some(shown.hits(tx, terms)?.0));
        }
        // Too few yet, or copies or `--branch` took some: read on.
        fed = settled;
    }
    mode.unsettled()
}

/// The texts listed under every word of some phrase, each with the most it can score, best
/// first (the later row first on a tie, `ranked::sort`); those that cannot beat `bound` are left.
fn candidates(
    tx: &mut Transaction,
    on: &On,
    p: &Prepared,
    unlisted: &[f64],
    recency: f64,
    bound: f64,
) -> Result<Vec<Candidate>> {
    let avgdl = p.facts.each[0].avgdl();
    // Rows are left out under what a text not listed has at most at the reader's mean length
    // (`unlisted`), as `heads.rs` does: a row left out is then bounded by at least what it
    // scores. A listed text's impact at a mean length under `AVGDL` is less than at `AVGDL`,
    // so a threshold of `MIN_IMPACT` there left out rows scoring over that bound (the test
    // `several_words_of_short_texts_rank_from_the_listed_texts_as_the_local_index`).
    let least = impact_below(MIN_IMPACT, AVGDL, avgdl) * recency * (1.0 - 1e-6);
    let mut all: Vec<String> = p.phrases.iter().flat_map(|ph| ph.words.clone()).collect();
    all.sort();
    all.dedup();
    // A row left out here has an impact times recency under `least`, so under the unlisted
    // bound: the same as no row (the test is `heads.rs`'s).
    let rows = tx
        .query(
            "SELECT source, fid, seq, kind, term, tf, ntok, ts_ms FROM text_heads
             WHERE term = ANY($1) AND ($2::text IS NULL OR source = $2)
               AND (tf * 2.2::float8) / (tf + 1.2::float8 * (0.25::float8 + 0.75::float8 * ntok / $3::float8))
                   * (2.0::float8 / 3.0::float8 + power(0.5::float8,
                        greatest($4::int8 - coalesce(ts_ms, $4::int8 - 31536000000), 0)::float8
                        / 86400000.0::float8 / 30.0::float8) / 3.0::float8) >= $5::float8",
            &[&all, &on.source, &avgdl, &p.now_ms, &least],
        )
        .map_err(server_err)?;
    let mut listed: HashMap<Key, Listed> = HashMap::new();
    for r in &rows {
        let l = listed
            .entry((r.get(0), r.get(1), r.get(2), r.get(3)))
            .or_default();
        l.tfs.insert(r.get(4), r.get(5));
        l.ntok = r.get(6);
        l.ts_ms = r.get(7);
    }
    let mut out: Vec<Candidate> = listed
        .into_iter()
        .filter(|(_, l)| {
            // Not listed under every word of any phrase: at most the unlisted bound.
            p.phrases
                .iter()
                .any(|ph| ph.words.iter().all(|w| l.tfs.contains_key(w)))
        })
        .filter_map(|(key, l)| {
            let c = candidate(key, &l, p, unlisted, recency);
            (c.most * ROOM > bound).then_some(c)
        })
        .collect();
    sort(&mut out);
    Ok(out)
}

/// A listed text's bound: each phrase's part at most its idf times the least impact of its
/// words (a word not listed: the unlisted bound, over the text's own recency weight, as its row
/// may have been left for being under it); exact when every phrase is one listed word.
fn candidate(key: Key, l: &Listed, p: &Prepared, unlisted: &[f64], recency: f64) -> Candidate {
    let (len, weight) = (i64::from(l.ntok), blend(l.ts_ms, p.now_ms));
    let mut most = 0.0;
    for ((ph, b), u) in p.phrases.iter().zip(&p.facts.each).zip(unlisted) {
        most += ph
            .words
            .iter()
            .map(|w| match l.tfs.get(w) {
                Some(&tf) => -b.score(i64::from(tf), len),
                None => u * recency / weight,
            })
            .fold(f64::INFINITY, f64::min);
    }
    let counts: Option<Vec<i64>> = p
        .phrases
        .iter()
        .map(|ph| match ph.words.as_slice() {
            [w] => l.tfs.get(w).map(|&tf| i64::from(tf)),
            _ => None,
        })
        .collect();
    let exact = counts.map(|tfs| -p.facts.sum.score(&tfs, len) * weight);
    Candidate {
        key,
        most: exact.unwrap_or(most * weight),
        exact,
    }
}

/// A text's exact score from its body and length, or `None` when it misses a phrase (no
/// match).
fn score(
    phrases: &[Phrase],
    p: &Prepared,
    body: &str,
    ntok: i64,
    ts_ms: Option<i64>,
) -> Option<f64> {
    let tokens = shown_tokens(body);
    let tfs: Vec<i64> = phrases.iter().map(|ph| ph.count(&tokens)).collect();
    if tfs.contains(&0) {
        return None;
    }
    Some(-p.facts.sum.score(&tfs, ntok) * blend(ts_ms, p.now_ms))
}
