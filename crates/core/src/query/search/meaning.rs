//! Search by meaning: the query embedded by the static model; every passage's sign code
//! (migration 0025) compared with the query's in one scan of the code blocks, the nearest texts
//! then scored exactly by cosine over their passages' int8 vectors (migration 0024), each text
//! ranked by its best passage, then joined through the same filters, copies and snippets as a
//! words search (`One`, `confirm`). Hybrid ranking puts what the words found first and adds
//! what only meaning found after it ([`fuse`]).
//!
//! Scores are *centered* cosines ([`Scorer`]): query and passage are both taken relative to
//! the index's mean vector (`embed_center`) before the cosine. A static model's vectors all
//! lean the same way (every text is a mean of token rows), so plain cosines of unrelated texts
//! are high and bunched (a nonsense word scored 0.3-0.5 against everything); centered, unrelated
//! texts score near 0 and the floor (`meaning::embedder::FLOOR`) means the same for every
//! query. A meaning hit is only ever one above the floor.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use rusqlite::{Connection, OptionalExtension};

use super::{confirm, group_by_session, one, span, Candidate, Hit, SearchOptions, Snippet};
use crate::error::Result;
use crate::meaning::{codes, Model};
use crate::pi::text::TextKind;
use crate::store::schema::fts_rowid;
use crate::store::Scope;

/// What the meaning half of a search did (`search --explain`).
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MeaningStats {
    /// The floor a text had to reach.
    pub floor: f32,
    /// Texts scored exactly.
    pub scored: usize,
    /// Of those, how many reached the floor.
    pub above_floor: usize,
    /// The best similarity seen, above the floor or not.
    pub best: Option<f32>,
    /// Meaning hits kept (after filters, copies and the limit).
    pub hits: usize,
    /// The query holds no word the model knows whole, so meaning was not asked
    /// ([`Model::knows_a_word`]).
    pub no_known_word: bool,
}

impl MeaningStats {
    /// Counts a text scored `s` (the team server's search by meaning counts its own).
    pub fn saw(&mut self, s: f32) {
        self.scored += 1;
        if s >= self.floor {
            self.above_floor += 1;
        }
        self.best = Some(self.best.map_or(s, |b| b.max(s)));
    }
}

/// A query's similarity to stored passages: the cosine of `q - c` and `v - c`, `c` the index's
/// mean vector, computed from the dot products with the int8 vector (no centered copy stored).
pub struct Scorer {
    q: Vec<f32>,
    c: Vec<f32>,
    qc: f32,
    cc: f32,
    qn: f32,
}

impl Scorer {
    /// The scorer of unit query vector `q` about `center` (empty: no centering, plain cosine).
    pub fn new(q: &[f32], center: &[f32]) -> Scorer {
        let c = if center.len() == q.len() {
            center.to_vec()
        } else {
            vec![0.0; q.len()]
        };
        let qc = dot(q, &c);
        let cc = dot(&c, &c);
        let qq = dot(q, q);
        Scorer {
            q: q.to_vec(),
            qn: (qq - 2.0 * qc + cc).max(1e-12).sqrt(),
            c,
            qc,
            cc,
        }
    }

    /// The similarity of a stored passage (its int8 components and scale).
    pub fn score(&self, scale: f64, vec: &[u8]) -> f32 {
        let scale = scale as f32;
        let qv = dot_i8(&self.q, vec) * scale;
        let cv = dot_i8(&self.c, vec) * scale;
        let vv = vec.iter().map(|b| (*b as i8 as f32).powi(2)).sum::<f32>() * scale * scale;
        let vn = (vv - 2.0 * cv + self.cc).max(1e-12).sqrt();
        (qv - self.qc - cv + self.cc) / (self.qn * vn)
    }

    /// The similarity of two unit vectors, centered the same way (`similar`'s sessions).
    pub fn of_vectors(a: &[f32], b: &[f32], center: &[f32]) -> f32 {
        let s = Scorer::new(a, center);
        let bc = dot(b, &s.c);
        let bn = (dot(b, b) - 2.0 * bc + s.cc).max(1e-12).sqrt();
        (dot(a, b) - s.qc - bc + s.cc) / (s.qn * bn)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The index's mean vector (migration 0025), empty when nothing is embedded.
///
/// # Errors
/// Index errors.
pub fn center(conn: &Connection) -> Result<Vec<f32>> {
    let center: Option<Vec<u8>> = conn
        .query_row("SELECT v FROM embed_center", [], |r| r.get(0))
        .optional()?;
    Ok(center.map(|c| codes::center_of(&c)).unwrap_or_default())
}

/// With `--branch`, texts taken from the vector scan per hit asked for, before the branch
/// filter thins them.
const OVERSAMPLE: usize = 20;

/// The best texts for `query` by meaning, best first (with their cosine as the score).
///
/// # Errors
/// Index errors; `Io` when a session file cannot be read back.
pub fn search_meaning(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    model: &Model,
    query: &str,
    stop: &AtomicBool,
) -> Result<Vec<Hit>> {
    Ok(search_meaning_stats(conn, scope, opts, model, query, stop)?.0)
}

/// [`search_meaning`], with what it did. Only texts at or above the floor are hits, each
/// marked `By::Meaning` with its similarity.
///
/// # Errors
/// As [`search_meaning`].
pub fn search_meaning_stats(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    model: &Model,
    query: &str,
    stop: &AtomicBool,
) -> Result<(Vec<Hit>, MeaningStats)> {
    let stats = RefCell::new(MeaningStats {
        floor: crate::meaning::embedder::floor(),
        ..MeaningStats::default()
    });
    let mut hits = meaning_hits(conn, scope, opts, model, query, stop, &stats)?;
    for h in &mut hits {
        h.by = super::By::Meaning;
        h.similarity = Some(h.score);
    }
    let mut stats = stats.into_inner();
    stats.hits = hits.len();
    Ok((hits, stats))
}

fn meaning_hits(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    model: &Model,
    query: &str,
    stop: &AtomicBool,
    stats: &RefCell<MeaningStats>,
) -> Result<Vec<Hit>> {
    let _snapshot = crate::store::snapshot::Snapshot::begin(conn)?;
    if !model.knows_a_word(query) {
        stats.borrow_mut().no_known_word = true;
        return Ok(Vec::new());
    }
    let Some(q) = model.embed(query) else {
        return Ok(Vec::new());
    };
    let span = span::Span::of(conn, scope, opts)?;
    if span.as_ref().is_some_and(span::Span::is_empty) {
        return Ok(Vec::new());
    }
    let mut one = one::One::new(conn, scope, opts)?;
    let snippet = |text: &str| Some(Snippet::around(text, None));
    // Joined one at a time as `confirm` asks for them: it stops at the limit, so a search
    // joins a few dozen texts, not the whole oversampled window.
    let joined = ranked(conn, &q, opts, span.as_ref(), stats)?
        .map(|scored| {
            let (rowid, score) = scored?;
            Ok(one.join(rowid, 0.0)?.map(|mut c| {
                c.relevance = score as f64;
                c
            }))
        })
        .filter_map(Result::transpose);
    let (hits, _) = if opts.branch {
        let want = opts.limit.saturating_mul(OVERSAMPLE).max(200);
        let mut candidates: Vec<Candidate> = joined.take(want).collect::<Result<_>>()?;
        super::keep_current_paths(conn, &mut candidates)?;
        confirm(
            conn,
            candidates.into_iter().map(Ok),
            opts.limit,
            stop,
            None,
            snippet,
        )?
    } else {
        confirm(conn, joined, opts.limit, stop, None, snippet)?
    };
    Ok(group_by_session(hits))
}

/// Texts (full-text rowids) with their cosine to a query, best first.
type Scored<'c> = Box<dyn Iterator<Item = Result<(i64, f32)>> + 'c>;

/// The texts in `span` by their best passage's cosine to `q`, best first. Narrowed to one
/// session, its passages are read and scored exactly; otherwise the sign codes of every
/// passage (migration 0025) are scanned and the nearest are scored exactly ([`Reranked`]).
fn ranked<'c>(
    conn: &'c Connection,
    q: &[f32],
    opts: &SearchOptions,
    span: Option<&span::Span>,
    stats: &'c RefCell<MeaningStats>,
) -> Result<Scored<'c>> {
    let scorer = Scorer::new(q, &center(conn)?);
    let kinds: Vec<i64> = opts.kinds.iter().map(|k| *k as i64).collect();
    let wanted = |rowid: i64| {
        (kinds.is_empty() || kinds.contains(&(crate::store::schema::fts_entry(rowid).1 as i64)))
            && span.is_none_or(|s| s.holds(rowid))
    };
    if let Some(file_id) = opts.file_id {
        let scored = exact(conn, &scorer, file_id, wanted)?;
        let mut st = stats.borrow_mut();
        scored.iter().for_each(|(_, s)| st.saw(*s));
        return Ok(Box::new(
            best_first(conn, scored)?
                .take_while(|(_, s)| *s >= stats.borrow().floor)
                .map(Ok),
        ));
    }
    let near = nearest_codes(conn, q, &scorer.c, wanted)?;
    let mut r = Reranked::new(conn, scorer, near, opts.limit);
    r.stats = Some(stats);
    Ok(Box::new(r))
}

/// Every text of session file `file_id` that `wanted` keeps, with its best passage's cosine to
/// `q`, in index order.
fn exact(
    conn: &Connection,
    scorer: &Scorer,
    file_id: i64,
    wanted: impl Fn(i64) -> bool,
) -> Result<Vec<(i64, f32)>> {
    let mut stmt =
        conn.prepare_cached("SELECT rid, kind, scale, vec FROM passages WHERE file_id = ?1")?;
    let mut rows = stmt.query([file_id])?;
    // A text's passages are consecutive rows (the embedding pass inserts them together and the
    // scan is in insertion order): its best passage is kept without a map.
    let mut best: Vec<(i64, f32)> = Vec::new();
    while let Some(r) = rows.next()? {
        let rowid = fts_rowid(r.get(0)?, TextKind::from_bits(r.get(1)?));
        if !wanted(rowid) {
            continue;
        }
        let scale: f64 = r.get(2)?;
        let vec = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let score = scorer.score(scale, vec);
        match best.last_mut() {
            Some(last) if last.0 == rowid => last.1 = last.1.max(score),
            _ => best.push((rowid, score)),
        }
    }
    Ok(best)
}

/// `best` by score, best first; texts of one score (the same words in several sessions) the
/// newest entry first, then the later row. By time, not by row alone: the team server holds
/// other row numbers, and gives the same order (`reads::meaning`).
fn best_first(
    conn: &Connection,
    mut best: Vec<(i64, f32)>,
) -> Result<std::vec::IntoIter<(i64, f32)>> {
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut stmt = conn.prepare_cached("SELECT ts_ms FROM entries WHERE rid = ?1")?;
    let mut at = 0;
    while at < best.len() {
        let end = at + best[at..].iter().take_while(|x| x.1 == best[at].1).count();
        if end - at > 1 {
            let mut tied = Vec::with_capacity(end - at);
            for &(rowid, score) in &best[at..end] {
                let ts: Option<i64> = stmt
                    .query_row([crate::store::schema::fts_entry(rowid).0], |r| r.get(0))
                    .optional()?
                    .flatten();
                tied.push((ts, rowid, score));
            }
            tied.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            for (slot, (_, rowid, score)) in best[at..end].iter_mut().zip(tied) {
                *slot = (rowid, score);
            }
        }
        at = end;
    }
    Ok(best.into_iter())
}

/// Every text `wanted` keeps with the Hamming distance of its nearest passage's sign code to
/// `q`'s, in block order (a text's codes are consecutive, except a dead code's copies).
fn nearest_codes(
    conn: &Connection,
    q: &[f32],
    center: &[f32],
    wanted: impl Fn(i64) -> bool,
) -> Result<Vec<(u32, i64)>> {
    // The codes are taken about the index's center (migration 0025; `ingest::embed` records it).
    let code = codes::of_f32(q, center);
    let mut near: Vec<(u32, i64)> = Vec::new();
    let mut stmt = conn.prepare_cached("SELECT rowids, codes FROM passage_codes")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let rowids = r.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
        let bits = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        codes::distances_any(&code, bits, |at, d| {
            let Some(b) = rowids.get(at * 8..at * 8 + 8) else {
                return;
            };
            let rowid = i64::from_le_bytes(b.try_into().unwrap_or_default());
            match near.last_mut() {
                Some(last) if last.1 == rowid => last.0 = last.0.min(d),
                _ if wanted(rowid) => near.push((d, rowid)),
                _ => {}
            }
        });
    }
    Ok(near)
}

/// Texts scored exactly in rounds, nearest codes first: each round takes the next
/// [`CANDIDATES`] (or more) texts by code distance, scores their passages' int8 vectors and
/// hands them out best first. A search stops after its limit, so one round nearly always
/// serves it; filters that reject many texts ask for more rounds.
struct Reranked<'c> {
    conn: &'c Connection,
    scorer: Scorer,
    near: Vec<(u32, i64)>,
    /// Keep only texts at or above the floor, counting what was scored; `None` (the
    /// benchmark's exact-top comparisons) keeps every text.
    stats: Option<&'c RefCell<MeaningStats>>,
    taken: usize,
    round: usize,
    ready: std::vec::IntoIter<(i64, f32)>,
    seen: std::collections::HashSet<i64>,
}

/// Texts scored exactly in a search's first round at least: the sign codes' order is rough,
/// so the best texts by cosine are among the nearest few hundred by code, rarely the nearest
/// few (examples/bench_meaning measures how often the exact top is missed).
const CANDIDATES: usize = 500;

impl<'c> Reranked<'c> {
    fn new(conn: &'c Connection, scorer: Scorer, near: Vec<(u32, i64)>, limit: usize) -> Self {
        Reranked {
            conn,
            scorer,
            near,
            stats: None,
            taken: 0,
            round: CANDIDATES.max(limit.saturating_mul(10)),
            ready: Vec::new().into_iter(),
            seen: std::collections::HashSet::new(),
        }
    }

    /// The next round's texts, scored and sorted.
    fn next_round(&mut self) -> Result<Vec<(i64, f32)>> {
        let rest = &mut self.near[self.taken..];
        let mut n = self.round.min(rest.len());
        if n < rest.len() {
            rest.select_nth_unstable(n);
            // Every text as near as the farthest taken is taken too: which of the texts at that
            // distance (many, the distances being whole numbers) made the round would otherwise
            // depend on the rows' numbers, which the team server does not share.
            let bound = rest[..n].iter().map(|x| x.0).max().unwrap_or(0);
            let start = n;
            for i in start..rest.len() {
                if rest[i].0 <= bound {
                    rest.swap(i, n);
                    n += 1;
                }
            }
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT scale, vec FROM passages WHERE rid = ?1 AND kind = ?2")?;
        let mut out = Vec::with_capacity(n);
        for &(_, rowid) in &rest[..n] {
            if !self.seen.insert(rowid) {
                continue;
            }
            let (rid, kind) = crate::store::schema::fts_entry(rowid);
            let mut rows = stmt.query([rid, kind as i64])?;
            let mut best = None::<f32>;
            while let Some(r) = rows.next()? {
                let scale: f64 = r.get(0)?;
                let vec = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
                let s = self.scorer.score(scale, vec);
                best = Some(best.map_or(s, |b| b.max(s)));
            }
            // No passage: a dead code (its entry rewritten or deleted since).
            if let Some(s) = best {
                out.push((rowid, s));
            }
        }
        self.taken += n;
        self.round = self.round.saturating_mul(2);
        if let Some(stats) = self.stats {
            let mut st = stats.borrow_mut();
            out.iter().for_each(|(_, s)| st.saw(*s));
            let floor = st.floor;
            out.retain(|(_, s)| *s >= floor);
            // Rounds go out by code distance: when a whole round is below the floor, the
            // farther ones are too, or nearly (the codes only approximate the order).
            if out.is_empty() {
                self.taken = self.near.len();
            }
        }
        Ok(best_first(self.conn, out)?.collect())
    }
}

impl Iterator for Reranked<'_> {
    type Item = Result<(i64, f32)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(x) = self.ready.next() {
                return Some(Ok(x));
            }
            if self.taken >= self.near.len() {
                return None;
            }
            match self.next_round() {
                Ok(round) => self.ready = round.into_iter(),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

fn dot_i8(q: &[f32], v: &[u8]) -> f32 {
    q.iter().zip(v).map(|(a, b)| a * (*b as i8) as f32).sum()
}

/// Words and meaning fused ([`fuse`]): each list asked for more than the limit, grouped by
/// session as a words search is.
///
/// # Errors
/// As the two searches.
pub fn search_hybrid(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    model: &Model,
    query: &str,
    stop: &AtomicBool,
) -> Result<Vec<Hit>> {
    Ok(search_hybrid_stats(conn, scope, opts, model, query, stop)?.0)
}

/// [`search_hybrid`], with what its meaning half did.
///
/// # Errors
/// As the two searches.
pub fn search_hybrid_stats(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    model: &Model,
    query: &str,
    stop: &AtomicBool,
) -> Result<(Vec<Hit>, MeaningStats)> {
    let wide = widened(opts);
    let words = super::search_until(conn, scope, &wide, stop)?;
    let (meaning, stats) = search_meaning_stats(conn, scope, &wide, model, query, stop)?;
    Ok((group_by_session(fuse(words, meaning, opts.limit)), stats))
}

/// The options of each half of a fused search: more hits than the limit asks, so that
/// [`fuse`] can fill it (the team server's fused search asks the same).
pub fn widened(opts: &SearchOptions) -> SearchOptions {
    let mut wide = opts.clone();
    wide.limit = opts.limit.saturating_mul(3).max(50);
    wide
}

/// Words first, then meaning: the hits the words found, in the words' order, then the hits
/// only meaning found (all at or above the floor), by similarity; `limit` of them. A text
/// both found is marked `By::Both` where the words put it.
///
/// Why not a blend: measured on real transcripts (docs/meaning.md), reciprocal rank fusion let
/// the words' weak matches push meaning's good ones out of the first five, and gave back half
/// of what meaning alone found; and a words search needs every word of the query, so when it
/// finds something, that is a strong match (an identifier, a phrase, the words the user
/// remembers). When it finds nothing, which is what a description in other words gets, the
/// ranking is meaning's own.
///
/// `score` stays in one order: above 1 for hits found by words, the similarity (at most 1)
/// for hits found by meaning alone.
pub fn fuse(words: Vec<Hit>, meaning: Vec<Hit>, limit: usize) -> Vec<Hit> {
    let key = |h: &Hit| (h.path.clone(), h.line, h.kind);
    let mut by_meaning: HashMap<(String, i64, &'static str), Hit> =
        meaning.iter().map(|h| (key(h), h.clone())).collect();
    let mut out: Vec<Hit> = Vec::new();
    let words = by_rank(words);
    let n = words.len();
    for (i, mut h) in words.into_iter().enumerate() {
        if let Some(m) = by_meaning.remove(&key(&h)) {
            h.by = super::By::Both;
            h.similarity = m.similarity;
        }
        h.score = 1.0 + (n - i) as f64 / n as f64;
        out.push(h);
    }
    for h in by_rank(meaning) {
        if by_meaning.contains_key(&key(&h)) {
            out.push(h);
        }
    }
    out.truncate(limit);
    out
}

/// Hits by score, best first: a search groups its hits by session, which is not a rank.
fn by_rank(mut hits: Vec<Hit>) -> Vec<Hit> {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}

/// The `k` texts nearest to `q` by an exact scan of every passage row, as searches did before
/// the codes (migration 0025): examples/bench_meaning times it and measures what the codes
/// lose against it. Not used by searches.
///
/// # Errors
/// Index errors.
#[doc(hidden)]
pub fn exact_top(conn: &Connection, q: &[f32], k: usize) -> Result<Vec<(i64, f32)>> {
    let scorer = Scorer::new(q, &center(conn)?);
    let mut all: Vec<(i64, f32)> = Vec::new();
    let mut stmt = conn.prepare_cached("SELECT rid, kind, scale, vec FROM passages")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let rowid = fts_rowid(r.get(0)?, TextKind::from_bits(r.get(1)?));
        let vec = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let s = scorer.score(r.get::<_, f64>(2)?, vec);
        match all.last_mut() {
            Some(last) if last.0 == rowid => last.1 = last.1.max(s),
            _ => all.push((rowid, s)),
        }
    }
    Ok(best_first(conn, all)?.take(k).collect())
}

/// The `k` texts nearest to `q` as a search finds them (the codes, then `candidates` texts
/// scored exactly), for examples/bench_meaning.
///
/// # Errors
/// Index errors.
#[doc(hidden)]
pub fn codes_top(
    conn: &Connection,
    q: &[f32],
    k: usize,
    candidates: usize,
) -> Result<Vec<(i64, f32)>> {
    let scorer = Scorer::new(q, &center(conn)?);
    let near = nearest_codes(conn, q, &scorer.c, |_| true)?;
    let mut r = Reranked::new(conn, scorer, near, 0);
    r.round = candidates;
    r.take(k).collect()
}
