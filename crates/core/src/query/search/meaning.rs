//! Search by meaning: the query embedded by the static model, every passage vector of the index
//! (migration 0024) scored by cosine in one scan of the int8 vectors, each text ranked by its
//! best passage, then joined through the same filters, copies and snippets as a words search
//! (`One`, `confirm`). Hybrid ranking fuses the words ranking and the meaning ranking by
//! reciprocal rank fusion, the words list weighted higher so an exact identifier stays first.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;

use super::{confirm, group_by_session, one, span, Candidate, Hit, SearchOptions, Snippet};
use crate::error::Result;
use crate::meaning::StaticModel;
use crate::store::schema::fts_rowid;
use crate::store::Scope;

/// RRF's constant: ranks below ~60 differ little, so a text found by both lists beats one
/// that is first in only one of them (Cormack et al., 2009, and every hybrid engine since).
const RRF_K: f64 = 60.0;

/// The words list's weight against meaning's 1.0: a text the words put first and meaning
/// does not list still outranks meaning's first (1.5/61 > 1/61 + 1/(60+rank) for ranks past
/// 60), so identifiers and exact phrases keep their place (examples/bench_meaning measures it).
const WORDS_WEIGHT: f64 = 1.5;

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
    (model, query): (&StaticModel, &str),
    stop: &AtomicBool,
) -> Result<Vec<Hit>> {
    let _snapshot = crate::store::snapshot::Snapshot::begin(conn)?;
    let Some(q) = model.embed(query) else {
        return Ok(Vec::new());
    };
    let span = span::Span::of(conn, scope, opts)?;
    if span.as_ref().is_some_and(span::Span::is_empty) {
        return Ok(Vec::new());
    }
    let scored = scan(conn, &q, opts, span.as_ref())?;
    let mut one = one::One::new(conn, scope, opts)?;
    let snippet = |text: &str| Some(Snippet::around(text, None));
    // Joined one at a time as `confirm` asks for them: it stops at the limit, so a search
    // joins a few dozen texts, not the whole oversampled window.
    let joined = best_first(scored)
        .map(|(rowid, score)| {
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
            (opts.limit, stop, None),
            snippet,
        )?
    } else {
        confirm(conn, joined, (opts.limit, stop, None), snippet)?
    };
    Ok(group_by_session(hits))
}

/// Every embedded text (full-text rowid) in `span` with its best passage's cosine to `q`, in
/// index order. Narrowed to one session, only its passages are read.
fn scan(
    conn: &Connection,
    q: &[f32],
    opts: &SearchOptions,
    span: Option<&span::Span>,
) -> Result<Vec<(i64, f32)>> {
    let (sql, arg) = match opts.file_id {
        Some(f) => (
            "SELECT rid, kind, scale, vec FROM passages WHERE file_id = ?1",
            Some(f),
        ),
        None => ("SELECT rid, kind, scale, vec FROM passages", None),
    };
    let kinds: Vec<i64> = opts.kinds.iter().map(|k| *k as i64).collect();
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(arg))?;
    // A text's passages are consecutive rows (the embedding pass inserts them together and the
    // scan is in insertion order): its best passage is kept without a map.
    let mut best: Vec<(i64, f32)> = Vec::new();
    while let Some(r) = rows.next()? {
        let (rid, kind): (i64, i64) = (r.get(0)?, r.get(1)?);
        if !kinds.is_empty() && !kinds.contains(&kind) {
            continue;
        }
        let rowid = fts_rowid(rid, crate::pi::text::TextKind::from_bits(kind));
        if span.is_some_and(|s| !s.holds(rowid)) {
            continue;
        }
        let scale: f64 = r.get(2)?;
        let vec = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let score = dot_i8(q, vec) * scale as f32;
        match best.last_mut() {
            Some(last) if last.0 == rowid => last.1 = last.1.max(score),
            _ => best.push((rowid, score)),
        }
    }
    Ok(best)
}

/// `best` by score, best first; only the first [`TOP`] are sorted until more are read (the
/// caller rarely reads past a few thousand of a few hundred thousand).
fn best_first(mut best: Vec<(i64, f32)>) -> impl Iterator<Item = (i64, f32)> {
    fn order(a: &(i64, f32), b: &(i64, f32)) -> std::cmp::Ordering {
        b.1.total_cmp(&a.1).then(b.0.cmp(&a.0))
    }
    let mut tail = Vec::new();
    if best.len() > TOP {
        best.select_nth_unstable_by(TOP, order);
        tail = best.split_off(TOP);
    }
    best.sort_by(order);
    let rest = std::iter::once_with(move || {
        tail.sort_by(order);
        tail
    });
    best.into_iter().chain(rest.flatten())
}

/// Texts sorted first out of a scan (the rest only after them).
const TOP: usize = 5000;

fn dot_i8(q: &[f32], v: &[u8]) -> f32 {
    q.iter().zip(v).map(|(a, b)| a * (*b as i8) as f32).sum()
}

/// Words and meaning fused: each list asked for more than the limit, each text scored
/// `Σ weight / (RRF_K + rank)`, best first, grouped by session as a words search is.
///
/// # Errors
/// As the two searches.
pub fn search_hybrid(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    (model, query): (&StaticModel, &str),
    stop: &AtomicBool,
) -> Result<Vec<Hit>> {
    let mut wide = opts.clone();
    wide.limit = opts.limit.saturating_mul(3).max(50);
    let words = super::search_until(conn, scope, &wide, stop)?;
    let meaning = search_meaning(conn, scope, &wide, (model, query), stop)?;
    Ok(group_by_session(fuse(words, meaning, opts.limit)))
}

/// Reciprocal rank fusion of two hit lists (each in its own rank order), keeping `limit`.
pub(crate) fn fuse(words: Vec<Hit>, meaning: Vec<Hit>, limit: usize) -> Vec<Hit> {
    let mut fused: HashMap<(String, i64, &'static str), (f64, Hit)> = HashMap::new();
    for (list, weight) in [(by_rank(words), WORDS_WEIGHT), (by_rank(meaning), 1.0)] {
        for (rank, hit) in list.into_iter().enumerate() {
            let key = (hit.path.clone(), hit.line, hit.kind);
            let add = weight / (RRF_K + rank as f64 + 1.0);
            fused
                .entry(key)
                .and_modify(|(s, _)| *s += add)
                .or_insert((add, hit));
        }
    }
    let mut out: Vec<(f64, Hit)> = fused.into_values().collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.line.cmp(&b.1.line)));
    out.into_iter()
        .take(limit)
        .map(|(s, mut h)| {
            h.score = s;
            h
        })
        .collect()
}

/// Hits by score, best first: a search groups its hits by session, which is not a rank.
fn by_rank(mut hits: Vec<Hit>) -> Vec<Hit> {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}
