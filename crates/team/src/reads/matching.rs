//! The texts a `tsquery` can match, from its words' postings (`word_postings`, pg 0020)
//! rather than a GIN index on every text's words (dropped by pg 0026: a third of the server's
//! time in a first push, 3.2 of 8-9 s at 1,000 sessions, and 21 MB of its 348, docs/team.md).
//! A term's texts are its postings (a prefix's, the postings of every word starting with it,
//! listed from `word_texts`); `&` and a phrase's `<->` keep the texts in every operand, `|`
//! those in any, and `!` anything (the superset is what a candidate needs: each query still
//! confirms a text on its row, with the `tsquery` on its words or the needle on its body). The
//! candidates come back keyed and newest first (the posting's time is its entry's, pg 0018),
//! for the queries to look up a chunk at a time by key ([`Matching::into_chunks`],
//! [`Chunk::within`]).
//!
//! Whether a search may read the postings at all is this module's too ([`whole`], [`posted`]),
//! and which of their texts are still on the server ([`live`]): the ways that score from the
//! postings (`postings.rs`, `expression.rs`) ask here.
//!
//! `None` (the query reads the texts under its own conditions, every row a candidate) when a
//! source the search reads has no postings yet (`sources.postings`), the reader is a limited one
//! that does not read each of those sources whole (it reads none of their postings: their keys
//! and times would tell of texts it may not see; pg 0027), the expression keeps everything (a
//! lone `NOT`), or `PIDX_PG_HEADS` says no postings.

use std::collections::HashSet;

use postgres::Transaction;

use super::on::read_limited;
use super::unlisted::Mode;
use crate::pg::postings::{decode, undecoded, Posting};
use crate::pg::server_err;
use crate::pg::typed;
use pidx_core::error::Result;

/// A text: its source (an index into [`Matching::sources`]), file, entry and kind.
pub(super) type Key = (u32, i64, i64, i16);

/// Texts with their times, sorted by key.
type Texts = Vec<(Key, Option<i64>)>;

/// Candidates looked up by one query: the look-up probes each key's row by its primary key,
/// and a JSON array of 4,096 keys is about 150 kB.
pub(super) const CHUNK: usize = 4096;

/// Words a piece of a word may be inside before its search reads every text instead.
const MOST_WORDS_INSIDE: i64 = 10_000;

/// The words ending with a literal's first piece narrow its candidates when they are in at
/// most one text in this many ([`Matching::ending`]) ...
const FEW_TEXTS: i64 = 20;

/// ... or, beside the needle's other words, in at most one in this many and in no more texts
/// than the rarest of those words.
const FEWER_TEXTS: i64 = 4;

/// Candidates in the first chunk.
const FIRST_CHUNK: usize = 256;

/// The candidates of a `tsquery`, newest first (a text without a time last).
pub(super) struct Matching {
    pub sources: Vec<String>,
    texts: Texts,
    /// Whether the reader is a limited one (its look-ups keep their keys apart: [`Chunk::within`]).
    limited: bool,
}

/// One chunk of candidates: their keys as a JSON array of `[source, fid, seq, kind]`.
pub(super) struct Chunk {
    pub keys: String,
    limited: bool,
}

/// A `tsquery` as `search::tsquery` and its callers write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expr {
    Term {
        word: String,
        prefix: bool,
    },
    /// Words one right after the other (`<->` between plain words): one term of the query,
    /// counted by its places in a text (`reads::expression`); its texts hold every word.
    Phrase(Vec<String>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

/// The texts of an expression: `All` when it cannot be narrowed from the postings.
enum Set {
    All,
    Some(Texts),
}

/// Each term's postings in the sources a search reads, decoded whole and sorted by key; a
/// prefix's words listed.
pub(super) struct Decoded {
    pub(super) sources: Vec<String>,
    words: Vec<String>,
    postings: Vec<Vec<(Key, Posting)>>,
    of_prefix: Vec<(String, Vec<String>)>,
}

impl Decoded {
    /// The postings of `terms` (a word, and whether it is a prefix) in the sources a search
    /// reads (every one the reader sees, or `source`).
    ///
    /// # Errors
    /// Server errors; a stored row that does not decode.
    pub(super) fn read(
        tx: &mut Transaction,
        source: Option<&str>,
        terms: &[(String, bool)],
    ) -> Result<Decoded> {
        // A prefix's words, from each source's counts of texts per word (one row a word).
        let mut words: Vec<String> = Vec::new();
        let mut of_prefix: Vec<(String, Vec<String>)> = Vec::new();
        for (word, prefix) in terms {
            if !prefix {
                words.push(word.clone());
                continue;
            }
            if of_prefix.iter().any(|(p, _)| p == word) {
                continue;
            }
            // `starts_with`, not `LIKE`: the planner bounds the words' index with either, but
            // only `starts_with` is leakproof, so a limited reader's row-level policy lets it
            // into the index scan (with `LIKE` the policy was checked on every word first:
            // `is*` 1.1 s -> 1.4 ms at 10,000 sessions for a reader of one source).
            let rows = tx
                .query(
                    "SELECT DISTINCT term FROM word_texts
                     WHERE starts_with(term, $1) AND ($2::text IS NULL OR source = $2)",
                    &[word, &source],
                )
                .map_err(server_err)?;
            let started: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
            words.extend(started.iter().cloned());
            of_prefix.push((word.clone(), started));
        }
        words.sort();
        words.dedup();
        let rows = tx
            .query(
                "SELECT source, term, data FROM word_postings
                 WHERE term = ANY($1) AND ($2::text IS NULL OR source = $2)",
                &[&words, &source],
            )
            .map_err(server_err)?;
        let mut sources: Vec<String> = Vec::new();
        let mut postings: Vec<Vec<(Key, Posting)>> = vec![Vec::new(); words.len()];
        for r in &rows {
            let (source, term, data): (String, String, &[u8]) = (r.get(0), r.get(1), r.get(2));
            let Ok(w) = words.binary_search(&term) else {
                continue;
            };
            let at = match sources.iter().position(|s| *s == source) {
                Some(at) => at,
                None => {
                    sources.push(source);
                    sources.len() - 1
                }
            } as u32;
            let texts = &mut postings[w];
            if !decode(data, |p| texts.push(((at, p.fid, p.seq, p.kind), p))) {
                return Err(undecoded(&sources[at as usize]));
            }
        }
        for texts in &mut postings {
            texts.sort_unstable_by_key(|t| t.0);
            texts.dedup_by_key(|t| t.0);
        }
        Ok(Decoded {
            sources,
            words,
            postings,
            of_prefix,
        })
    }

    /// The postings of a word, or of a prefix (each text once, its count of the prefix's
    /// words summed: the tokens starting with it).
    pub(super) fn of(&self, word: &str, prefix: bool) -> Vec<(Key, Posting)> {
        let of = |w: &str| {
            self.words
                .binary_search_by(|x| x.as_str().cmp(w))
                .map_or(&[][..], |i| &self.postings[i][..])
        };
        if !prefix {
            return of(word).to_vec();
        }
        let started = (self.of_prefix.iter())
            .find(|(p, _)| p == word)
            .map_or(&[][..], |(_, s)| &s[..]);
        let mut all: Vec<(Key, Posting)> = started.iter().flat_map(|w| of(w)).copied().collect();
        all.sort_unstable_by_key(|t| t.0);
        all.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1.tf += later.1.tf;
            }
            same
        });
        all
    }
}

impl Matching {
    /// The candidates of `tsquery` in the sources the search reads, or `None` (see the module).
    ///
    /// # Errors
    /// Server errors; a stored row that does not decode.
    pub(super) fn of(
        tx: &mut Transaction,
        source: Option<&str>,
        tsquery: &str,
    ) -> Result<Option<Matching>> {
        if !readable(tx, source)? {
            return Ok(None);
        }
        let Some(expr) = parse(tsquery) else {
            return Ok(None);
        };
        let mut terms = Vec::new();
        expr.terms(&mut terms);
        let decoded = Decoded::read(tx, source, &terms)?;
        let texts_of = |word: &str, prefix: bool| -> Texts {
            (decoded.of(word, prefix).into_iter())
                .map(|(k, p)| (k, p.ts_ms))
                .collect()
        };
        match expr.candidates(&texts_of) {
            Set::All => Ok(None),
            Set::Some(texts) => Ok(Some(Matching::newest_first(tx, decoded.sources, texts)?)),
        }
    }

    /// The candidates of a literal inside one word at both ends (`nswe`, a piece of a word):
    /// the texts of every word holding it, folded as words are (`pg::words`: the piece is
    /// letters and digits, each folded alone), listed from each source's words (`word_texts`,
    /// read whole: no index finds a piece inside a word); `None` as [`Matching::of`] and when
    /// more than [`MOST_WORDS_INSIDE`] words hold it (every text is then about as near).
    ///
    /// # Errors
    /// Server errors; a stored row that does not decode.
    pub(super) fn inside(
        tx: &mut Transaction,
        source: Option<&str>,
        piece: &str,
    ) -> Result<Option<Matching>> {
        if !readable(tx, source)? {
            return Ok(None);
        }
        let like = format!("%{}%", like_escaped(piece));
        let rows = tx
            .query(
                "SELECT DISTINCT term FROM word_texts
                 WHERE term LIKE $1 AND ($2::text IS NULL OR source = $2) LIMIT $3",
                &[&like, &source, &(MOST_WORDS_INSIDE + 1)],
            )
            .map_err(server_err)?;
        if rows.len() as i64 > MOST_WORDS_INSIDE {
            return Ok(None);
        }
        let terms: Vec<(String, bool)> = rows.iter().map(|r| (r.get(0), false)).collect();
        let decoded = Decoded::read(tx, source, &terms)?;
        let texts = terms.iter().fold(Vec::new(), |all, (w, _)| {
            let of: Texts = (decoded.of(w, false).into_iter())
                .map(|(k, p)| (k, p.ts_ms))
                .collect();
            union(all, of)
        });
        Ok(Some(Matching::newest_first(tx, decoded.sources, texts)?))
    }

    /// The words ending with `piece` (letters and digits, folded as words are: the first piece
    /// of a literal, or of a pattern's literal run, that starts inside a word), from each
    /// source's words (pg 0028's index of them reversed); `None` when the postings are not
    /// readable, the server has no such index, or the piece narrows little: more than
    /// [`MOST_WORDS_INSIDE`] words end so, or their texts are more than one in [`FEW_TEXTS`]
    /// of those the reader sees, or with `others` (the words, and prefixes, every candidate
    /// holds besides) more than one in [`FEWER_TEXTS`] or more than the rarest of those hold
    /// (`is` ends `this` and `is`: reading their postings would cost more than the texts they
    /// rule out; `filter` in a tenth of the texts beside `is` in half of them rules out most),
    /// or the reader is a limited one.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn ending(
        tx: &mut Transaction,
        source: Option<&str>,
        piece: &str,
        others: &[(String, bool)],
    ) -> Result<Option<Vec<String>>> {
        if !crate::pg::words_by_suffix() || !readable(tx, source)? {
            return Ok(None);
        }
        // A limited reader's row-level policy is checked on every word before `reverse(term)`
        // (not leakproof) may be: the look-up read them all (1.1-1.2 s at 10,000 sessions),
        // where the texts of the needle's other words, probed by key, serve it in a fraction
        // of that (`--literal 'filter is'` 2.9 -> 0.4 s, `'me words'` 2.6 s -> 60 ms).
        if read_limited(tx)? {
            return Ok(None);
        }
        let reversed: String = piece.chars().rev().collect();
        let like = format!("{}%", like_escaped(&reversed));
        let rows = tx
            .query(
                "SELECT term, sum(n)::int8 FROM word_texts
                 WHERE reverse(term) LIKE $1 AND ($2::text IS NULL OR source = $2)
                 GROUP BY term LIMIT $3",
                &[&like, &source, &(MOST_WORDS_INSIDE + 1)],
            )
            .map_err(server_err)?;
        if rows.len() as i64 > MOST_WORDS_INSIDE {
            return Ok(None);
        }
        let held: i64 = rows.iter().map(|r| r.get::<_, i64>(1)).sum();
        let texts = table(tx, source)?.map_or(0, |(texts, _)| texts);
        let narrows = if others.is_empty() {
            held <= texts / FEW_TEXTS
        } else {
            held <= texts / FEWER_TEXTS && held <= rarest(tx, source, others)?
        };
        Ok(narrows.then(|| rows.iter().map(|r| r.get(0)).collect()))
    }

    fn newest_first(
        tx: &mut Transaction,
        sources: Vec<String>,
        mut texts: Texts,
    ) -> Result<Matching> {
        texts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(Matching {
            sources,
            texts,
            limited: read_limited(tx)?,
        })
    }
    /// The candidates as JSON arrays of `[source, fid, seq, kind]`, made as they are asked
    /// for: [`FIRST_CHUNK`], then four times more each time up to [`CHUNK`] (a literal
    /// search's hits are often all in the newest few hundred), each perhaps a few more, as a
    /// chunk never ends inside a run of texts of one time: a query ordering each chunk newest
    /// first orders all of them so.
    pub(super) fn into_chunks(self) -> impl Iterator<Item = Chunk> {
        let (mut at, mut size) = (0, FIRST_CHUNK);
        std::iter::from_fn(move || {
            let texts = &self.texts;
            if at >= texts.len() {
                return None;
            }
            let mut end = (at + size).min(texts.len());
            while end < texts.len() && texts[end].1 == texts[end - 1].1 {
                end += 1;
            }
            let keys: Vec<serde_json::Value> = texts[at..end]
                .iter()
                .map(|((s, fid, seq, kind), _)| {
                    serde_json::json!([self.sources[*s as usize], fid, seq, kind])
                })
                .collect();
            at = end;
            size = (size * 4).min(CHUNK);
            Some(Chunk {
                keys: serde_json::Value::Array(keys).to_string(),
                limited: self.limited,
            })
        })
    }
}

/// Whether every source this search reads has its postings, and the reader reads them
/// ([`whole`]).
pub(super) fn posted(tx: &mut Transaction, source: Option<&str>) -> Result<bool> {
    whole(tx, source, true)
}

/// Whether the reader reads every row of every source this search reads (not a limited one,
/// or, from pg 0027 on, one that reads each of those sources whole: it then reads their words'
/// counts and postings too), and, when `postings`, each of them has its postings.
///
/// # Errors
/// Server errors.
pub(super) fn whole(tx: &mut Transaction, source: Option<&str>, postings: bool) -> Result<bool> {
    let sql = if crate::pg::postings_for_whole_sources() {
        "SELECT bool_and((NOT $2 OR postings)
                         AND (NOT pidx_read_limited(current_user)
                              OR pidx_reader_sees_whole_source(current_user, name)))
         FROM sources WHERE $1::text IS NULL OR name = $1"
    } else {
        "SELECT bool_and(NOT $2 OR postings) AND NOT pidx_read_limited(current_user)
         FROM sources WHERE $1::text IS NULL OR name = $1"
    };
    let all: Option<bool> = typed::query_one(tx, sql, &[&source, &postings])?.get(0);
    Ok(all.unwrap_or(false))
}

/// How many of `texts` belong to transcripts the server still holds: those of files not
/// listed as gone (`stale_files`, pg 0022; file ids are unique across sources), or before that
/// schema, those of files `sessions` still has, asked a source at a time.
///
/// The gone files are read by the range of the texts' file ids, not by each id: the list is
/// small (a row a transcript rewritten or removed, pg 0030), while a common prefix's texts are
/// in most files, and the planner weighed each id of `fid = ANY($1)` (`fil*` at 100,000
/// sessions: 66,094 ids, 28 ms to plan a 3 ms statement; the search 231-236 -> 179-181 ms).
///
/// # Errors
/// Server errors.
pub(super) fn live(tx: &mut Transaction, sources: &[String], texts: &[Key]) -> Result<i64> {
    if crate::pg::stale_files_listed() {
        let (Some(lo), Some(hi)) = (
            texts.iter().map(|k| k.1).min(),
            texts.iter().map(|k| k.1).max(),
        ) else {
            return Ok(0);
        };
        let rows = tx
            .query(
                "SELECT fid FROM stale_files WHERE fid BETWEEN $1 AND $2",
                &[&lo, &hi],
            )
            .map_err(server_err)?;
        let gone: HashSet<i64> = rows.iter().map(|r| r.get(0)).collect();
        return Ok(texts.iter().filter(|k| !gone.contains(&k.1)).count() as i64);
    }
    let mut files: Vec<(u32, i64)> = texts.iter().map(|k| (k.0, k.1)).collect();
    files.sort_unstable();
    files.dedup();
    let mut on: HashSet<(u32, i64)> = HashSet::with_capacity(files.len());
    for of_one in files.chunk_by(|a, b| a.0 == b.0) {
        let at = of_one[0].0;
        let fids: Vec<i64> = of_one.iter().map(|f| f.1).collect();
        let rows = tx
            .query(
                "SELECT fid FROM sessions WHERE source = $1 AND fid = ANY($2::int8[])",
                &[&sources[at as usize], &fids],
            )
            .map_err(server_err)?;
        on.extend(rows.iter().map(|r| (at, r.get::<_, i64>(0))));
    }
    Ok(texts.iter().filter(|k| on.contains(&(k.0, k.1))).count() as i64)
}

impl Chunk {
    /// The condition that keeps `alias`'s texts to the chunk's keys, bound as one text (`?`).
    /// For a limited reader the keys stay in a subquery the planner may not pull up
    /// (`OFFSET 0`): the texts are then probed by plain columns, whose comparisons row-level
    /// security lets into the protected table's index scan; with `k->>0` in the join (not
    /// leakproof) its plan applied the policy to every row first and the key after, reading
    /// every text per key (a literal at 10,000 sessions 7.0 s, 1.0 s kept apart). Any other
    /// reader's plan is better pulled up (a `re:` reading 13 chunks, 650 against 860 ms).
    pub(super) fn within(&self, alias: &str) -> String {
        let apart = if self.limited { " OFFSET 0" } else { "" };
        format!(
            "({alias}.source, {alias}.fid, {alias}.seq, {alias}.kind) IN
                 (SELECT k->>0, (k->>1)::int8, (k->>2)::int8, (k->>3)::int2
                  FROM jsonb_array_elements(?::text::jsonb) k{apart})"
        )
    }

    /// The chunk's texts as a `FROM` item named `alias` (every column of `entry_text`), its keys
    /// bound as one text at `$at`: each key probes the texts' primary key, and only then do the
    /// statement's own conditions on `alias` apply. Kept to the keys by [`Chunk::within`]
    /// instead, the planner joined the keys to their sessions first and probed the texts by
    /// session, testing a literal's needle (or a `tsquery`) on every text of every session a
    /// key named before dropping the texts not keyed: about a hundred texts a key where the
    /// matches sit (`--literal "filter is"` at 2,000 sessions, a chunk of 1,025 keys: 260 ms
    /// against 10 ms so). Both subqueries stay apart (`OFFSET 0`): the conditions are not
    /// pushed into the probe, and a limited reader's probe compares plain columns (as
    /// `within` keeps them for row-level security).
    pub(super) fn probed(&self, alias: &str, at: usize) -> String {
        format!(
            "(SELECT k->>0 AS source, (k->>1)::int8 AS fid, (k->>2)::int8 AS seq,
                     (k->>3)::int2 AS kind
              FROM jsonb_array_elements(${at}::text::jsonb) k OFFSET 0) {alias}_keys
             CROSS JOIN LATERAL
             (SELECT * FROM entry_text x
              WHERE x.source = {alias}_keys.source AND x.fid = {alias}_keys.fid
                AND x.seq = {alias}_keys.seq AND x.kind = {alias}_keys.kind OFFSET 0) {alias}"
        )
    }
}

/// Whether the postings may be read for this search: `PIDX_PG_HEADS` allows them, the schema
/// has them, every source the search reads has them, and the reader reads every row.
///
/// # Errors
/// Server errors.
pub(super) fn readable(tx: &mut Transaction, source: Option<&str>) -> Result<bool> {
    Ok(Mode::now().postings() && crate::pg::words_posted() && posted(tx, source)?)
}

/// The table's rows and tokens over the texts this reader sees (of `source` when given), or
/// `None` when there is no text.
///
/// # Errors
/// Server errors.
pub(super) fn table(tx: &mut Transaction, source: Option<&str>) -> Result<Option<(i64, i64)>> {
    // Kept per source by push (pg 0005's triggers); a limited reader sums the sources it sees.
    let sql = "SELECT coalesce(sum(texts), 0)::int8, coalesce(sum(tokens), 0)::int8
               FROM sources WHERE $1::text IS NULL OR name = $1";
    let r = typed::query_one(tx, sql, &[&source])?;
    let (rows, tokens): (i64, i64) = (r.get(0), r.get(1));
    Ok((rows > 0).then_some((rows, tokens)))
}

/// How many texts hold a word starting with `prefix` (a prefix phrase's count of texts, its
/// idf), of transcripts the server still holds; `None` when the postings are not readable.
///
/// # Errors
/// Server errors; a stored row that does not decode.
pub(super) fn prefix_texts(
    tx: &mut Transaction,
    source: Option<&str>,
    prefix: &str,
) -> Result<Option<i64>> {
    if !readable(tx, source)? {
        return Ok(None);
    }
    let decoded = Decoded::read(tx, source, &[(prefix.to_string(), true)])?;
    let keys: Vec<Key> = decoded.of(prefix, true).iter().map(|t| t.0).collect();
    Ok(Some(live(tx, &decoded.sources, &keys)?))
}

/// The keys in both sorted lists (the time of the first).
fn intersection(a: &[(Key, Option<i64>)], b: &[(Key, Option<i64>)]) -> Texts {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// The keys in either sorted list, sorted, each once.
fn union(a: Texts, b: Texts) -> Texts {
    if a.is_empty() {
        return b;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i].0 <= b[j].0);
        if take_a {
            if j < b.len() && a[i].0 == b[j].0 {
                j += 1;
            }
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// The fewest texts any of `words` is in (a prefix's: its words' texts summed, each text
/// counted once a word), of the sources a search reads.
///
/// # Errors
/// Server errors.
fn rarest(tx: &mut Transaction, source: Option<&str>, words: &[(String, bool)]) -> Result<i64> {
    let mut fewest = i64::MAX;
    for (word, prefix) in words {
        let n = if *prefix {
            // `starts_with`, leakproof, as a prefix's words are listed (`Decoded::read`).
            let sql = "SELECT coalesce(sum(n), 0)::int8 FROM word_texts
                       WHERE starts_with(term, $1) AND ($2::text IS NULL OR source = $2)";
            typed::query_one(tx, sql, &[word, &source])?.get(0)
        } else {
            word_texts(tx, source, word)?
        };
        fewest = fewest.min(n);
    }
    Ok(fewest)
}

/// The texts holding `word`, from each source's counts of texts per word (pg 0019), of the
/// sources a search reads.
///
/// # Errors
/// Server errors.
pub(super) fn word_texts(tx: &mut Transaction, source: Option<&str>, word: &str) -> Result<i64> {
    let sql = "SELECT coalesce(sum(n), 0)::int8 FROM word_texts
               WHERE term = $1 AND ($2::text IS NULL OR source = $2)";
    Ok(typed::query_one(tx, sql, &[&word, &source])?.get(0))
}

/// `word` with LIKE's wildcards and escape character escaped.
fn like_escaped(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Expr {
    /// Its terms in the order written; those under a `!` only when `negated`.
    pub(super) fn terms_of(&self, negated: bool, out: &mut Vec<(String, bool)>) {
        match self {
            Expr::Term { word, prefix } => out.push((word.clone(), *prefix)),
            Expr::Phrase(words) => out.extend(words.iter().map(|w| (w.clone(), false))),
            Expr::And(xs) | Expr::Or(xs) => xs.iter().for_each(|x| x.terms_of(negated, out)),
            Expr::Not(x) if negated => x.terms_of(negated, out),
            Expr::Not(_) => {}
        }
    }

    /// The terms whose texts can match it (none under a `!`).
    fn terms(&self, out: &mut Vec<(String, bool)>) {
        self.terms_of(false, out);
    }

    /// The phrases of its terms in the order written, those under a `!` too: a term is a
    /// phrase of one word, a [`Expr::Phrase`] one of its words ([`Expr::holds`]'s places).
    pub(super) fn phrases(&self, out: &mut Vec<(Vec<String>, bool)>) {
        match self {
            Expr::Term { word, prefix } => out.push((vec![word.clone()], *prefix)),
            Expr::Phrase(words) => out.push((words.clone(), false)),
            Expr::And(xs) | Expr::Or(xs) => xs.iter().for_each(|x| x.phrases(out)),
            Expr::Not(x) => x.phrases(out),
        }
    }

    /// Whether a text whose count of each phrase ([`Expr::phrases`]) is `tfs` matches; `at`:
    /// the next phrase's place.
    pub(super) fn holds(&self, tfs: &[i64], at: &mut usize) -> bool {
        match self {
            Expr::Term { .. } | Expr::Phrase(_) => {
                *at += 1;
                tfs.get(*at - 1).is_some_and(|&tf| tf > 0)
            }
            // Every operand is walked, whatever the first ones say: each moves `at`.
            Expr::And(xs) => {
                let mut all = true;
                for x in xs {
                    all &= x.holds(tfs, at);
                }
                all
            }
            Expr::Or(xs) => {
                let mut any = false;
                for x in xs {
                    any |= x.holds(tfs, at);
                }
                any
            }
            Expr::Not(x) => !x.holds(tfs, at),
        }
    }

    /// The texts that can match it, a superset: a term's, those in every operand of an AND
    /// and in any of an OR; anything under a `!`.
    fn candidates(&self, texts_of: &dyn Fn(&str, bool) -> Texts) -> Set {
        match self {
            Expr::Term { word, prefix } => Set::Some(texts_of(word, *prefix)),
            Expr::Phrase(words) => Set::Some(
                (words.iter())
                    .map(|w| texts_of(w, false))
                    .reduce(|kept, t| intersection(&kept, &t))
                    .unwrap_or_default(),
            ),
            Expr::Not(_) => Set::All,
            Expr::And(xs) => {
                let mut kept: Option<Texts> = None;
                for x in xs {
                    if let Set::Some(t) = x.candidates(texts_of) {
                        kept = Some(match kept {
                            None => t,
                            Some(k) => intersection(&k, &t),
                        });
                    }
                }
                kept.map_or(Set::All, Set::Some)
            }
            Expr::Or(xs) => {
                let mut all = Vec::new();
                for x in xs {
                    match x.candidates(texts_of) {
                        Set::All => return Set::All,
                        Set::Some(t) => all = union(all, t),
                    }
                }
                Set::Some(all)
            }
        }
    }
}

/// The expression of a `tsquery` as this crate writes it: quoted lexemes (`''` for a quote,
/// `\\` for a backslash), `:*` after a prefix, `!`, `<->`, `&`, `|` (PostgreSQL's order of
/// binding: `!`, then `<->`, then `&`, then `|`) and parentheses. `None` for anything else:
/// the query then reads without candidates.
pub(super) fn parse(tsquery: &str) -> Option<Expr> {
    let tokens = tokens(tsquery)?;
    let mut at = 0;
    let e = or(&tokens, &mut at)?;
    (at == tokens.len()).then_some(e)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Term(String, bool),
    Not,
    Next,
    And,
    Or,
    Open,
    Close,
}

fn tokens(s: &str) -> Option<Vec<Token>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' => i += 1,
            b'!' => {
                out.push(Token::Not);
                i += 1;
            }
            b'&' => {
                out.push(Token::And);
                i += 1;
            }
            b'|' => {
                out.push(Token::Or);
                i += 1;
            }
            b'(' => {
                out.push(Token::Open);
                i += 1;
            }
            b')' => {
                out.push(Token::Close);
                i += 1;
            }
            b'<' if s[i..].starts_with("<->") => {
                out.push(Token::Next);
                i += 3;
            }
            b'\'' => {
                let mut word = Vec::new();
                i += 1;
                loop {
                    match b.get(i)? {
                        b'\'' if b.get(i + 1) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 2;
                        }
                        b'\'' => {
                            i += 1;
                            break;
                        }
                        b'\\' => {
                            word.push(*b.get(i + 1)?);
                            i += 2;
                        }
                        &c => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
                let prefix = s[i..].starts_with(":*");
                if prefix {
                    i += 2;
                }
                out.push(Token::Term(String::from_utf8(word).ok()?, prefix));
            }
            _ => return None,
        }
    }
    Some(out)
}

fn or(t: &[Token], at: &mut usize) -> Option<Expr> {
    let mut xs = vec![and(t, at)?];
    while t.get(*at) == Some(&Token::Or) {
        *at += 1;
        xs.push(and(t, at)?);
    }
    Some(if xs.len() == 1 {
        xs.remove(0)
    } else {
        Expr::Or(xs)
    })
}

fn and(t: &[Token], at: &mut usize) -> Option<Expr> {
    let mut xs = vec![next(t, at)?];
    loop {
        match t.get(*at) {
            Some(Token::And) => *at += 1,
            // Operands side by side (not written here, but FTS5's implicit AND).
            Some(Token::Term(..) | Token::Not | Token::Open) => {}
            _ => break,
        }
        xs.push(next(t, at)?);
    }
    Some(if xs.len() == 1 {
        xs.remove(0)
    } else {
        Expr::And(xs)
    })
}

/// Operands joined by `<->`: a [`Expr::Phrase`] when each is a plain word, else (a prefix or
/// an expression inside) their AND, which keeps the texts a candidate needs.
fn next(t: &[Token], at: &mut usize) -> Option<Expr> {
    let mut xs = vec![unary(t, at)?];
    while t.get(*at) == Some(&Token::Next) {
        *at += 1;
        xs.push(unary(t, at)?);
    }
    if xs.len() == 1 {
        return xs.pop();
    }
    let words: Option<Vec<String>> = (xs.iter())
        .map(|x| match x {
            Expr::Term {
                word,
                prefix: false,
            } => Some(word.clone()),
            _ => None,
        })
        .collect();
    Some(words.map_or(Expr::And(xs), Expr::Phrase))
}

fn unary(t: &[Token], at: &mut usize) -> Option<Expr> {
    let token = t.get(*at)?.clone();
    *at += 1;
    match token {
        Token::Not => Some(Expr::Not(Box::new(unary(t, at)?))),
        Token::Open => {
            let e = or(t, at)?;
            (t.get(*at) == Some(&Token::Close)).then(|| *at += 1)?;
            Some(e)
        }
        Token::Term(word, prefix) => Some(Expr::Term { word, prefix }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(w: &str, prefix: bool) -> Expr {
        Expr::Term {
            word: w.into(),
            prefix,
        }
    }

    #[test]
    fn the_tsqueries_this_crate_writes_parse() {
        let q = crate::reads::search::tsquery;
        let fts = |s: &str| match pidx_core::query::search::parse(s, false).unwrap() {
            pidx_core::query::search::Query::Words { fts, .. } => fts,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            parse(&q(&fts("foo Bar")).unwrap()),
            Some(Expr::And(vec![term("foo", false), term("bar", false)]))
        );
        assert_eq!(
            parse(&q(&fts("\"error handling\" OR pre*")).unwrap()),
            Some(Expr::Or(vec![
                Expr::Phrase(vec!["error".into(), "handling".into()]),
                term("pre", true)
            ]))
        );
        assert_eq!(
            parse(&q(&fts("a -b")).unwrap()),
            Some(Expr::And(vec![
                term("a", false),
                Expr::Not(Box::new(term("b", false)))
            ]))
        );
        assert_eq!(
            parse("'it''s' & 'a\\\\b':*"),
            Some(Expr::And(vec![term("it's", false), term("a\\b", true)]))
        );
        assert_eq!(parse("'a' &"), None);
        assert_eq!(parse("('a'"), None);
        assert_eq!(parse("a"), None);
    }

    #[test]
    fn a_text_matches_by_its_counts_of_the_terms_in_the_order_written() {
        let holds = |q: &str, tfs: &[i64]| parse(q).unwrap().holds(tfs, &mut 0);
        assert!(holds("'a' & !'b'", &[2, 0]));
        assert!(!holds("'a' & !'b'", &[2, 1]));
        assert!(holds("'a' | 'b'", &[0, 1]));
        assert!(!holds("'a' | 'b'", &[0, 0]));
        // The second operand of an OR is still counted past: `c` is the third term.
        assert!(holds("('a' | 'b') & 'c'", &[1, 0, 3]));
        assert!(!holds("('a' | 'b') & 'c'", &[1, 1, 0]));
        assert!(holds("'a' & !('b' | 'c') | 'd'", &[0, 1, 1, 1]));
        assert!(!holds("'a' & !('b' | 'c') | 'd'", &[1, 0, 1, 0]));
        // A phrase is one place, counted by where it starts, not by its words.
        assert!(holds("'a' <-> 'b' | 'c'", &[1, 0]));
        assert!(!holds("'f' & !('a' <-> 'b')", &[3, 1]));
        assert!(holds("'f' & !('a' <-> 'b')", &[3, 0]));
    }

    fn k(fid: i64) -> (Key, Option<i64>) {
        ((0, fid, 1, 0), Some(fid))
    }

    #[test]
    fn sets_combine_as_sorted_lists() {
        let a = vec![k(1), k(3), k(5)];
        let b = vec![k(2), k(3), k(6)];
        assert_eq!(intersection(&a, &b), vec![k(3)]);
        assert_eq!(union(a.clone(), b), vec![k(1), k(2), k(3), k(5), k(6)]);
        assert_eq!(union(Vec::new(), a.clone()), a);
        assert_eq!(union(a.clone(), Vec::new()), a);
    }

    #[test]
    fn an_and_with_a_not_keeps_its_positive_side_and_a_lone_not_keeps_everything() {
        let texts_of = |w: &str, _| match w {
            "a" => vec![k(1), k(2)],
            "b" => vec![k(2), k(3)],
            _ => Vec::new(),
        };
        let keys = |s: Set| match s {
            Set::All => None,
            Set::Some(t) => Some(t.iter().map(|x| x.0 .1).collect::<Vec<_>>()),
        };
        let e = |s: &str| parse(s).unwrap().candidates(&texts_of);
        assert_eq!(keys(e("'a' & !'b'")), Some(vec![1, 2]));
        assert_eq!(keys(e("!'b'")), None);
        assert_eq!(keys(e("'a' | !'b'")), None);
        assert_eq!(keys(e("'a' | 'b'")), Some(vec![1, 2, 3]));
        assert_eq!(keys(e("'a' <-> 'b'")), Some(vec![2]));
        assert_eq!(keys(e("'c' & 'a'")), Some(vec![]));
    }

    #[test]
    fn chunks_grow_and_end_between_times() {
        // 300 texts of time 9, then the rest of time 8, 7, ... one each.
        let n = 300 + 1024 + CHUNK + 10;
        let texts: Texts = (0..n as i64)
            .map(|i| ((0, i, 1, 0), Some(if i < 300 { 9 } else { -i })))
            .collect();
        let m = Matching {
            sources: vec!["s".into()],
            texts,
            limited: false,
        };
        let sizes: Vec<usize> = m
            .into_chunks()
            .map(|c| {
                let v: serde_json::Value = serde_json::from_str(&c.keys).unwrap();
                v.as_array().unwrap().len()
            })
            .collect();
        // The first chunk runs on to the end of its time's 300; then 1,024; then the most.
        assert_eq!(sizes, vec![300, 1024, CHUNK, 10]);
    }
}
