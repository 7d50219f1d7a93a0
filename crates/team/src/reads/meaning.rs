//! `pidx --pg URL search --meaning` (and the meaning half of a fused search): the local search
//! by meaning (`query::search::meaning`) over the passages sources pushed (pg 0032). Each
//! source's vectors are centered on its own index's center, so the query is too: per source,
//! its sign code about that center, the server's nearest texts by `bit_count(code # q)` (the
//! texts of the reader's filters, best passage per text), their vectors sent to pidx and scored
//! exactly with that source's [`Scorer`]. A source's hits so score as in its own local index;
//! the sources' hits are merged by score. The nearest texts come in rounds, as locally: the
//! first [`CANDIDATES`] (or ten times the limit) of each source and every text as near as the
//! farthest of them, then twice as many past that distance, while the hits are short and the
//! round found texts above the floor.

use std::collections::HashMap;

use postgres::Transaction;

use super::search::{filters, scoped, times_alias, Feed, Matcher, On};
use crate::pg::passages::code_bits;
use crate::pg::server_err;
use pidx_core::error::Result;
use pidx_core::meaning::codes;
use pidx_core::query::search::{group_by_session, By, Hit, MeaningStats};
use pidx_core::query::search::{Scorer, SearchOptions};
use pidx_core::store::filter::Where;
use pidx_core::store::schema::TITLE;

/// Texts of a source scored exactly in a search's first round at least (the local
/// `CANDIDATES`: the codes' order is rough).
const CANDIDATES: usize = 500;

/// Scored texts looked up as hits a statement at a time.
const CHUNK: usize = 256;

/// The sources the reader sees that hold vectors, with their model: (source, model).
///
/// # Errors
/// Server errors.
pub fn embedded(tx: &mut Transaction, source: Option<&str>) -> Result<Vec<(String, String)>> {
    let rows = tx
        .query(
            "SELECT source, model FROM embed_sources WHERE $1::text IS NULL OR source = $1
             ORDER BY source",
            &[&source],
        )
        .map_err(server_err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The best texts by meaning for the unit query vector `q` of `model`, over the sources whose
/// vectors are of that model; grouped by session, as a local search by meaning returns them.
///
/// # Errors
/// Server errors.
pub fn search(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    query: &[f32],
    model: &str,
) -> Result<(Vec<Hit>, MeaningStats)> {
    let mut stats = MeaningStats {
        floor: pidx_core::meaning::embedder::floor(),
        ..MeaningStats::default()
    };
    let sources = tx
        .query(
            "SELECT source, center FROM embed_sources
             WHERE model = $1 AND ($2::text IS NULL OR source = $2) ORDER BY source",
            &[&model, &on.source],
        )
        .map_err(server_err)?;
    let mut names = Vec::new();
    let mut codes_of = Vec::new();
    let mut scorers = HashMap::new();
    for r in &sources {
        let (name, center): (String, Vec<u8>) = (r.get(0), r.get(1));
        let center = codes::center_of(&center);
        codes_of.push(code_bits(&codes::of_f32(query, &center)));
        scorers.insert(name.clone(), Scorer::new(query, &center));
        names.push(name);
    }
    if names.is_empty() {
        return Ok((Vec::new(), stats));
    }
    let mut c = scoped(on, q);
    filters(q, on, &mut c, times_alias("t"));
    // Without filters to pick by, the passages alone are scanned, and bind none of `c`'s values.
    let picked = if joined(q) {
        c.clone()
    } else {
        Where::default()
    };
    let scan = scan_sql(&picked, joined(q));
    let hits_sql = hits_sql(&c);
    let mut params = super::on::params(&picked);
    params.push(&names);
    params.push(&codes_of);
    let mut out = Feed::new(q);
    // Each source's farthest code distance taken so far: a round takes the texts past it.
    let mut after: Vec<i64> = vec![-1; names.len()];
    let mut round = CANDIDATES.max(q.limit.saturating_mul(10)) as i64;
    loop {
        let mut p = params.clone();
        p.push(&after);
        p.push(&round);
        let rows = tx.query(scan.as_str(), &p).map_err(server_err)?;
        // Each text's best passage, how many texts each source gave, and how far they went.
        let mut best: HashMap<(String, i64, i64, i16), f32> = HashMap::new();
        let mut each: HashMap<String, (usize, i64)> = HashMap::new();
        for r in &rows {
            let source: String = r.get(0);
            let Some(scorer) = scorers.get(&source) else {
                continue;
            };
            let (scale, vec): (f32, &[u8]) = (r.get(5), r.get(6));
            let s = scorer.score(f64::from(scale), vec);
            let key = (source, r.get(1), r.get(2), r.get(3));
            let e = each.entry(key.0.clone()).or_default();
            if !best.contains_key(&key) {
                e.0 += 1;
            }
            e.1 = e.1.max(r.get(4));
            let e = best.entry(key).or_insert(s);
            *e = e.max(s);
        }
        let exhausted = (names.iter()).all(|n| each.get(n).map_or(0, |e| e.0) < round as usize);
        for (n, a) in names.iter().zip(after.iter_mut()) {
            if let Some(e) = each.get(n) {
                *a = e.1;
            }
        }
        let mut scored: Vec<Scored> = best.into_iter().collect();
        scored.iter().for_each(|(_, s)| stats.saw(*s));
        scored.retain(|(_, s)| *s >= stats.floor);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        newest_on_ties(tx, &mut scored)?;
        for chunk in scored.chunks(CHUNK) {
            let (mut src, mut fid, mut seq, mut kind, mut score) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for ((s, f, q, k), v) in chunk {
                src.push(s.as_str());
                fid.push(*f);
                seq.push(*q);
                kind.push(*k);
                score.push(f64::from(*v));
            }
            let mut p = super::on::params(&c);
            p.extend([
                &src as &(dyn postgres::types::ToSql + Sync),
                &fid,
                &seq,
                &kind,
                &score,
            ]);
            for r in tx.query(hits_sql.as_str(), &p).map_err(server_err)? {
                let similarity: f64 = r.get(9);
                let took = out.take(tx, &r, similarity, &Matcher::Whole, |h| {
                    h.score = similarity;
                    h.similarity = Some(similarity);
                    h.by = By::Meaning;
                })?;
                if !took {
                    return Ok(finish(out.hits(), stats));
                }
            }
        }
        // Rounds go out by code distance: a round with nothing above the floor ends it (as
        // locally), and so does one that held every text left.
        if out.full() || scored.is_empty() || exhausted {
            break;
        }
        round = round.saturating_mul(2);
    }
    Ok(finish(out.hits(), stats))
}

/// A scored text: (source, fid, seq, kind) and its similarity.
type Scored = ((String, i64, i64, i16), f32);

/// Texts of one score (the same words in several sessions) in the local order
/// (`query::search::meaning::best_first`): the newest entry first, then the later row.
fn newest_on_ties(tx: &mut Transaction, scored: &mut [Scored]) -> Result<()> {
    let mut at = 0;
    while at < scored.len() {
        let end = at
            + scored[at..]
                .iter()
                .take_while(|x| x.1 == scored[at].1)
                .count();
        if end - at > 1 {
            let tied = &mut scored[at..end];
            let (src, fid, seq): (Vec<&str>, Vec<i64>, Vec<i64>) = tied
                .iter()
                .map(|((s, f, q, _), _)| (s.as_str(), *f, *q))
                .fold(Default::default(), |mut v, (s, f, q)| {
                    v.0.push(s);
                    v.1.push(f);
                    v.2.push(q);
                    v
                });
            let times: HashMap<(String, i64, i64), Option<i64>> = tx
                .query(
                    "SELECT e.source, e.fid, e.seq, e.ts_ms
                     FROM unnest($1::text[], $2::int8[], $3::int8[]) AS k(source, fid, seq)
                     JOIN entries e ON e.source = k.source AND e.fid = k.fid AND e.seq = k.seq",
                    &[&src, &fid, &seq],
                )
                .map_err(server_err)?
                .iter()
                .map(|r| ((r.get(0), r.get(1), r.get(2)), r.get(3)))
                .collect();
            let ts = |k: &(String, i64, i64, i16)| {
                times.get(&(k.0.clone(), k.1, k.2)).copied().flatten()
            };
            tied.sort_by(|a, b| ts(&b.0).cmp(&ts(&a.0)).then_with(|| b.0.cmp(&a.0)));
        }
        at = end;
    }
    Ok(())
}

fn finish(hits: Vec<Hit>, mut stats: MeaningStats) -> (Vec<Hit>, MeaningStats) {
    stats.hits = hits.len();
    (group_by_session(hits), stats)
}

/// Whether the reader's filters need a passage's text and session to pick the nearest texts
/// (the local search keeps only the texts of `--in`, the times and the session before it takes
/// the nearest); without them the passages alone are scanned.
fn joined(q: &SearchOptions) -> bool {
    !q.kinds.is_empty()
        || q.since_ms.is_some()
        || q.until_ms.is_some()
        || q.cwd.is_some()
        || q.file_id.is_some()
        || q.model.is_some()
}

/// Each source's nearest texts past code distance `$n+3` (one a source), at least `$n+4` of
/// them and every text as near as the farthest of those (`$n+1`: the sources, `$n+2` the
/// query's code about each one's center), with their distance and every passage of them: what
/// pidx scores exactly. As the local round (`query::search::meaning`'s `Reranked`), which takes
/// the texts tied at its last distance too.
fn scan_sql(c: &Where, joined: bool) -> String {
    let n = c.values().len();
    let (from, cond) = if joined {
        (
            "passages p
             JOIN entry_text t ON t.source = p.source AND t.fid = p.fid AND t.seq = p.seq
                              AND t.kind = p.kind
             JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
             JOIN sessions s ON s.source = t.source AND s.fid = t.fid",
            c.pg_sql(),
        )
    } else {
        ("passages p", "true".to_string())
    };
    format!(
        "SELECT near.source, near.fid, near.seq, near.kind, near.d, x.scale, x.vec
         FROM unnest(${a}::text[], ${b}::text[]::varbit[], ${o}::int8[]) AS q(source, code, after)
         CROSS JOIN LATERAL (
             SELECT w.source, w.fid, w.seq, w.kind, w.d FROM (
                 SELECT n.*, rank() OVER (ORDER BY n.d) AS r FROM (
                     SELECT p.source, p.fid, p.seq, p.kind, min(bit_count(p.code # q.code)) AS d
                     FROM {from}
                     WHERE p.source = q.source AND {cond}
                     GROUP BY p.source, p.fid, p.seq, p.kind) n
                 WHERE n.d > q.after) w
             WHERE w.r <= ${l}) near
         JOIN passages x ON x.source = near.source AND x.fid = near.fid AND x.seq = near.seq
                        AND x.kind = near.kind",
        a = n + 1,
        b = n + 2,
        o = n + 3,
        l = n + 4,
    )
}

/// The hits of scored texts (`$n+1..$n+5`: source, fid, seq, kind, similarity) under the
/// reader's filters, in the order given; the columns of a literal search's rows (`search::hit`).
fn hits_sql(c: &Where) -> String {
    let n = c.values().len();
    format!(
        "SELECT s.source, s.path, s.session_id, s.cwd, e.id, e.line, t.kind, e.role, e.ts_ms,
                k.score, t.body, s.fid, s.name, {TITLE}, e.seq, e.dup
         FROM unnest(${}::text[], ${}::int8[], ${}::int8[], ${}::int2[], ${}::float8[])
              WITH ORDINALITY AS k(source, fid, seq, kind, score, ord)
         JOIN entry_text t ON t.source = k.source AND t.fid = k.fid AND t.seq = k.seq
                          AND t.kind = k.kind
         JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
         JOIN sessions s ON s.source = t.source AND s.fid = t.fid
         WHERE {} ORDER BY k.ord",
        n + 1,
        n + 2,
        n + 3,
        n + 4,
        n + 5,
        c.pg_sql()
    )
}
