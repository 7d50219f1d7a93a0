//! `pidx --pg URL search`: full text on the server. The query language is the local one
//! (`query::search::parse`: words, "phrases", prefix*, -excluded, OR), turned into a `tsquery`
//! over the words push stored (`pg::words`, split as the local index splits them).
//! `--literal` takes its candidates from the words the needle must contain and keeps the texts
//! that hold it exactly (`strpos`); `re:` takes its candidates from the words of the literal
//! runs every match contains (`query::search::required_runs`) and confirms each text with the
//! Rust `regex` crate, as locally, reading the candidates a few hundred at a time from a
//! cursor. Without words (`re:[0-9]+`), or without postings to read, every text is read, a
//! window of times at a time (`Windows`). `--branch` keeps the entries on each session's current path (its leaf's
//! ancestors, walked on the server as `store::schema::ANCESTORS`). Each hit names its source;
//! hits come grouped by session, best session first, as locally.
//!
//! Words are ranked as locally, by bm25 blended with recency (`ranked.rs`). The candidates of
//! a literal or a pattern are the texts its words' postings name (`matching.rs`), newest
//! first; a literal that is a piece of a single word (inside it at both ends) takes the
//! texts of every word holding the piece, as the local index looks the piece up in its
//! vocabulary.

use std::collections::{HashMap, HashSet};

use postgres::Transaction;
use regex::Regex;

use super::matching::{Chunk, Matching};
use super::on as server;
use crate::pg::server_err;
use crate::pg::words::{lexeme, phrase, word_char, words};
use pidx_core::error::{Error, Result};
use pidx_core::pi::js;
use pidx_core::pi::text::TextKind;
use pidx_core::query::search::SearchOptions;
use pidx_core::query::search::{group_by_session, required_runs, Hit, Query};
use pidx_core::query::search::{OneHitPerCopy, Snippet};
use pidx_core::store::filter::{int, text, Where};
use pidx_core::store::schema::TITLE;

/// What a server search reads besides its options: `--source`, and gateways' silent
/// `NO_REPLY` turns too (`include_silent`).
pub struct On<'a> {
    pub source: Option<&'a str>,
    pub include_silent: bool,
}

/// How a candidate text is confirmed and its snippet cut.
pub(super) enum Matcher {
    Literal(String),
    Regex(Regex),
    /// Every text (a meaning hit), its snippet from its start as locally.
    Whole,
}

impl Matcher {
    fn snippet(&self, body: &str) -> Option<Snippet> {
        match self {
            Matcher::Literal(n) => Some(match body.find(n.as_str()) {
                Some(at) => Snippet::at(body, at, at + n.len()),
                None => Snippet::around(body, None),
            }),
            Matcher::Regex(re) => re.find(body).map(|m| Snippet::at(body, m.start(), m.end())),
            Matcher::Whole => Some(Snippet::around(body, None)),
        }
    }
}

/// Candidate texts read from the cursor at a time.
const BATCH: i32 = 256;

/// Runs a literal or regex search, newest first (words: `ranked::search`); texts of one time
/// in the local index's order, the later row first (`ranked::best_first`: a later file, line,
/// kind of text), as its rowid puts them (`query::search::newest`).
///
/// # Errors
/// Server errors (a query PostgreSQL cannot parse is reported as such).
pub fn search(tx: &mut Transaction, on: &On, q: &SearchOptions) -> Result<Vec<Hit>> {
    let mut c = scoped(on, q);
    let (matcher, score, body, mut words) = candidates(q, &mut c)?;
    // A literal starting inside a word: its first piece ends one of the words its texts hold
    // (alone, `unwrap()`, it is the only word the needle gives, as the local plan takes it);
    // so does each literal run of a pattern (`re:filter \w+ value`), planned as a literal is,
    // as locally (`query::search::required`).
    let needles = match &q.query {
        Query::Literal(needle) => vec![needle.clone()],
        Query::Regex(re) => required_runs(re.as_str()),
        Query::Words { .. } => Vec::new(),
    };
    let others: Vec<(String, bool)> = needles
        .iter()
        .filter_map(|n| needle_words(n))
        .flatten()
        .collect();
    for needle in &needles {
        if let Some(piece) = first_piece(needle) {
            match Matching::ending(tx, on.source, &piece, &others)? {
                Some(ends) if ends.is_empty() => return Ok(Vec::new()),
                Some(ends) => {
                    let any: Vec<String> = ends.iter().map(|e| lexeme(e)).collect();
                    let any = format!("({})", any.join(" | "));
                    words = Some(match words {
                        Some(rest) => format!("{any} & {rest}"),
                        None => any,
                    });
                }
                None => {}
            }
        }
    }
    filters(q, on, &mut c, "e");
    let sql_of = |run: &Run| {
        let texts = match &run.keys {
            Some(chunk) => chunk.probed("t", run.c.values().len() + 1),
            None => "entry_text t".to_string(),
        };
        format!(
            "SELECT s.source, s.path, s.session_id, s.cwd, e.id, e.line, t.kind, e.role, e.ts_ms,
                    {score} AS score, {body}, s.fid, s.name, {TITLE}, e.seq, e.dup
             FROM {texts}
             JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
             JOIN sessions s ON s.source = t.source AND s.fid = t.fid
             WHERE {} ORDER BY score DESC, e.ts_ms DESC NULLS LAST, t.fid DESC, t.seq DESC, t.kind DESC",
            run.c.pg_sql(),
        )
    };
    let matching = match (&words, &q.query) {
        (Some(w), _) => Matching::of(tx, on.source, w)?,
        (None, Query::Literal(needle)) => match piece_of_a_word(needle) {
            Some(piece) => Matching::inside(tx, on.source, &piece)?,
            None => None,
        },
        (None, _) => None,
    };
    // The candidates newest first, a chunk at a time, each chunk ordered as the hits are (a
    // chunk ends between times), so the first chunks fill the hits; or, when the postings do
    // not say which, every text (under the words' `tsquery`) a window of times at a time.
    let hits = match (matching, words) {
        (Some(m), _) => {
            let mut chunks = m.into_chunks().map(move |chunk| Run {
                c: c.clone(),
                keys: Some(chunk),
            });
            // Read from a cursor whatever the query: a fork's copied entry is one hit (as
            // locally), so a plain `LIMIT` could leave the page short.
            confirmed(tx, |_| Ok(chunks.next()), sql_of, q, &matcher)?
        }
        (None, words) => {
            if let Some(w) = words {
                c.and("t.tsv @@ (?::text)::tsquery", [text(w)]);
            }
            let mut windows = Windows::default();
            let mut next =
                |tx: &mut Transaction| Ok(windows.next(tx, &c)?.map(|c| Run { c, keys: None }));
            confirmed(tx, &mut next, sql_of, q, &matcher)?
        }
    };
    Ok(group_by_session(hits))
}

/// The text condition of the query (added to `c`), its matcher, the score and body columns,
/// and the `tsquery` of the words every match holds, if any (its candidates: `Matching`).
fn candidates(
    q: &SearchOptions,
    c: &mut Where,
) -> Result<(Matcher, String, String, Option<String>)> {
    let by_time = "0::float8".to_string();
    Ok(match &q.query {
        Query::Words { .. } => {
            return Err(Error::Invalid(
                "a words query is ranked by reads::ranked, not here".into(),
            ))
        }
        Query::Literal(needle) => {
            c.and("strpos(t.body, ?) > 0", [text(needle.as_str())]);
            // The literal's window starts before its first occurrence, which may lie past 4000.
            let body = format!(
                "substr(t.body, greatest(1, strpos(t.body, ${}) - 300), 4000)",
                c.values().len()
            );
            (
                Matcher::Literal(needle.clone()),
                by_time,
                body,
                literal_words(needle),
            )
        }
        Query::Regex(re) => {
            let runs: Vec<String> = required_runs(re.as_str())
                .iter()
                .filter_map(|r| literal_words(r))
                .collect();
            let words = (!runs.is_empty()).then(|| runs.join(" & "));
            (Matcher::Regex(re.clone()), by_time, "t.body".into(), words)
        }
    })
}

/// The conditions every search starts from: the reader's source (`--source`) and `--cwd`.
pub(super) fn scoped(on: &On, q: &SearchOptions) -> Where {
    let mut c = server::source(on.source);
    if let Some(cwd) = &q.cwd {
        server::cwd(&mut c, cwd);
    }
    c
}

/// `--in`, `--since`, `--until`, `--model`, `--session` and silent turns; `times`: the alias
/// whose `ts_ms` and `silent` they read, the entry's (`e`) or, from pg 0018 on, a text's
/// copy of them ([`times_alias`]).
pub(super) fn filters(q: &SearchOptions, on: &On, c: &mut Where, times: &str) {
    if !q.kinds.is_empty() {
        // Typed as the values bound (bigint): `t.kind` is a smallint.
        let kinds = vec!["?::int8"; q.kinds.len()].join(", ");
        c.and(
            format!("t.kind IN ({kinds})"),
            q.kinds.iter().map(|k| int(*k as i64)),
        );
    }
    if let Some(t) = q.since_ms {
        c.and(format!("{times}.ts_ms >= ?"), [int(t)]);
    }
    if let Some(t) = q.until_ms {
        c.and(format!("{times}.ts_ms < ?"), [int(t)]);
    }
    if let Some(m) = &q.model {
        // SQLite's `model LIKE '%' || ? || '%'`: no escape character, ASCII letters folded.
        c.and(
            "EXISTS (SELECT 1 FROM entries m WHERE m.source = s.source AND m.fid = s.fid
                     AND translate(m.model, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
                         LIKE '%' || translate(?, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') || '%'
                         ESCAPE '')",
            [text(m.as_str())],
        );
    }
    if let Some(fid) = q.file_id {
        // The server's file ids are unique across sources (one identity column).
        c.and("s.fid = ?", [int(fid)]);
    }
    if !on.include_silent {
        c.and(format!("NOT {times}.silent"), []);
    }
}

/// `text` when the server's texts carry their entry's time and silence (pg 0018), else `e`:
/// the alias [`filters`] reads them from where a query has a text `text` and its entry `e`.
pub(super) fn times_alias(text: &'static str) -> &'static str {
    if crate::pg::times_on_texts() {
        text
    } else {
        "e"
    }
}

/// One statement of a search: the texts under `c`, or only those a chunk of candidates keys
/// (each probed by its key, `Chunk::probed`).
struct Run {
    c: Where,
    keys: Option<Chunk>,
}

/// The first `limit` candidates the matcher confirms (and, with `--branch`, on their
/// session's current path), each copied entry once, read from a cursor a batch at a time.
fn confirmed(
    tx: &mut Transaction,
    mut runs: impl FnMut(&mut Transaction) -> Result<Option<Run>>,
    sql_of: impl Fn(&Run) -> String,
    q: &SearchOptions,
    matcher: &Matcher,
) -> Result<Vec<Hit>> {
    let mut hits = Feed::new(q);
    while let Some(run) = runs(tx)? {
        let sql = sql_of(&run);
        let mut params = server::params(&run.c);
        if let Some(chunk) = &run.keys {
            params.push(&chunk.keys);
        }
        let portal = tx.bind(sql.as_str(), &params).map_err(server_err)?;
        loop {
            let rows = tx.query_portal(&portal, BATCH).map_err(server_err)?;
            for r in &rows {
                // Newest first: a hit's score is its time.
                let ts: Option<i64> = r.get(8);
                if !hits.take(tx, r, ts.unwrap_or(0) as f64, matcher, |_| ())? {
                    return Ok(hits.hits());
                }
            }
            if rows.len() < BATCH as usize {
                break;
            }
        }
        // The next run's texts are older (windows and chunks end between times): none ties
        // the last hit.
        if hits.full() {
            break;
        }
    }
    Ok(hits.hits())
}

/// Candidate rows (the columns [`hit`] reads) taken in the hits' order into the hits the
/// local rules show: `--branch`'s current path, each copied entry once, `--limit`
/// (`OneHitPerCopy`). A literal's, a pattern's and a meaning search's rows go this way.
pub(super) struct Feed {
    hits: OneHitPerCopy,
    branch: bool,
    /// Each session's current path (`--branch`), by file id (unique across sources).
    paths: HashMap<i64, HashSet<i64>>,
}

impl Feed {
    pub(super) fn new(q: &SearchOptions) -> Feed {
        Feed {
            hits: OneHitPerCopy::new(q.limit),
            branch: q.branch,
            paths: HashMap::new(),
        }
    }

    /// Takes row `r`, which scores `score`, as a hit of `matcher` (`shape` then sets what the
    /// row does not say); `false` once no later row can change the hits: they are full and
    /// `score` is below the last one's (a candidate tying it may still settle which copy of
    /// an entry is shown).
    ///
    /// # Errors
    /// Server errors (`--branch`'s paths).
    pub(super) fn take(
        &mut self,
        tx: &mut Transaction,
        r: &postgres::Row,
        score: f64,
        matcher: &Matcher,
        shape: impl FnOnce(&mut Hit),
    ) -> Result<bool> {
        let ts: Option<i64> = r.get(8);
        if self.hits.done_before(score, ts) {
            return Ok(false);
        }
        if self.branch {
            let source: &str = r.get(0);
            if !on_path(tx, &mut self.paths, source, r.get(11), r.get(14))? {
                return Ok(true);
            }
        }
        if let Some(mut h) = hit(r, matcher) {
            shape(&mut h);
            let key = h.entry_id.clone().zip(ts).map(|(id, ts)| (id, ts, h.kind));
            self.hits.add(h, key, r.get(15));
        }
        Ok(true)
    }

    /// Whether `--limit` hits are taken.
    pub(super) fn full(&self) -> bool {
        self.hits.full()
    }

    pub(super) fn hits(self) -> Vec<Hit> {
        self.hits.hits
    }
}

/// A search that reads every text it sees, a window of its entries' times at a time, newest
/// first: about [`Windows::FIRST`] entries of the newest times, then four times more, up to
/// [`Windows::MOST`] windows, then every older entry and those without a time at once. Each
/// window is read in the hits' order, and the windows partition the texts by time, so the
/// hits come as from one query over every text; that one query sorted every text before its
/// first row (`re:[0-9]+` or `--literal e.` at 100,000 sessions: 5-6 s), where the first window
/// usually fills the hits. The rest is one query: a window's entries are found by their
/// times' index and each text by its key, which for most of the table is slower than the
/// scan of it that one query makes (a needle in no text read 4 times slower so).
#[derive(Default)]
struct Windows {
    /// The least time read so far (the next window's times are below it).
    below: Option<i64>,
    /// Entries in the last window, and windows read (the rest counts as one past
    /// [`Windows::MOST`]).
    size: i64,
    read: usize,
}

impl Windows {
    const FIRST: i64 = 4096;
    const MOST: usize = 2;

    /// `base` kept to the next window, or `None` when every one has been read.
    fn next(&mut self, tx: &mut Transaction, base: &Where) -> Result<Option<Where>> {
        if self.read > Self::MOST {
            return Ok(None);
        }
        let mut c = base.clone();
        if self.read == Self::MOST {
            self.read += 1;
            if let Some(b) = self.below {
                c.and("(e.ts_ms < ? OR e.ts_ms IS NULL)", [int(b)]);
            }
            return Ok(Some(c));
        }
        self.read += 1;
        self.size = if self.size == 0 {
            // `PIDX_PG_WINDOW`: another first window (the tests' small corpus has fewer entries
            // than the default's).
            std::env::var("PIDX_PG_WINDOW")
                .ok()
                .and_then(|v| v.parse::<i64>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(Self::FIRST)
        } else {
            self.size.saturating_mul(4)
        };
        // The time of the window's oldest entry: the windows are cut on the entries' own
        // index of times (pg 0001's `entries_by_ts`), whatever the search's filters.
        let least: Option<i64> = tx
            .query_opt(
                "SELECT ts_ms FROM entries WHERE ts_ms < $1 ORDER BY ts_ms DESC OFFSET $2 LIMIT 1",
                &[&self.below.unwrap_or(i64::MAX), &(self.size - 1)],
            )
            .map_err(server_err)?
            .map(|r| r.get(0));
        match least {
            Some(t) => {
                c.and("e.ts_ms >= ?", [int(t)]);
                if let Some(b) = self.below {
                    c.and("e.ts_ms < ?", [int(b)]);
                }
                self.below = Some(t);
            }
            // Fewer entries left than the window holds: the rest at once.
            None => {
                self.read = Self::MOST;
                return self.next(tx, base);
            }
        }
        Ok(Some(c))
    }
}

/// The leaf-to-root walk of `store::schema::ANCESTORS`, seqs only.
const PATH_SEQS: &str = "
WITH RECURSIVE walk(depth, seq, parent_id) AS (
    SELECT 0::bigint, seq, parent_id FROM entries WHERE source = $1 AND fid = $2 AND seq = $3
    UNION ALL
    SELECT w.depth + 1, e.seq, e.parent_id
    FROM walk w JOIN entries e
      ON e.source = $1 AND e.fid = $2 AND e.id = w.parent_id AND NOT e.shadowed
    WHERE w.parent_id <> '' AND w.depth < $4
)
SELECT seq FROM walk";

/// Whether a candidate row's entry is on its session's current path (pi's default leaf's
/// ancestors), each session's path read once.
pub(super) fn on_path(
    tx: &mut Transaction,
    paths: &mut HashMap<i64, HashSet<i64>>,
    source: &str,
    fid: i64,
    seq: i64,
) -> Result<bool> {
    if !paths.contains_key(&fid) {
        let (leaf, entries): (Option<i64>, i64) = tx
            .query_one(
                "SELECT leaf_seq, entry_count FROM sessions WHERE source = $1 AND fid = $2",
                &[&source, &fid],
            )
            .map(|r| (r.get(0), r.get(1)))
            .map_err(server_err)?;
        let seqs = match leaf {
            Some(leaf) => tx
                .query(PATH_SEQS, &[&source, &fid, &leaf, &entries])
                .map_err(server_err)?
                .iter()
                .map(|r| r.get(0))
                .collect(),
            None => HashSet::new(),
        };
        if paths.len() >= 10_000 {
            paths.clear();
        }
        paths.insert(fid, seqs);
    }
    Ok(paths.get(&fid).is_some_and(|s| s.contains(&seq)))
}

/// A result row as the local search's hit, with its snippet cut here; `None` when the text
/// does not match after all (a regular expression's candidate).
pub(super) fn hit(r: &postgres::Row, matcher: &Matcher) -> Option<Hit> {
    let body: &str = r.get(10);
    let snippet = matcher.snippet(body)?;
    let ts_ms: Option<i64> = r.get(8);
    let name: Option<String> = r.get(12);
    Some(Hit {
        source: Some(r.get(0)),
        path: r.get(1),
        session_id: r.get(2),
        cwd: r.get(3),
        title: r.get::<_, Option<String>>(13).unwrap_or_default(),
        session_name: name,
        entry_id: r.get(4),
        line: r.get(5),
        kind: TextKind::from_bits(i64::from(r.get::<_, i16>(6))).name(),
        role: r.get(7),
        timestamp: ts_ms.map(js::iso),
        // As locally: literal and regex hits rank newest first.
        score: ts_ms.unwrap_or(0) as f64,
        by: pidx_core::query::search::By::Words,
        similarity: None,
        snippet,
        also_in: Vec::new(),
        file_id: r.get(11),
    })
}

/// One quoted term of an FTS5 expression `parse` wrote, `quoted` starting after its opening
/// quote (`"..."` with `""` for a quote inside, `*` after a prefix): its text, whether it is a
/// prefix, and the expression after it.
pub(super) fn quoted_term(quoted: &str) -> (String, bool, &str) {
    let mut text = String::new();
    let mut end = 0;
    let b = quoted.as_bytes();
    while end < b.len() {
        if b[end] == b'"' {
            if b.get(end + 1) == Some(&b'"') {
                text.push('"');
                end += 2;
                continue;
            }
            break;
        }
        let ch = quoted[end..].chars().next().unwrap_or_default();
        text.push(ch);
        end += ch.len_utf8();
    }
    let rest = &quoted[(end + 1).min(quoted.len())..];
    match rest.strip_prefix('*') {
        Some(rest) => (text, true, rest),
        None => (text, false, rest),
    }
}

/// The `tsquery` of the FTS5 expression `parse` wrote (quoted terms, `*` after a prefix, AND,
/// OR, NOT and parentheses): each term the phrase of its words.
///
/// # Errors
/// `Invalid` for a word too long for the server's index.
pub(super) fn tsquery(fts: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = fts;
    while let Some(c) = rest.chars().next() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let (text, prefix, after) = quoted_term(quoted);
            rest = after;
            if words(&text).any(|w| w.len() > 2047) {
                return Err(Error::Invalid(
                    "a word longer than 2047 bytes cannot be searched on the server; use --literal"
                        .into(),
                ));
            }
            out.push_str(&phrase(&text, prefix).unwrap_or_else(|| lexeme("")));
            continue;
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        match word.as_str() {
            "AND" => out.push_str(" & "),
            "OR" => out.push_str(" | "),
            "NOT" => out.push_str(" & !"),
            _ => {
                if c == '(' || c == ')' {
                    out.push(c);
                }
                rest = &rest[c.len_utf8()..];
                continue;
            }
        }
        rest = &rest[word.len()..];
    }
    Ok(out)
}

/// The first piece of a needle that starts inside a word and ends before the needle does (a
/// piece `literal_words` drops: it may end a longer word), folded as the words are. A needle
/// of one piece only is inside a word at both ends (`piece_of_a_word`).
fn first_piece(needle: &str) -> Option<String> {
    if !needle.chars().next().is_some_and(word_char) || needle.chars().all(word_char) {
        return None;
    }
    let piece = words(needle).next()?.into_owned();
    (piece.len() <= 2047).then_some(piece)
}

/// A needle of letters and digits only (inside one word at both ends), folded as the words
/// are: the piece every word holding it contains (`Matching::inside`).
fn piece_of_a_word(needle: &str) -> Option<String> {
    if needle.is_empty() || !needle.chars().all(word_char) {
        return None;
    }
    let mut words = words(needle);
    let piece = words.next()?.into_owned();
    (words.next().is_none() && piece.len() <= 2047).then_some(piece)
}

/// The words every text containing `needle` holds (as `query::search`'s literal plan): pieces
/// between separators are whole words; the first is dropped when the needle starts inside a
/// word (it may end a longer one), the last is a prefix when it ends inside one. ANDed rather
/// than a phrase: positions past the server's limits (16,383, 256 per word) are not kept.
fn literal_words(needle: &str) -> Option<String> {
    let usable = needle_words(needle)?;
    Some(
        (usable.iter())
            .map(|(w, prefix)| {
                let l = lexeme(w);
                if *prefix {
                    l + ":*"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join(" & "),
    )
}

/// [`literal_words`] as words, each with whether it is a prefix (the last one, when the needle
/// ends inside a word).
fn needle_words(needle: &str) -> Option<Vec<(String, bool)>> {
    let word_at = |c: Option<char>| c.is_some_and(word_char);
    let starts_inside = word_at(needle.chars().next());
    let ends_inside = word_at(needle.chars().next_back());
    let all: Vec<String> = words(needle).map(|w| w.into_owned()).collect();
    let usable = all.get(usize::from(starts_inside)..).unwrap_or_default();
    if usable.is_empty() || usable.iter().any(|w| w.len() > 2047) {
        return None;
    }
    let last = usable.len() - 1;
    Some(
        (usable.iter().enumerate())
            .map(|(i, w)| (w.clone(), i == last && ends_inside))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tsq(q: &str) -> String {
        match pidx_core::query::search::parse(q, false).unwrap() {
            Query::Words { fts, .. } => tsquery(&fts).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_local_query_language_becomes_a_tsquery() {
        assert_eq!(tsq("foo Bar"), "(('foo')) & (('bar'))");
        assert_eq!(
            tsq("\"exact phrase\" main.rs"),
            "(('exact' <-> 'phrase')) & (('main' <-> 'rs'))"
        );
        assert_eq!(tsq("pre* -no"), "((('pre':*))) & !(('no'))");
        assert_eq!(tsq("a OR b c"), "(('a') | ('b')) & (('c'))");
        assert_eq!(tsq("say \"hi"), "(('say')) & (('hi'))");
    }

    #[test]
    fn a_literal_needs_the_words_it_holds_whole() {
        assert_eq!(piece_of_a_word("nswE"), Some("nswe".into()));
        assert_eq!(piece_of_a_word("Café"), Some("cafe".into()));
        assert_eq!(piece_of_a_word("a b"), None);
        assert_eq!(piece_of_a_word(""), None);
        assert_eq!(literal_words("fn main("), Some("'main'".into()));
        assert_eq!(literal_words(" fn main"), Some("'fn' & 'main':*".into()));
        assert_eq!(
            literal_words("src/main.rs:42"),
            Some("'main' & 'rs' & '42':*".into())
        );
        assert_eq!(literal_words("okeni"), None);
        assert_eq!(first_piece("Filter is"), Some("filter".into()));
        assert_eq!(first_piece(" filter is"), None);
        assert_eq!(first_piece("okeni"), None);
        assert_eq!(first_piece("src/main.rs"), Some("src".into()));
        // One piece ended inside the needle: the words ending with it are its candidates.
        assert_eq!(first_piece("unwrap()"), Some("unwrap".into()));
        assert_eq!(literal_words("unwrap()"), None);
        assert_eq!(literal_words("->"), None);
    }
}
