//! `pidx --pg URL search WORDS`: the local ranking on the server's rows. The local index ranks
//! a words query by FTS5's bm25 blended with recency (`query::search::ranked`); so does this,
//! with the same pieces computed from what push stored:
//!
//! - a text's length in tokens: `entry_text.ntok`, counted at push by the tokenizer that split
//!   its words (`pg::words`, FTS5's `unicode61 remove_diacritics 2` rule);
//! - the table's rows and tokens (FTS5's averages record): each source's count of texts and
//!   sum of `ntok`, kept by triggers as push writes (pg 0005), summed over the sources this
//!   reader sees (or the one `--source` names) as one index;
//! - each phrase's count of texts (its idf): the GIN index's count for one word; for a phrase of
//!   several words, the `tsquery`'s phrase operator where the `tsvector` keeps every position of
//!   its words (positions stop at 16,383 and 256 a word: `positions_kept`), and the other texts
//!   holding all its words read back and the phrase found in their tokens;
//! - each candidate's count of each phrase: its body split again by that tokenizer (reading the
//!   bodies of a common word's 12,890 texts, 34 MB, took 150-200 ms on the server; its
//!   `tsvector`'s positions through `unnest(tsvector)` took 1.0-1.1 s), or for single ASCII
//!   words found in it without splitting it (`pg::words::Counter`), with `ntok` its length.
//!
//! Scores are then `store::fts5::Bm25Sum`'s, the arithmetic `bm25(fts)` does, blended by
//! `query::search::blend`, best first, later row first on a tie, and a fork's copy of an entry
//! is one hit with it (`OneHitPerCopy`). What still differs is in docs/team.md.
//!
//! A search of one word is first tried from the texts listed under it (`heads.rs`, pg 0006,
//! which then calls [`every_match`] here only when they do not settle it); every match is
//! scored, its body read and split: the cost is measured in docs/team.md.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use postgres::types::ToSql;
use postgres::Transaction;

use super::matching::{table, Chunk, Matching};
use super::on as server;
use super::search::{filters, on_path, quoted_term, scoped, times_alias, tsquery, On};
use super::unlisted::chunks;
use crate::pg::server_err;
use crate::pg::typed;
use crate::pg::words::{lexeme, shown_tokens, words, Counter};
use pidx_core::error::Result;
use pidx_core::pi::js;
use pidx_core::pi::text::TextKind;
use pidx_core::query::search::{blend, group_by_session, terms_regex, Hit, SearchOptions};
use pidx_core::query::search::{OneHitPerCopy, Snippet};
use pidx_core::store::filter::text;
use pidx_core::store::fts5::{Bm25, Bm25Sum};
use pidx_core::store::schema::TITLE;

/// Rows read from a cursor at a time.
const BATCH: i32 = 512;

/// One FTS5 phrase of the query: its words, the last a prefix when `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Phrase {
    pub words: Vec<String>,
    pub prefix: bool,
}

impl Phrase {
    /// Whether [`prepare`] may leave this phrase's count of texts to the way that reads its
    /// postings (`later`): a phrase of several words (its texts are the places its words
    /// follow each other) or a prefix (its texts are its words' postings), both read there
    /// anyway.
    pub(super) fn counted_later(&self) -> bool {
        self.words.len() > 1 || self.prefix
    }

    /// How many times the phrase starts in `tokens` (FTS5's instances: overlapping ones too).
    pub(super) fn count(&self, tokens: &[Cow<str>]) -> i64 {
        let k = self.words.len();
        if k == 0 || tokens.len() < k {
            return 0;
        }
        let last = k - 1;
        (0..=tokens.len() - k)
            .filter(|&at| {
                self.words.iter().enumerate().all(|(j, w)| {
                    let t = &tokens[at + j];
                    if self.prefix && j == last {
                        t.starts_with(w.as_str())
                    } else {
                        t == w
                    }
                })
            })
            .count() as i64
    }

    /// Its words one after the other (`'a' <-> 'b'`), not a prefix: what the `tsquery`'s phrase
    /// operator finds where the `tsvector` keeps their positions (`positions_kept`).
    fn phrase_tsquery(&self) -> String {
        self.words
            .iter()
            .map(|w| lexeme(w))
            .collect::<Vec<_>>()
            .join(" <-> ")
    }

    /// Its words ANDed, without positions: every text holding the phrase, and a few more.
    fn words_tsquery(&self) -> String {
        let last = self.words.len().saturating_sub(1);
        self.words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let l = lexeme(w);
                if self.prefix && i == last {
                    l + ":*"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join(" & ")
    }
}

/// The phrases of the FTS5 expression `parse` wrote, in its order (bm25's), and whether the
/// expression is only their AND (no `OR`, no `NOT`).
pub(super) fn phrases(fts: &str) -> (Vec<Phrase>, bool) {
    let mut out = Vec::new();
    let mut and_only = true;
    let mut rest = fts;
    while let Some(c) = rest.chars().next() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let (body, prefix, after) = quoted_term(quoted);
            rest = after;
            let words: Vec<String> = words(&body).map(Cow::into_owned).collect();
            if !words.is_empty() {
                out.push(Phrase { words, prefix });
            }
            continue;
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        if word == "OR" || word == "NOT" {
            and_only = false;
        }
        rest = &rest[word.len().max(c.len_utf8())..];
    }
    (out, and_only)
}

/// A candidate, scored, without its body (read again for the hits shown).
#[derive(Clone)]
pub(super) struct Scored {
    pub(super) relevance: f64,
    source: String,
    fid: i64,
    seq: i64,
    kind: i16,
    path: String,
    session_id: Option<String>,
    cwd: String,
    entry_id: Option<String>,
    line: i64,
    role: Option<String>,
    ts_ms: Option<i64>,
    name: Option<String>,
    /// The session's name, else its first message, cut as the local index cuts its titles.
    title: Option<String>,
    dup: bool,
    /// The entry's own time (what copies share) and its session's header time.
    ts: Option<String>,
    created_ms: Option<i64>,
}

impl Scored {
    /// A row of the candidates' columns (`CANDIDATE`: column 9 is not read here).
    pub(super) fn of(r: &postgres::Row, relevance: f64) -> Scored {
        Scored {
            relevance,
            source: r.get(0),
            path: r.get(1),
            session_id: r.get(2),
            cwd: r.get(3),
            entry_id: r.get(4),
            line: r.get(5),
            kind: r.get(6),
            role: r.get(7),
            ts_ms: r.get(8),
            fid: r.get(10),
            name: r.get(11),
            title: r.get(12),
            seq: r.get(13),
            dup: r.get(14),
            ts: r.get(15),
            created_ms: r.get(16),
        }
    }
}

/// What scoring a words query needs before any text is read: its phrases (and whether it is
/// only their AND), the table's bm25 facts, the time recency is blended at.
pub(super) struct Prepared {
    pub exact: String,
    pub phrases: Vec<Phrase>,
    pub and_only: bool,
    pub facts: Facts,
    pub now_ms: i64,
    /// The table's rows and tokens, and each phrase's count of texts, the facts were made of.
    pub table: (i64, i64),
    pub hits: Vec<i64>,
    /// Each phrase's count of texts, as in `facts`; false while the counts of the phrases
    /// counted later ([`Phrase::counted_later`]) are not asked yet (they are 0 in `facts`
    /// until [`Prepared::count`] or [`Prepared::counted`] sets them).
    pub counted: bool,
}

impl Prepared {
    /// The facts of the phrases' counts of texts `hits` (in the phrases' order).
    pub(super) fn counted(&mut self, hits: &[i64]) {
        self.facts = Facts::new(self.table, hits);
        self.hits = hits.to_vec();
        self.counted = true;
    }

    /// Asks the server the counts [`prepare`] left for later, if any.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn count(&mut self, tx: &mut Transaction, on: &On) -> Result<()> {
        if !self.counted {
            // Only the phrases counted later are left to count; the others are in `hits`.
            let several: Vec<Phrase> = (self.phrases.iter())
                .filter(|p| p.counted_later())
                .cloned()
                .collect();
            let mut counts = phrase_counts(tx, on.source, &several, false)?.into_iter();
            let hits: Vec<i64> = (self.phrases.iter().zip(&self.hits))
                .map(|(p, &h)| {
                    if p.counted_later() {
                        counts.next().unwrap_or(0)
                    } else {
                        h
                    }
                })
                .collect();
            self.counted(&hits);
        }
        Ok(())
    }
}

/// The query's phrases and the table's facts; `None` when the server holds no text. When
/// `later` says so (given the phrases and whether they are only ANDed), the counts of texts of
/// the phrases of several words and of prefixes ([`Phrase::counted_later`]) are left to the
/// caller (`Prepared::counted`): the postings it reads find them (`postings.rs`,
/// `expression.rs`), where the server would read every text holding their words, or the
/// prefix's postings a second time.
///
/// # Errors
/// Server errors; a word too long for the server's index.
pub(super) fn prepare(
    tx: &mut Transaction,
    on: &On,
    fts: &str,
    later: impl FnOnce(&[Phrase], bool) -> bool,
) -> Result<Option<Prepared>> {
    let exact = tsquery(fts)?;
    let (phrases, and_only) = phrases(fts);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let Some(table) = table(tx, on.source)? else {
        return Ok(None);
    };
    let later = later(&phrases, and_only) && phrases.iter().any(Phrase::counted_later);
    let hits = phrase_counts(tx, on.source, &phrases, later)?;
    Ok(Some(Prepared {
        exact,
        and_only,
        facts: Facts::new(table, &hits),
        phrases,
        now_ms,
        table,
        hits,
        counted: !later,
    }))
}

/// A words search by scoring every match, best first (what `heads::search` falls back to).
///
/// # Errors
/// Server errors.
pub(super) fn every_match(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    prepared: Prepared,
) -> Result<Vec<Hit>> {
    let Prepared {
        exact,
        phrases,
        and_only,
        facts,
        now_ms,
        ..
    } = prepared;
    let mut c = scoped(on, q);
    // An AND of phrases is matched on its words and confirmed on the tokens (exact for every
    // text); anything else by the tsquery's own phrase operator.
    let matching = if and_only {
        phrases
            .iter()
            .map(Phrase::words_tsquery)
            .collect::<Vec<_>>()
            .join(" & ")
    } else {
        exact
    };
    let candidates = Matching::of(tx, on.source, &matching)?;
    c.and("t.tsv @@ (?::text)::tsquery", [text(matching)]);
    if and_only {
        // A text holding a phrase's words is read back only when the phrase operator finds the
        // phrase in its `tsvector`, or cannot tell (`positions_kept`): for `"the borrow"` at
        // 1,000 sessions, 172 of the 2,526 texts holding both words.
        for p in phrases.iter().filter(|p| p.words.len() > 1 && !p.prefix) {
            let terms = vec!["?"; p.words.len()].join(", ");
            c.and(
                format!(
                    "(t.tsv @@ (?::text)::tsquery OR NOT ({}))",
                    positions_kept(&format!("IN ({terms})"))
                ),
                std::iter::once(text(p.phrase_tsquery())).chain(p.words.iter().map(text)),
            );
        }
    }
    let times = times_alias("t");
    filters(q, on, &mut c, times);
    // Single words (no phrase, no prefix) are counted by the server where it can
    // (`count_columns`); anything else from the body.
    let singles: Option<Vec<String>> = phrases
        .iter()
        .map(|p| match p.words.as_slice() {
            [w] if !p.prefix => Some(w.clone()),
            _ => None,
        })
        .collect();
    let lexemes: Vec<String> = singles.iter().flatten().map(|w| lexeme(w)).collect();
    let counter = singles.as_deref().and_then(Counter::new);
    let mut scored = Vec::new();
    // The candidates a chunk at a time by key, each confirmed on its words; or every text.
    let runs: Box<dyn Iterator<Item = Option<Chunk>>> = match candidates {
        Some(m) => Box::new(m.into_chunks().map(Some)),
        None => Box::new(std::iter::once(None)),
    };
    for chunk in runs {
        let mut params = server::params(&c);
        let columns = count_columns(&mut params, singles.as_ref().map(|w| (w, &lexemes[..])));
        // A chunk's texts probed by their keys before the words are tested (`Chunk::probed`).
        let texts = match &chunk {
            Some(chunk) => {
                params.push(&chunk.keys);
                chunk.probed("t", params.len())
            }
            None => "entry_text t".to_string(),
        };
        // The entry only for its time and silence, which pg 0018's texts carry themselves.
        let entry = if times == "e" {
            "JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq"
        } else {
            ""
        };
        let sql = format!(
            "SELECT t.source, t.fid, t.seq, t.kind, {times}.ts_ms, {columns}
             FROM {texts}
             {entry}
             JOIN sessions s ON s.source = t.source AND s.fid = t.fid
             WHERE {}",
            c.pg_sql(),
        );
        let portal = tx.bind(sql.as_str(), &params).map_err(server_err)?;
        loop {
            let rows = tx.query_portal(&portal, BATCH).map_err(server_err)?;
            for r in &rows {
                let (tfs, len) = counts_of(r, 5, &phrases, counter.as_ref());
                if and_only && tfs.contains(&0) {
                    continue;
                }
                let ts_ms: Option<i64> = r.get(4);
                scored.push(Keyed::of(
                    r,
                    -facts.sum.score(&tfs, len) * blend(ts_ms, now_ms),
                ));
            }
            if rows.len() < BATCH as usize {
                break;
            }
        }
    }
    sort(&mut scored);
    let (hits, _) = walk(tx, on, q, terms, &scored)?;
    Ok(group_by_session(hits))
}

/// A text scored, by its key alone: its entry's and session's columns are read for the texts
/// shown only (`walk`), so a word in a hundred thousand texts holds a few bytes a match, not
/// each match's paths and title.
pub(super) struct Keyed {
    pub relevance: f64,
    pub source: String,
    pub fid: i64,
    pub seq: i64,
    pub kind: i16,
}

impl Keyed {
    /// A row whose first four columns are a text's source, file, entry and kind.
    pub(super) fn of(r: &postgres::Row, relevance: f64) -> Keyed {
        Keyed {
            relevance,
            source: r.get(0),
            fid: r.get(1),
            seq: r.get(2),
            kind: r.get(3),
        }
    }
}

/// A text to look up (`looked_up`): its key, and its score when known, else it is scored from
/// its body.
pub(super) trait Wanted {
    fn key(&self) -> (&str, i64, i64, i16);
    fn known(&self) -> Option<f64>;
}

impl Wanted for Keyed {
    fn key(&self) -> (&str, i64, i64, i16) {
        (&self.source, self.fid, self.seq, self.kind)
    }

    fn known(&self) -> Option<f64> {
        Some(self.relevance)
    }
}

/// What sorts a candidate: its score, then its row.
pub(super) trait Ranked {
    fn order(&self) -> (f64, i64, i64, i16);
}

impl Ranked for Keyed {
    fn order(&self) -> (f64, i64, i64, i16) {
        (self.relevance, self.fid, self.seq, self.kind)
    }
}

impl Ranked for Scored {
    fn order(&self) -> (f64, i64, i64, i16) {
        (self.relevance, self.fid, self.seq, self.kind)
    }
}

/// Best first, then the later row (the local index's rowid: a later file, a later line).
pub(super) fn sort<T: Ranked>(scored: &mut [T]) {
    scored.sort_by(best_first);
}

/// The order [`sort`] puts candidates in.
pub(super) fn best_first<T: Ranked>(a: &T, b: &T) -> std::cmp::Ordering {
    let (a, b) = (a.order(), b.order());
    b.0.total_cmp(&a.0)
        .then((b.1, b.2, b.3).cmp(&(a.1, a.2, a.3)))
}

/// The hits `keyed` (sorted) make under the local rules ([`Shown`]), their entries and
/// sessions looked up a chunk at a time until the hits are full; and whether they are.
///
/// # Errors
/// Server errors.
pub(super) fn walk(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    terms: &[String],
    keyed: &[Keyed],
) -> Result<(Vec<Hit>, bool)> {
    let mut shown = Shown::new(tx, q)?;
    shown.walk(tx, on, q, keyed)?;
    shown.hits(tx, terms)
}

/// The texts of `chunk` that pass the search's filters, with their entries and sessions, in
/// `chunk`'s order: each with its known score, else the one `from_body` gives its body and
/// time (left out when it gives none: no match). Only a text whose score is not known reads
/// its body, and sends it.
///
/// # Errors
/// Server errors.
pub(super) fn looked_up<T: Wanted>(
    tx: &mut Transaction,
    on: &On,
    q: &SearchOptions,
    chunk: &[T],
    from_body: impl Fn(&str, i64, Option<i64>) -> Option<f64>,
) -> Result<Vec<Scored>> {
    let keys = serde_json::Value::Array(
        chunk
            .iter()
            .map(|w| {
                let (source, fid, seq, kind) = w.key();
                serde_json::json!([source, fid, seq, kind, w.known().is_none()])
            })
            .collect(),
    );
    let (body, ntok, texts) = if chunk.iter().any(|w| w.known().is_none()) {
        (
            "CASE WHEN t.body THEN x.body END",
            "CASE WHEN t.body THEN x.ntok END",
            "JOIN entry_text x ON x.source = t.source AND x.fid = t.fid AND x.seq = t.seq
                              AND x.kind = t.kind",
        )
    } else {
        ("NULL", "NULL", "")
    };
    let mut c = scoped(on, q);
    filters(q, on, &mut c, "e");
    let keys = keys.to_string();
    let params = typed::where_params(&c, &[&keys]);
    // The keys in a subquery kept whole (`OFFSET 0`), for a limited reader's plan to probe
    // by them under its row-level policy (`matching::Chunk::within`): 1.2 s -> 34 ms for the
    // 64 keys of a word at 1,000 sessions; the same plan for anyone else.
    let sql = format!(
        "SELECT s.source, s.path, s.session_id, s.cwd, e.id, e.line, t.kind, e.role, e.ts_ms,
                {body}, s.fid, s.name, {TITLE}, e.seq, e.dup, e.ts, s.created_ms, {ntok}
         FROM (SELECT k->>0 AS source, (k->>1)::int8 AS fid, (k->>2)::int8 AS seq,
                      (k->>3)::int2 AS kind, (k->>4)::bool AS body
               FROM jsonb_array_elements(${}::text::jsonb) k OFFSET 0) t
         {texts}
         JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
         JOIN sessions s ON s.source = t.source AND s.fid = t.fid
         WHERE {}",
        params.len(),
        c.pg_sql(),
    );
    let rows = typed::query(tx, &sql, &params)?;
    let mut found: HashMap<(String, i64, i64, i16), &postgres::Row> = rows
        .iter()
        .map(|r| ((r.get(0), r.get(10), r.get(13), r.get(6)), r))
        .collect();
    let mut out = Vec::with_capacity(found.len());
    for w in chunk {
        let (source, fid, seq, kind) = w.key();
        let Some(r) = found.remove(&(source.to_string(), fid, seq, kind)) else {
            continue;
        };
        let relevance = match w.known() {
            Some(relevance) => relevance,
            None => match from_body(r.get(9), i64::from(r.get::<_, i32>(17)), r.get(8)) {
                Some(relevance) => relevance,
                None => continue,
            },
        };
        out.push(Scored::of(r, relevance));
    }
    Ok(out)
}

/// The hits as the local search shows them: on the current path with `--branch`, a fork's
/// copy of an entry one hit with it, at most `--limit`. Candidates are fed best first, each
/// batch after the last ([`Shown::feed`], or [`Shown::walk`] for keys still to look up), and
/// taken a chunk at a time (`unlisted::chunks`): each chunk's copies in other sources are asked
/// in one statement, the shown hits' bodies read in one at the end ([`Shown::hits`]). Asked one
/// candidate at a time, a rare word over ten sources holding the same sessions (ten candidates
/// a hit) took about 1,100 statements and 380 ms, against 228 ms by chunks (docs/
/// performance.md, "Where a search's time goes"); made again from the first candidate each time
/// a search read more of them, every chunk's copies were asked again (docs/performance.md,
/// "The shown hits fed once").
pub(super) struct Shown {
    copies: Copies,
    branch: bool,
    paths: HashMap<i64, HashSet<i64>>,
    hits: OneHitPerCopy,
    /// Each hit's text by what the hit keeps of it: (source, session, line, kind).
    texts: HashMap<(String, i64, i64, &'static str), (i64, i16)>,
}

impl Shown {
    /// No hit yet.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn new(tx: &mut Transaction, q: &SearchOptions) -> Result<Shown> {
        Ok(Shown {
            copies: Copies::new(tx)?,
            branch: q.branch,
            paths: HashMap::new(),
            hits: OneHitPerCopy::new(q.limit),
            texts: HashMap::new(),
        })
    }

    /// Whether `--limit` hits are shown: the candidates after the last one taken are never
    /// looked at, but those that tie it (`OneHitPerCopy`: they may only settle which copy of
    /// a shown entry is shown; [`Shown::walk`] reads on into the next chunk for them).
    pub(super) fn full(&self) -> bool {
        self.hits.full()
    }

    /// Takes `scored` (sorted, every one after those fed before) until the hits are full, and
    /// the candidates tying the last one taken; and whether they are full.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn feed(&mut self, tx: &mut Transaction, scored: &[Scored]) -> Result<bool> {
        let done = |hits: &OneHitPerCopy, s: &Scored| hits.done_before(s.relevance, s.ts_ms);
        for range in chunks(scored.len()) {
            let chunk = &scored[range];
            if done(&self.hits, &chunk[0]) {
                break;
            }
            let elsewhere = self.copies.elsewhere(tx, chunk)?;
            for (s, elsewhere) in chunk.iter().zip(elsewhere) {
                if done(&self.hits, s) {
                    return Ok(true);
                }
                if self.branch && !on_path(tx, &mut self.paths, &s.source, s.fid, s.seq)? {
                    continue;
                }
                self.add(s, elsewhere);
            }
        }
        Ok(self.full())
    }

    /// Looks `keyed` (sorted, every one after those fed before) up a chunk at a time and takes
    /// those that pass the search's filters ([`looked_up`]) until the hits are full; and
    /// whether they are.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn walk(
        &mut self,
        tx: &mut Transaction,
        on: &On,
        q: &SearchOptions,
        keyed: &[Keyed],
    ) -> Result<bool> {
        for range in chunks(keyed.len()) {
            // Once full, a chunk whose first text ties the last hit is still read: it may
            // hold the copy of that hit's entry that is shown (`OneHitPerCopy`).
            if self.full() && !self.hits.ties_last(keyed[range.start].relevance) {
                break;
            }
            let passed = looked_up(tx, on, q, &keyed[range], |_, _, _| None)?;
            self.feed(tx, &passed)?;
        }
        Ok(self.full())
    }

    fn add(&mut self, s: &Scored, elsewhere: bool) {
        let kind = TextKind::from_bits(i64::from(s.kind)).name();
        self.texts
            .insert((s.source.clone(), s.fid, s.line, kind), (s.seq, s.kind));
        let key = s
            .entry_id
            .clone()
            .zip(s.ts_ms)
            .map(|(id, ts)| (id, ts, kind));
        let hit = Hit {
            source: Some(s.source.clone()),
            path: s.path.clone(),
            session_id: s.session_id.clone(),
            cwd: s.cwd.clone(),
            title: s.title.clone().unwrap_or_default(),
            session_name: s.name.clone(),
            entry_id: s.entry_id.clone(),
            line: s.line,
            kind,
            role: s.role.clone(),
            timestamp: s.ts_ms.map(js::iso),
            score: s.relevance,
            by: pidx_core::query::search::By::Words,
            similarity: None,
            snippet: Snippet {
                text: String::new(),
                marks: Vec::new(),
            },
            also_in: Vec::new(),
            file_id: s.fid,
        };
        self.hits.add(hit, key, s.dup || elsewhere);
    }

    /// The hits with their snippets, and whether the limit was reached.
    ///
    /// # Errors
    /// Server errors.
    pub(super) fn hits(self, tx: &mut Transaction, terms: &[String]) -> Result<(Vec<Hit>, bool)> {
        let full = self.full();
        let mut hits = self.hits.hits;
        snippets(tx, terms, &self.texts, &mut hits)?;
        Ok((hits, full))
    }
}

/// Each hit's snippet, from its text's body (read in one statement).
fn snippets(
    tx: &mut Transaction,
    terms: &[String],
    texts: &HashMap<(String, i64, i64, &'static str), (i64, i16)>,
    hits: &mut [Hit],
) -> Result<()> {
    let keys: Vec<serde_json::Value> = hits
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let source = h.source.clone()?;
            let &(seq, kind) = texts.get(&(source.clone(), h.file_id, h.line, h.kind))?;
            Some(serde_json::json!([source, h.file_id, seq, kind, i]))
        })
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let keys = serde_json::Value::Array(keys).to_string();
    let rows = typed::query(
        tx,
        "SELECT k.i, t.body
             FROM (SELECT (k->>4)::int8 AS i, k->>0 AS source, (k->>1)::int8 AS fid,
                          (k->>2)::int8 AS seq, (k->>3)::int2 AS kind
                   FROM jsonb_array_elements($1::text::jsonb) k OFFSET 0) k
             JOIN entry_text t ON t.source = k.source AND t.fid = k.fid
                              AND t.seq = k.seq AND t.kind = k.kind",
        &[&keys],
    )?;
    let highlight = terms_regex(terms);
    for r in &rows {
        let at = usize::try_from(r.get::<_, i64>(0)).unwrap_or(usize::MAX);
        if let Some(h) = hits.get_mut(at) {
            h.snippet = Snippet::around(r.get(1), highlight.as_ref());
        }
    }
    Ok(())
}

/// Whether another source holds the same entry (id and time) in a session that comes first:
/// the earliest header time, then the smallest path (`store::copies`, the local rule). Push
/// marks copies within one source (`dup`); across sources only the server can tell, for a
/// chunk of candidates at a time. With one source there is nothing to look up.
struct Copies {
    sources: i64,
}

impl Copies {
    fn new(tx: &mut Transaction) -> Result<Copies> {
        let sources: i64 = typed::query_one(tx, "SELECT count(*) FROM sources", &[])?.get(0);
        Ok(Copies { sources })
    }

    /// For each of `chunk`, in its order: whether an earlier copy is in another source.
    fn elsewhere(&self, tx: &mut Transaction, chunk: &[Scored]) -> Result<Vec<bool>> {
        let mut out = vec![false; chunk.len()];
        if self.sources < 2 {
            return Ok(out);
        }
        let keys: Vec<serde_json::Value> = chunk
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let (id, ts) = (s.entry_id.as_ref()?, s.ts.as_ref()?);
                Some(serde_json::json!([
                    i,
                    s.source,
                    id,
                    ts,
                    s.created_ms,
                    s.path
                ]))
            })
            .collect();
        if keys.is_empty() {
            return Ok(out);
        }
        // Each (id, time) of the chunk once: every copy of it (the copies index, pg 0010,
        // leads with the id, so one probe a partition), each source's first copy, and the
        // first two sources; a candidate has an earlier copy elsewhere when the first source
        // other than its own comes before it. Probed per candidate and per source, a text
        // that 100 sources hold took 99 probes a copy, 20 s for a rare word at 1,000,000
        // sessions.
        let keys = serde_json::Value::Array(keys).to_string();
        let rows = typed::query(
            tx,
            "WITH k AS MATERIALIZED (
                     SELECT (e->>0)::int8 AS i, e->>1 AS source, e->>2 AS id, e->>3 AS ts,
                            coalesce((e->>4)::int8, 9223372036854775807) AS created,
                            e->>5 AS path
                     FROM jsonb_array_elements($1::text::jsonb) e),
                 firsts AS MATERIALIZED (
                     SELECT DISTINCT ON (g.id, g.ts, c.source) g.id, g.ts, c.source,
                            c.created, c.path
                     FROM (SELECT DISTINCT id, ts FROM k) g
                     CROSS JOIN LATERAL (
                         SELECT o.source, coalesce(os.created_ms, 9223372036854775807) AS created,
                                os.path
                         FROM entries o
                         JOIN sessions os ON os.source = o.source AND os.fid = o.fid
                         WHERE o.id = g.id AND o.ts = g.ts
                         OFFSET 0) c
                     ORDER BY g.id, g.ts, c.source, c.created, c.path),
                 two AS MATERIALIZED (
                     SELECT * FROM (
                         SELECT f.*, row_number() OVER (PARTITION BY f.id, f.ts
                                                        ORDER BY f.created, f.path) AS r
                         FROM firsts f) x
                     WHERE r <= 2)
                 SELECT k.i FROM k
                 WHERE EXISTS (SELECT 1 FROM two b
                               WHERE b.id = k.id AND b.ts = k.ts AND b.source <> k.source
                                 AND (b.created, b.path) < (k.created, k.path))",
            &[&keys],
        )?;
        for r in &rows {
            if let Some(e) = usize::try_from(r.get::<_, i64>(0))
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                *e = true;
            }
        }
        Ok(out)
    }
}

/// bm25 of the query (`sum`), and of each phrase alone (`each`: their idf and the mean length,
/// what bounds a text not scored yet).
pub(super) struct Facts {
    pub sum: Bm25Sum,
    pub each: Vec<Bm25>,
}

/// A text whose `tsvector` holds every position of its words: at most 16,383 tokens (the
/// largest position), short enough for its positions to fit (`pg::words::TsVector` keeps them
/// while the words and positions take at most 500,000 bytes: a token takes at most twice its
/// bytes folded, plus 5), and none of the words (`$2`) more than 256 times (the positions kept
/// a word). A word more than 256 times in a text of at most 16,383 tokens weighs at least 1.79
/// there at the mean length 256, so the text is listed under it (`pg::heads`): the texts listed
/// so are the ones left out.
pub(super) fn positions_kept(terms: &str) -> String {
    format!(
        "t.ntok <= 16383 AND 2 * octet_length(t.body) + 5 * t.ntok <= 500000
         AND (t.source, t.fid, t.seq, t.kind) NOT IN
             (SELECT h.source, h.fid, h.seq, h.kind FROM text_heads h
              WHERE h.term {terms} AND h.tf > 256)"
    )
}

/// A query's values to bind on PostgreSQL, in placeholder order (`on::params`).
pub(super) type Params<'a> = Vec<&'a (dyn ToSql + Sync)>;

/// The columns a text is counted from (`counts_of`): its body and its length in tokens, then,
/// when every phrase is a single word (`singles`: the words and their lexemes, bound after
/// `params`), each word's count as the server reads it from the text's `tsvector`, which holds
/// a position per occurrence: `ts_rank_cd` with every weight 1 and no normalisation is the
/// count of a one-word query's covers, its positions. Only a text whose positions are not all
/// kept (`positions_kept`) then sends its body: `regression` at 10,000 sessions is held by
/// 27,870 texts, 283 MB.
pub(super) fn count_columns<'a>(
    params: &mut Params<'a>,
    singles: Option<(&'a Vec<String>, &'a [String])>,
) -> String {
    let Some((words, lexemes)) = singles else {
        return "t.body, t.ntok".to_string();
    };
    params.push(words);
    let mut columns = format!(
        "CASE WHEN {} THEN NULL ELSE t.body END, t.ntok",
        positions_kept(&format!("= ANY(${})", params.len()))
    );
    for l in lexemes {
        params.push(l);
        columns.push_str(&format!(
            ", ts_rank_cd('{{1,1,1,1}}', t.tsv, (${}::text)::tsquery, 0)::int8",
            params.len()
        ));
    }
    columns
}

/// A text's count of each of `phrases` and its length in tokens, from the `count_columns`
/// starting at column `at`: the server's counts when it sent no body; else single ASCII words
/// found in the body by `counter` without splitting it, its length `ntok` (`error` at 10,002
/// sessions read back 106,089 texts, 596 MB, whose splitting took most of a 17 s search); else
/// the body split and each phrase counted in its tokens.
pub(super) fn counts_of(
    r: &postgres::Row,
    at: usize,
    phrases: &[Phrase],
    counter: Option<&Counter>,
) -> (Vec<i64>, i64) {
    let body: Option<&str> = r.get(at);
    let ntok: Option<i32> = r.get(at + 1);
    match (body, counter, ntok) {
        (None, _, Some(ntok)) => {
            let tfs = (0..phrases.len()).map(|i| r.get(at + 2 + i)).collect();
            (tfs, i64::from(ntok))
        }
        (Some(body), Some(counter), Some(ntok)) => (counter.count_shown(body), i64::from(ntok)),
        (body, _, ntok) => {
            let tokens = shown_tokens(body.unwrap_or_default());
            let tfs = phrases.iter().map(|p| p.count(&tokens)).collect();
            (tfs, ntok.map_or(tokens.len() as i64, i64::from))
        }
    }
}

/// How many texts hold `p`, a phrase of several words (its idf's count), the texts holding all
/// its words being candidates. One whose positions are all kept (`positions_kept`) holds it
/// exactly when the `tsquery`'s phrase operator finds it there: those are counted by the server
/// (their `tsvector` read, not their body); the others are read back and the phrase looked for
/// in their tokens.
fn phrase_texts(tx: &mut Transaction, source: Option<&str>, p: &Phrase) -> Result<i64> {
    let candidates = Matching::of(tx, source, &p.words_tsquery())?;
    let runs: Box<dyn Iterator<Item = Option<Chunk>>> = match candidates {
        Some(m) => Box::new(m.into_chunks().map(Some)),
        None => Box::new(std::iter::once(None)),
    };
    let mut n = 0;
    for chunk in runs {
        n += phrase_texts_of(tx, source, p, chunk.as_ref())?;
    }
    Ok(n)
}

/// [`phrase_texts`] over the texts `chunk` keys (`Matching::chunks`), or every text.
fn phrase_texts_of(
    tx: &mut Transaction,
    source: Option<&str>,
    p: &Phrase,
    chunk: Option<&Chunk>,
) -> Result<i64> {
    let mut only = if source.is_some() {
        " AND t.source = $3".to_string()
    } else {
        String::new()
    };
    if let Some(chunk) = chunk {
        let at = if source.is_some() { 4 } else { 3 };
        only.push_str(&format!(
            " AND {}",
            chunk.within("t").replace('?', &format!("${at}"))
        ));
    }
    let chunk = chunk.map(|c| c.keys.as_str());
    let terms: Vec<String> = p.words.clone();
    let run = |tx: &mut Transaction, sql: &str, q: &String| match (source, chunk) {
        (Some(s), Some(k)) => tx.bind(sql, &[q, &terms, &s, &k]),
        (Some(s), None) => tx.bind(sql, &[q, &terms, &s]),
        (None, Some(k)) => tx.bind(sql, &[q, &terms, &k]),
        (None, None) => tx.bind(sql, &[q, &terms]),
    };
    let mut n = 0;
    if !p.prefix {
        let phrase = p
            .words
            .iter()
            .map(|w| lexeme(w))
            .collect::<Vec<_>>()
            .join(" <-> ");
        let sql = format!(
            "SELECT count(*) FROM entry_text t
             WHERE t.tsv @@ ($1::text)::tsquery AND {}{only}",
            positions_kept("= ANY($2)")
        );
        let portal = run(tx, &sql, &phrase).map_err(server_err)?;
        let rows = tx.query_portal(&portal, 1).map_err(server_err)?;
        n += rows[0].get::<_, i64>(0);
    }
    let rest = if p.prefix {
        format!("($2::text[] IS NOT NULL){only}")
    } else {
        format!("NOT ({}){only}", positions_kept("= ANY($2)"))
    };
    let sql =
        format!("SELECT t.body FROM entry_text t WHERE t.tsv @@ ($1::text)::tsquery AND {rest}");
    let portal = run(tx, &sql, &p.words_tsquery()).map_err(server_err)?;
    loop {
        let rows = tx.query_portal(&portal, BATCH).map_err(server_err)?;
        for r in &rows {
            n += i64::from(p.count(&shown_tokens(r.get(0))) > 0);
        }
        if rows.len() < BATCH as usize {
            break;
        }
    }
    Ok(n)
}

/// Each phrase's count of texts over the texts this reader sees (of `source` when given);
/// 0 for the phrases counted later ([`Phrase::counted_later`]) when `later`.
fn phrase_counts(
    tx: &mut Transaction,
    source: Option<&str>,
    phrases: &[Phrase],
    later: bool,
) -> Result<Vec<i64>> {
    let only = if source.is_some() {
        " AND t.source = $2"
    } else {
        ""
    };
    let mut hits = Vec::with_capacity(phrases.len());
    // Each source's count of texts per word, kept by push (pg 0019), unless the reader is a
    // limited one that does not read every source here whole (pg 0027), who reads none of them
    // and counts the texts it sees (asked of the server only when a phrase is one word).
    let one_word = |p: &Phrase| p.words.len() == 1 && !p.prefix;
    let counted = crate::pg::words_counted()
        && phrases.iter().any(one_word)
        && super::matching::whole(tx, source, false)?;
    for p in phrases {
        if later && p.counted_later() {
            hits.push(0);
            continue;
        }
        let q = p.words_tsquery();
        if let ([word], true) = (p.words.as_slice(), counted && one_word(p)) {
            hits.push(super::matching::word_texts(tx, source, word)?);
            continue;
        }
        if let ([word], true) = (p.words.as_slice(), p.prefix) {
            // A prefix's count of texts from its words' postings (`matching`), when readable.
            if let Some(n) = super::matching::prefix_texts(tx, source, word)? {
                hits.push(n);
                continue;
            }
        }
        if p.words.len() == 1 {
            let sql = format!(
                "SELECT count(*) FROM entry_text t WHERE t.tsv @@ ($1::text)::tsquery{only}"
            );
            // Only a limited reader's count (the others read `word_texts`): before pg 0026
            // the words index answered it exactly (no row to recheck), though PostgreSQL 15
            // still reads every page holding a match (pg 0019); for a word in most texts the
            // planner would rather read every row's words (`the` at 1,000 sessions: 120-160 ms
            // against 23 ms), so the count is told to use the index. Since, it reads the
            // texts the reader sees.
            let indexed = !crate::pg::words_unindexed();
            if indexed {
                tx.batch_execute("SET LOCAL enable_seqscan = off")
                    .map_err(server_err)?;
            }
            let r = match source {
                Some(s) => tx.query_one(sql.as_str(), &[&q, &s]),
                None => tx.query_one(sql.as_str(), &[&q]),
            }
            .map_err(server_err)?;
            if indexed {
                tx.batch_execute("SET LOCAL enable_seqscan TO DEFAULT")
                    .map_err(server_err)?;
            }
            hits.push(r.get::<_, i64>(0));
            continue;
        }
        hits.push(phrase_texts(tx, source, p)?);
    }
    Ok(hits)
}

impl Facts {
    /// bm25's table-wide facts: the table's rows and tokens, each phrase's count of texts.
    fn new((rows, tokens): (i64, i64), hits: &[i64]) -> Facts {
        Facts {
            sum: Bm25Sum::new(rows, tokens, hits),
            each: hits.iter().map(|&h| Bm25::new(rows, tokens, h)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fts(q: &str) -> String {
        match pidx_core::query::search::parse(q, false).unwrap() {
            pidx_core::query::search::Query::Words { fts, .. } => fts,
            other => panic!("{other:?}"),
        }
    }

    fn p(words: &[&str], prefix: bool) -> Phrase {
        Phrase {
            words: words.iter().map(|w| w.to_string()).collect(),
            prefix,
        }
    }

    #[test]
    fn the_query_is_read_as_fts5_reads_it() {
        assert_eq!(
            phrases(&fts("foo Bar")),
            (vec![p(&["foo"], false), p(&["bar"], false)], true)
        );
        assert_eq!(
            phrases(&fts("\"error handling\" main.rs")),
            (
                vec![p(&["error", "handling"], false), p(&["main", "rs"], false)],
                true
            )
        );
        assert_eq!(phrases(&fts("pre*")), (vec![p(&["pre"], true)], true));
        assert!(!phrases(&fts("a OR b")).1);
        assert!(!phrases(&fts("a -b")).1);
    }

    #[test]
    fn a_phrase_counts_every_place_it_starts() {
        let tokens: Vec<Cow<str>> = words("a a a b; Parse-line parser").collect();
        assert_eq!(p(&["a", "a"], false).count(&tokens), 2);
        assert_eq!(p(&["a", "b"], false).count(&tokens), 1);
        assert_eq!(p(&["pars"], true).count(&tokens), 2);
        assert_eq!(p(&["parse", "line"], false).count(&tokens), 1);
        assert_eq!(p(&["b", "a"], false).count(&tokens), 0);
    }
}
