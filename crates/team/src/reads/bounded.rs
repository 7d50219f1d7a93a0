//! The top of a one-word search the listed texts alone do not settle (`heads.rs`), without
//! scoring every match: each match's key, time and length come back (no body, no `tsvector`),
//! with its count of the word when push listed it under the word (`text_heads`). A listed
//! text's score is then exact; any other text scores at most what a text not listed can
//! (`pg::heads::MIN_IMPACT` at its mean length; at the reader's, `fts5::Bm25::most_below`)
//! times its own recency weight.
//! The matches are taken best bound first, the counts of those not listed asked of the server
//! a chunk at a time (`unlisted::chunks`; from the `tsvector`, as `ranked::every_match` does),
//! until the hits the local rules show (`ranked::Shown`) are full of texts scoring above the
//! next bound. That is where the listed texts fall short: a recent text not listed can
//! outscore every old listed one, so the old texts wait until the recent ones are counted.
//!
//! `regression` at 10,000 generated sessions (27,870 texts hold it, 273 listed; their times
//! spread over ten months) took 3.5-4.6 s scoring every match; the measured figures are in
//! docs/team.md.

use std::collections::HashMap;

use postgres::Transaction;

use super::matching::{Chunk, Matching};
use super::on as server;
use super::ranked::{count_columns, counts_of, sort, Keyed, Params, Phrase, Prepared, Shown};
use super::search::{filters, scoped, times_alias, On};
use super::unlisted::{chunks, Mode, ROOM};
use crate::pg::heads::{AVGDL, MIN_IMPACT};
use crate::pg::server_err;
use crate::pg::words::{lexeme, Counter};
use pidx_core::error::Result;
use pidx_core::query::search::{blend, Hit, SearchOptions};
use pidx_core::store::filter::Where;

/// A match before it is counted: its key, time and length, and its count when listed.
struct Match {
    bound: f64,
    key: Keyed,
    ts_ms: Option<i64>,
    ntok: Option<i32>,
    listed: Option<i32>,
}

impl Match {
    /// Whether its bound is its exact score: listed, its length known.
    fn known(&self) -> bool {
        self.listed.is_some() && self.ntok.is_some()
    }
}

/// The hits of a search of one word (not a prefix) by the matches' bounds, or `None` when this
/// way does not apply (`PIDX_PG_HEADS=off`, several phrases, no limit).
///
/// # Errors
/// Server errors.
pub(super) fn top(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    p: &Prepared,
) -> Result<Option<Vec<Hit>>> {
    let ([phrase], [one]) = (p.phrases.as_slice(), p.facts.each.as_slice()) else {
        return Ok(None);
    };
    let [word] = phrase.words.as_slice() else {
        return Ok(None);
    };
    if !p.and_only || phrase.prefix || q.limit == 0 || Mode::now().off() {
        return Ok(None);
    }
    let unlisted = one.most_below(MIN_IMPACT, AVGDL) * ROOM;
    let score = |tf: i64, len: i64, ts_ms: Option<i64>| {
        -p.facts.sum.score(&[tf], len) * blend(ts_ms, p.now_ms)
    };
    let mut matches = matches(tx, on, q, word)?;
    for m in &mut matches {
        m.bound = match (m.listed, m.ntok) {
            (Some(tf), Some(ntok)) => score(i64::from(tf), i64::from(ntok), m.ts_ms),
            _ => unlisted * blend(m.ts_ms, p.now_ms),
        };
    }
    matches.sort_by(|a, b| b.bound.total_cmp(&a.bound));
    let counter = Counter::new(std::slice::from_ref(word));
    let mut shown = Shown::new(tx, q)?;
    // Counted texts above every bound still unread, best first: their order is final, so each
    // is looked up and shown once.
    let mut counted: Vec<Keyed> = Vec::new();
    let mut rest = matches.into_iter().peekable();
    for range in chunks(rest.len()) {
        let chunk: Vec<Match> = rest.by_ref().take(range.len()).collect();
        let asked: Vec<usize> = (0..chunk.len()).filter(|&i| !chunk[i].known()).collect();
        let counts = counts(tx, phrase, counter.as_ref(), &chunk, &asked)?;
        counted.extend(chunk.into_iter().enumerate().filter_map(|(i, m)| {
            let relevance = if m.known() {
                m.bound
            } else {
                match counts.get(&i) {
                    Some(&(tf, len)) if tf > 0 => score(tf, len, m.ts_ms),
                    _ => return None,
                }
            };
            Some(Keyed { relevance, ..m.key })
        }));
        sort(&mut counted);
        let settled = match rest.peek() {
            Some(next) => counted
                .iter()
                .take_while(|k| k.relevance > next.bound)
                .count(),
            None => counted.len(),
        };
        if shown.walk(tx, on, q, &counted[..settled])? {
            break;
        }
        counted.drain(..settled);
    }
    Ok(Some(shown.hits(tx, terms)?.0))
}

/// Every text holding `word` that passes the search's filters: key, time, length, and its
/// count of the word when listed under it.
fn matches(tx: &mut Transaction, on: &On, q: &SearchOptions, word: &str) -> Result<Vec<Match>> {
    let mut c = scoped(on, q);
    let times = times_alias("t");
    filters(q, on, &mut c, times);
    let (lexeme, word) = (lexeme(word), word.to_string());
    // The word's texts by key, a chunk at a time, from its postings; or the words' index's.
    let candidates = Matching::of(tx, on.source, &lexeme)?;
    let runs: Box<dyn Iterator<Item = Option<Chunk>>> = match candidates {
        Some(m) => Box::new(m.into_chunks().map(Some)),
        None => Box::new(std::iter::once(None)),
    };
    let mut out = Vec::new();
    for chunk in runs {
        out.extend(matches_of(tx, &c, times, &lexeme, &word, chunk.as_ref())?);
    }
    Ok(out)
}

/// [`matches`] of the texts `chunk` keys (`Matching::chunks`), or of every text.
fn matches_of(
    tx: &mut Transaction,
    c: &Where,
    times: &str,
    lexeme: &String,
    word: &String,
    chunk: Option<&Chunk>,
) -> Result<Vec<Match>> {
    let mut params = server::params(c);
    params.push(lexeme);
    params.push(word);
    let within = match chunk {
        Some(k) => {
            params.push(&k.keys);
            format!(
                " AND {}",
                k.within("x").replace('?', &format!("${}", params.len()))
            )
        }
        None => String::new(),
    };
    // The words index's matches first, each with its listed row if any: left to plan the
    // join with the entries, the server walked every entry and probed its text (3.1 s for
    // `regression` at 10,000 sessions, against 0.5 s); the listed rows joined outside, after
    // that join (estimated at one row), were scanned once a match (1.7 s at 100,000
    // sessions, against 0.6 s here). Each match's entry is probed by its whole key (LATERAL,
    // LIMIT 1): joined, the server probed by session and dropped the other entries, 455,370
    // rows for `function` at 100,000 sessions (2.2 s against 1.6 s; `regression` 0.49 against
    // 0.35 s; only a word in nearly every text, which the listed texts settle, is faster
    // joined). The probe reads the entry's time and silence (what the filters ask of it) from
    // pg 0013's index alone, not the entry's row: `regression` at a million sessions 5.7 ->
    // 3.6 s. From pg 0018 on, the text's own copy of both is read and there is no probe:
    // half of the read at 100,000 sessions (docs/performance.md). Only the listed rows of
    // matches that pass the filters come back: all of them, whatever `--source` or `--cwd`
    // keep, made `the --cwd X` at 10,000 sessions hold 114 MB, against 29 MB scoring every
    // match.
    let (copied, probe) = if times == "t" {
        (", x.ts_ms, x.silent", "")
    } else {
        (
            "",
            "JOIN LATERAL (SELECT e.ts_ms, e.silent FROM entries e
                           WHERE e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
                           LIMIT 1) e ON true",
        )
    };
    let sql = format!(
        "WITH t AS MATERIALIZED (
             SELECT x.source, x.fid, x.seq, x.kind, x.ntok, h.tf{copied} FROM entry_text x
             LEFT JOIN text_heads h ON h.term = ${} AND h.source = x.source
                  AND h.fid = x.fid AND h.seq = x.seq AND h.kind = x.kind
             WHERE x.tsv @@ (${}::text)::tsquery{within})
         SELECT t.source, t.fid, t.seq, t.kind, {times}.ts_ms, t.ntok, t.tf
         FROM t
         {probe}
         JOIN sessions s ON s.source = t.source AND s.fid = t.fid
         WHERE {}",
        params.len() - usize::from(chunk.is_some()),
        params.len() - 1 - usize::from(chunk.is_some()),
        c.pg_sql(),
    );
    let rows = tx.query(sql.as_str(), &params).map_err(server_err)?;
    Ok(rows
        .iter()
        .map(|r| Match {
            bound: 0.0,
            key: Keyed::of(r, 0.0),
            ts_ms: r.get(4),
            ntok: r.get(5),
            listed: r.get(6),
        })
        .collect())
}

/// The count of `phrase` (one word) and the length in tokens of the texts `asked` (indexes
/// into `chunk`), as `ranked::every_match` counts them (`ranked::count_columns`).
fn counts(
    tx: &mut Transaction,
    phrase: &Phrase,
    counter: Option<&Counter>,
    chunk: &[Match],
    asked: &[usize],
) -> Result<HashMap<usize, (i64, i64)>> {
    if asked.is_empty() {
        return Ok(HashMap::new());
    }
    let keys = serde_json::Value::Array(
        asked
            .iter()
            .map(|&i| {
                let k = &chunk[i].key;
                serde_json::json!([k.source, k.fid, k.seq, k.kind, i])
            })
            .collect(),
    )
    .to_string();
    let lexemes: Vec<String> = phrase.words.iter().map(|w| lexeme(w)).collect();
    let mut params: Params = vec![&keys];
    let columns = count_columns(&mut params, Some((&phrase.words, &lexemes)));
    let sql = format!(
        "SELECT k.i, {columns}
         FROM (SELECT (k->>4)::int8 AS i, k->>0 AS source, (k->>1)::int8 AS fid,
                      (k->>2)::int8 AS seq, (k->>3)::int2 AS kind
               FROM jsonb_array_elements($1::text::jsonb) k OFFSET 0) k
         JOIN entry_text t ON t.source = k.source AND t.fid = k.fid
                          AND t.seq = k.seq AND t.kind = k.kind"
    );
    let rows = tx.query(sql.as_str(), &params).map_err(server_err)?;
    let phrases = std::slice::from_ref(phrase);
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        let i = usize::try_from(r.get::<_, i64>(0)).unwrap_or(usize::MAX);
        let (tfs, len) = counts_of(r, 1, phrases, counter);
        out.insert(i, (tfs[0], len));
    }
    Ok(out)
}
