//! `search`: ranked full-text search over every indexed session, plus exact literal and regular
//! expression search, with filters. Candidates come from the FTS5 indexes filled at ingest
//! (`migrations/0003_search.sql`); literal candidates (`literal.rs`) and regex candidates are
//! confirmed against the entry's own line in the JSONL, so literal search finds exactly what a
//! plain scan finds.

mod blocked;
mod joined;
mod literal;
mod meaning;
mod newest;
mod one;
pub mod parse;
mod ranked;
mod raw;
mod required;
mod snippet;
mod span;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

use regex::Regex;
use rusqlite::types::Value;
use rusqlite::Connection;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::pi::js;
use crate::pi::text::{text_of, TextKind};
use crate::query::Reader;
use crate::store::filter::{int, placeholders, text, Where};
use crate::store::jsonl::read_at;
use crate::store::schema::{fts_entry_sql, fts_kind_sql, fts_rowid_sql, ANCESTORS, TITLE};
use crate::store::Scope;
pub use blocked::BlocksRead;
pub use meaning::{
    center, codes_top, exact_top, fuse, search_hybrid, search_hybrid_stats, search_meaning,
    search_meaning_stats, widened, MeaningStats, Scorer,
};
pub use newest::LOOSE_READS;
pub use parse::{parse, Query};
pub use ranked::{blend, most};
pub use raw::RawStats;
pub use required::required_runs;
pub use snippet::{terms_regex, Snippet};

/// What to search and where.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub query: Query,
    /// Only this project (`list(cwd)`'s rule).
    pub cwd: Option<String>,
    /// Only this session file.
    pub file_id: Option<i64>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only sessions where an assistant message or model change used a model containing this.
    pub model: Option<String>,
    /// Only these kinds of text (empty: all).
    pub kinds: Vec<TextKind>,
    /// Only entries on the session's current path (the context pi would send).
    pub branch: bool,
    pub limit: usize,
    /// Match and show each text with its secrets redacted (`crate::redact`): a text whose only
    /// match is inside a secret is no hit, and no snippet shows one.
    pub redact: bool,
}

impl SearchOptions {
    /// `query` in every session, no filter, up to `limit` hits.
    pub fn everywhere(query: Query, limit: usize) -> SearchOptions {
        SearchOptions {
            query,
            cwd: None,
            file_id: None,
            since_ms: None,
            until_ms: None,
            model: None,
            kinds: Vec::new(),
            branch: false,
            limit,
            redact: false,
        }
    }
}

/// One matching entry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The team server's source of the session (`pidx --pg URL search`); none locally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub path: String,
    pub session_id: Option<String>,
    pub cwd: String,
    pub session_name: Option<String>,
    pub entry_id: Option<String>,
    pub line: i64,
    pub kind: &'static str,
    pub role: Option<String>,
    pub timestamp: Option<String>,
    pub score: f64,
    /// How the hit was found: by its words, by meaning (above the similarity floor), or both.
    pub by: By,
    /// Meaning's calibrated similarity (`meaning::Calibrated`), when meaning found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    pub snippet: Snippet,
    /// Other sessions holding this same entry (a fork or clone copies entries with their ids
    /// and times, docs/pi-format.md §1.4): one hit, as `stats` counts one entry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
    #[serde(skip)]
    pub file_id: i64,
    /// The session's name, else its first user message (what pi's picker shows).
    #[serde(skip)]
    pub title: String,
}

/// How a hit was found. Every door shows it (JSON `"by"`, a mark in the terminal, MCP, the web
/// page): a hit found by meaning alone holds none of the query's words, and a reader deciding
/// whether "we ever did X" needs to know that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum By {
    #[default]
    Words,
    Meaning,
    Both,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Words => "words",
            By::Meaning => "meaning",
            By::Both => "both",
        }
    }
}

/// A candidate text before it is confirmed and ranked. Only numbers: a literal or regex search
/// can have a hundred thousand candidates and read back few of them, so the strings of a hit
/// (path, entry id, role) are looked up when it is confirmed.
struct Candidate {
    rowid: i64,
    relevance: f64,
    file_id: i64,
    seq: i64,
    line: i64,
    offset: i64,
    len: i64,
    ts_ms: Option<i64>,
}

/// Runs a search; hits come grouped by session, best session first.
///
/// # Errors
/// Index errors; `Io` when a session file cannot be read back.
pub fn search(conn: &Connection, scope: &Scope, opts: &SearchOptions) -> Result<Vec<Hit>> {
    search_until(conn, scope, opts, &AtomicBool::new(false))
}

/// [`search`], given up when `stop` is set by another thread (a cancelled or timed-out MCP
/// call): checked before each candidate line is read back from its session file, where a
/// literal or regex search whose candidates rarely match spends its time. Work inside SQLite
/// is stopped by the connection's progress handler, which the caller installs.
///
/// # Errors
/// As [`search`]; `Stopped` when stopped.
pub fn search_until(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    stop: &AtomicBool,
) -> Result<Vec<Hit>> {
    Ok(search_explained(conn, scope, opts, stop)?.0)
}

/// Searches the local index or the team server, best first; `Explain` for the local index
/// only (the server plans its own query). `include_silent` on the server is the local
/// scope's `include_silent`.
///
/// # Errors
/// As [`search`]; server errors.
pub fn run(
    reader: &mut Reader,
    opts: &SearchOptions,
    include_silent: bool,
    stop: &AtomicBool,
) -> Result<(Vec<Hit>, Option<Explain>)> {
    match reader {
        Reader::Local { conn, scope, .. } => {
            let mut scope = scope.clone();
            scope.include_silent = include_silent;
            let (hits, explain) = search_explained(conn, &scope, opts, stop)?;
            Ok((hits, Some(explain)))
        }
        Reader::Server(server) => Ok((server.search(opts, include_silent)?, None)),
    }
}

/// What a search did (`search --explain`): its plan, the entry rows its filters left to it
/// (`None`: no filter narrowed it), how many candidate texts it read back from their lines,
/// and how many hits it kept.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explain {
    pub plan: Plan,
    pub span_rows: Option<i64>,
    /// A frequent word ranked from its impact blocks: how many were read.
    pub blocks: Option<blocked::BlocksRead>,
    /// The looser query the first candidates came from (the plan's without its costly
    /// prefixes: `newest::Looser`).
    pub looser: Option<String>,
    /// A raw scan (`Plan::RawScan`): the runs whose bytes it tested and skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawStats>,
    pub read: usize,
    pub hits: usize,
}

impl Explain {
    /// Whether the search read every text of the index: no word narrowed it, and no filter.
    pub fn scanned_everything(&self) -> bool {
        self.plan == Plan::Scan && self.span_rows.is_none()
    }
}

/// [`search_until`], with what it did.
///
/// # Errors
/// As [`search_until`].
pub fn search_explained(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    stop: &AtomicBool,
) -> Result<(Vec<Hit>, Explain)> {
    let _snapshot = crate::store::snapshot::Snapshot::begin(conn)?;
    let span = span::Span::of(conn, scope, opts)?;
    let span = span.as_ref();
    let mut explain = Explain {
        plan: Plan::Nothing,
        span_rows: span.map(span::Span::rids),
        blocks: None,
        looser: None,
        raw: None,
        read: 0,
        hits: 0,
    };
    if span.is_some_and(span::Span::is_empty) {
        return Ok((Vec::new(), explain));
    }
    explain.plan = choose(conn, &opts.query, span, opts.redact)?;
    let Some((source, arg)) = explain.plan.source(span) else {
        return Ok((Vec::new(), explain));
    };
    let on_branch = |mut found: Vec<Candidate>| -> Result<Vec<Candidate>> {
        if opts.branch {
            keep_current_paths(conn, &mut found)?;
        }
        Ok(found)
    };
    let from = Source {
        sql: source.as_str(),
        arg: arg.as_deref(),
    };
    let every = || on_branch(candidates(conn, scope, opts, from, span)?);
    // A prefix's candidates come from the query without it first (`newest::Looser`).
    explain.looser = match &explain.plan {
        Plan::Match { fts } if !opts.branch => {
            literal::loosened(fts, &literal::costly_prefixes(conn)?)
        }
        _ => None,
    };
    let looser = explain.looser.as_deref();
    let now = chrono::Utc::now().timestamp_millis();
    // A raw scan tests each run's bytes before its texts are listed (`raw.rs`).
    let raw_stats = std::rc::Rc::new(std::cell::Cell::new(RawStats::default()));
    let raw_needle = match (&explain.plan, &opts.query) {
        (Plan::RawScan, Query::Literal(needle)) => raw::RawNeedle::of(needle),
        _ => None,
    };
    let raw_runs = || -> Result<Option<raw::RawRuns>> {
        raw_needle
            .clone()
            .map(|test| raw::RawRuns::new(conn, test, raw_stats.clone()))
            .transpose()
    };
    // Literal and regex hits come newest first: full-text candidates are put in that order
    // run by run (`newest.rs`), a scan of every text too; `--branch` sorts them all.
    let newest = || -> Result<Box<dyn Iterator<Item = Result<Candidate>> + '_>> {
        if opts.branch {
            let mut all = every()?;
            newest_first(&mut all);
            return Ok(Box::new(all.into_iter().map(Ok)));
        }
        if let Some(looser) = looser {
            let first = Source {
                sql: from.sql,
                arg: Some(looser),
            };
            let first = newest::Newest::of(conn, scope, opts, first, span, None)?;
            let then = move || newest::Newest::of(conn, scope, opts, from, span, None);
            return Ok(Box::new(newest::Looser::new(first, then)));
        }
        Ok(Box::new(newest::Newest::of(
            conn,
            scope,
            opts,
            from,
            span,
            raw_runs()?,
        )?))
    };
    let (hits, read) = match &opts.query {
        // Most relevant first: every match scored, and joined best bound first only while it
        // can reach the top (`ranked.rs`); every match joined at once when the filters leave
        // too few among the first `window`. A narrowed search ranks the matches in its span.
        Query::Words { fts, terms } => {
            let window = opts.limit.saturating_mul(50).clamp(1000, i64::MAX as usize);
            let mut candidates = if let Some(span) = span {
                let matches = span::matches(conn, &source, Some(fts), span)?;
                ranked::best_of(conn, scope, opts, matches, Some(span), now)?
            } else {
                // A frequent word from its impact blocks (`blocked.rs`), else every match scored.
                let one = parse::one_term(fts, terms);
                let blocked = if one {
                    blocked::best(conn, scope, opts, fts, now)?
                } else {
                    None
                };
                let blocked = blocked.and_then(|(top, read)| {
                    explain.blocks = Some(read);
                    top
                });
                // One word or phrase, or several ANDed, are scored in one pass; anything else
                // by `bm25()` through `source`.
                let each = parse::each_term(fts, terms);
                let scoring = match &each {
                    _ if one => ranked::Scoring::OnePhrase,
                    Some(phrases) => ranked::Scoring::EachPhrase(phrases),
                    None => ranked::Scoring::Sql(source.as_str()),
                };
                let ranked = || ranked::best_settled(conn, scope, opts, scoring, fts, window, now);
                match blocked {
                    Some(top) => top,
                    None => ranked()?.map_or_else(every, Ok)?,
                }
            };
            let highlight = snippet::terms_regex(terms);
            rank_words(&mut candidates, now);
            // Not cut to the limit here: a copied entry's copies are one hit.
            best_first(&mut candidates);
            confirm(
                conn,
                candidates.into_iter().map(Ok),
                opts.limit,
                stop,
                None,
                |text| {
                    shown(opts.redact, text, |text| {
                        // Redacted, a text may no longer hold the words that matched.
                        let gone =
                            opts.redact && highlight.as_ref().is_some_and(|re| !re.is_match(text));
                        (!gone).then(|| Snippet::around(text, highlight.as_ref()))
                    })
                },
            )?
        }
        Query::Literal(needle) => {
            let raw = literal::raw_prefilter(needle);
            let each_line = |line: &[u8]| raw_needle.as_ref().is_none_or(|t| t.may_hold(line));
            let raw = match &raw {
                Some(f) => Some(f as RawTest),
                None if raw_needle.is_some() => Some(&each_line as RawTest),
                None => None,
            };
            confirm(conn, newest()?, opts.limit, stop, raw, |text| {
                shown(opts.redact, text, |text| {
                    text.find(needle.as_str())
                        .map(|at| Snippet::at(text, at, at + needle.len()))
                })
            })?
        }
        Query::Regex(re) => {
            let raw = required::raw_prefilter(re.as_str());
            let raw = raw.as_ref().map(|f| f as RawTest);
            confirm(conn, newest()?, opts.limit, stop, raw, |text| {
                shown(opts.redact, text, |text| regex_snippet(re, text))
            })?
        }
    };
    if explain.plan == Plan::RawScan {
        explain.raw = Some(raw_stats.get());
    }
    explain.read = read;
    explain.hits = hits.len();
    Ok((group_by_session(hits), explain))
}

/// The full-text rowids `source` gives (for its MATCH argument `arg`, when it takes one).
fn rowids_of(conn: &Connection, source: &str, arg: Option<&str>) -> Result<Vec<i64>> {
    let mut stmt = conn
        .prepare(&format!("SELECT r FROM ({source})"))
        .map_err(|e| fts_error(&e))?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(arg), |r| r.get(0))
        .map_err(|e| fts_error(&e))?;
    rows.collect::<rusqlite::Result<Vec<i64>>>()
        .map_err(|e| fts_error(&e))
}

/// How a search finds its candidates: chosen once by [`choose`], printed by `search
/// --explain`. Every plan gives every text that can match (literal and regex candidates are
/// then confirmed against their JSONL line).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Plan {
    /// Ranked words: FTS5's `fts` index, best bm25 first.
    Words { fts: String },
    /// A literal needle with punctuation, from the `joints` index (plus the texts it does not
    /// cover).
    Joints { fts: String },
    /// A literal's or a regex's required words, from the `fts` index.
    Match { fts: String },
    /// The span of a session or a small project, read whole (at most [`READ_WHOLE_ROWS`]).
    ReadWhole,
    /// No word the index can use: every text in the span (or of the index) is read.
    Scan,
    /// A literal no word of the index can narrow, found in the raw bytes of the session files
    /// first: a run of texts is read only when its lines may spell it (`raw.rs`).
    RawScan,
    /// No indexed word holds the needle: nothing can match.
    Nothing,
}

/// Entry rows a narrowed literal or regex search reads whole rather than planning.
pub const READ_WHOLE_ROWS: i64 = span::READ_WHOLE;

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Plan::Words { fts } => write!(f, "ranked words: fts MATCH {fts}"),
            Plan::Joints { fts } => write!(f, "literal with punctuation: joints MATCH {fts}"),
            Plan::Match { fts } => write!(f, "required words: fts MATCH {fts}"),
            Plan::ReadWhole => write!(
                f,
                "read whole: the narrowed span's texts (at most {READ_WHOLE_ROWS} entry rows)"
            ),
            Plan::Scan => write!(f, "scan: every text, no word of the index can narrow it"),
            Plan::RawScan => write!(
                f,
                "raw scan: no word of the index can narrow it; each run's lines are searched for \
                 the needle (raw or JSON-escaped) and only the texts of runs that may hold it are read"
            ),
            Plan::Nothing => write!(f, "nothing: no indexed word can hold it"),
        }
    }
}

impl Plan {
    /// The plan for a person: as [`Display`](std::fmt::Display) gives it, with each long run
    /// of alternatives cut to its [`SHOWN_ALTERNATIVES`] shortest and a count of the rest
    /// ([`brief_fts`]). `--json` keeps the whole expression.
    pub fn brief(&self) -> String {
        match self {
            Plan::Words { fts } => format!("ranked words: fts MATCH {}", brief_fts(fts)),
            Plan::Joints { fts } => {
                format!("literal with punctuation: joints MATCH {}", brief_fts(fts))
            }
            Plan::Match { fts } => format!("required words: fts MATCH {}", brief_fts(fts)),
            other => other.to_string(),
        }
    }
}

/// Alternatives of a run [`brief_fts`] shows; the rest are counted.
pub const SHOWN_ALTERNATIVES: usize = 4;

/// An FTS5 expression of the planners (phrases, `*`, `AND`, `OR`, parentheses) with every run
/// of more than [`SHOWN_ALTERNATIVES`] phrases joined by `OR` cut to its shortest ones and
/// `OR … N more`: a word that can end inside a longer word (`fn` in `re:fn \w+_line`) is
/// planned as every indexed word ending with it, which on a real corpus includes scores of
/// base64 fragments. They are right to be in the plan (`xk9fn parse_line` matches) and useless
/// to read.
pub fn brief_fts(fts: &str) -> String {
    let tokens = fts_tokens(fts);
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        // A run: phrase (OR phrase)*.
        let mut run = vec![i];
        if is_phrase(&tokens[i]) {
            let mut j = i;
            while j + 2 < tokens.len() && tokens[j + 1] == "OR" && is_phrase(&tokens[j + 2]) {
                j += 2;
                run.push(j);
            }
        }
        if run.len() > SHOWN_ALTERNATIVES {
            let mut shown: Vec<&str> = run.iter().map(|&k| tokens[k].as_str()).collect();
            shown.sort_by_key(|t| (t.len(), *t));
            let rest = run.len() - SHOWN_ALTERNATIVES;
            shown.truncate(SHOWN_ALTERNATIVES);
            out.push(format!("{} OR … {rest} more", shown.join(" OR ")));
        } else {
            out.extend(run.iter().flat_map(|&k| {
                let or = (k > i).then(|| "OR".to_string());
                or.into_iter().chain(std::iter::once(tokens[k].clone()))
            }));
        }
        i = run.last().map_or(i, |&k| k) + 1;
    }
    out.join(" ").replace("( ", "(").replace(" )", ")")
}

/// The tokens of an FTS5 expression: quoted phrases (with a trailing `*`), parentheses and bare
/// words (`AND`, `OR`, `NOT`, unquoted terms).
fn fts_tokens(fts: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = fts.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' => {
                out.push(c.to_string());
                chars.next();
            }
            '"' => {
                let mut t = String::from('"');
                chars.next();
                while let Some(c) = chars.next() {
                    t.push(c);
                    if c == '"' {
                        if chars.peek() == Some(&'"') {
                            t.push('"');
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                while chars.peek() == Some(&'*') {
                    t.push('*');
                    chars.next();
                }
                out.push(t);
            }
            _ => {
                let mut t = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' || c == '"' {
                        break;
                    }
                    t.push(c);
                    chars.next();
                }
                out.push(t);
            }
        }
    }
    out
}

fn is_phrase(t: &str) -> bool {
    t.starts_with('"')
}

/// The plan for `query` within `span` (when there is one).
///
/// # Errors
/// Index errors (the literal planners look words up).
fn choose(
    conn: &Connection,
    query: &Query,
    span: Option<&span::Span>,
    redact: bool,
) -> Result<Plan> {
    let from_literal = |plan| match plan {
        literal::Plan::Match(fts) => Plan::Match { fts },
        literal::Plan::Nothing => Plan::Nothing,
        literal::Plan::Scan => Plan::Scan,
    };
    Ok(match query {
        Query::Words { fts, .. } => Plan::Words { fts: fts.clone() },
        // A session's few hundred rows are read faster than a plan is made and asked
        // (`--literal the --session S`: 57 ms, 90% of it listing the words that hold `the`;
        // `re:fn \w+_line --session S`: 32 ms, FTS5 expanding `line*` over every word).
        Query::Literal(_) | Query::Regex(_)
            if span.is_some_and(|s| s.rids() <= READ_WHOLE_ROWS) =>
        {
            Plan::ReadWhole
        }
        Query::Literal(needle) => match joined::plan(conn, needle)? {
            joined::Joined::Match(fts) => Plan::Joints { fts },
            joined::Joined::Nothing => Plan::Nothing,
            joined::Joined::Unusable => {
                match from_literal(literal::plan(conn, needle, span::lookups(span))?) {
                    // Redaction can write what the raw bytes do not hold (`[redacted: ...]`).
                    Plan::Scan if !redact && raw::RawNeedle::of(needle).is_some() => Plan::RawScan,
                    plan => plan,
                }
            }
        },
        Query::Regex(re) => from_literal(required::plan(conn, re.as_str(), span::lookups(span))?),
    })
}

impl Plan {
    /// The query of the candidates (rows `r`, `score`) and its MATCH argument, within `span`'s
    /// first and last row when there is one; `None` when nothing can match.
    fn source(&self, span: Option<&span::Span>) -> Option<(String, Option<String>)> {
        let rowids = span::within(span, "rowid", false);
        match self {
            Plan::Words { fts } => Some((
                format!("SELECT rowid AS r, bm25(fts) AS score FROM fts WHERE fts MATCH ?{rowids}"),
                Some(fts.clone()),
            )),
            Plan::Joints { fts } => Some((from_joints(&rowids), Some(fts.clone()))),
            Plan::Match { fts } => Some((
                format!("SELECT rowid AS r, 0.0 AS score FROM fts WHERE fts MATCH ?{rowids}"),
                Some(fts.clone()),
            )),
            Plan::ReadWhole | Plan::Scan | Plan::RawScan => {
                Some((every_text(&span::within(span, "e2.rid", true)), None))
            }
            Plan::Nothing => None,
        }
    }
}

/// Literal candidates from the joints index (`joined.rs`), and every text it does not cover,
/// `rowids` the condition on their rowids.
fn from_joints(rowids: &str) -> String {
    format!(
        "SELECT rowid AS r, 0.0 AS score FROM joints WHERE joints MATCH ?{rowids}
         UNION ALL SELECT rowid AS r, 0.0 AS score FROM joints_unknown WHERE 1{rowids}"
    )
}

/// The snippet `cut` makes of `text`, redacted first when `redact` is on.
fn shown(redact: bool, text: &str, cut: impl FnOnce(&str) -> Option<Snippet>) -> Option<Snippet> {
    if redact {
        cut(&crate::redact::redact(text))
    } else {
        cut(text)
    }
}

fn regex_snippet(re: &Regex, text: &str) -> Option<Snippet> {
    re.find(text).map(|m| Snippet::at(text, m.start(), m.end()))
}

/// Every indexed text (for short literals and regular expressions), `rids` the condition on
/// their entries' rids. The entries are the outer loop (`CROSS JOIN`): left to itself SQLite
/// put the eight kinds outside and read the whole entries table once per kind (542 against
/// 166 ms for the 1 GB corpus's 401,440 texts).
fn every_text(rids: &str) -> String {
    format!(
        "SELECT {} AS r, 0.0 AS score
         FROM entries e2
         CROSS JOIN (SELECT 0 AS value UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
               UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) k
           ON e2.text_kinds & (1 << k.value)
         WHERE 1{rids}",
        fts_rowid_sql("e2.rid", "k.value")
    )
}

/// Where a search's candidates come from: a full-text table expression and its MATCH argument
/// (`None`: every text).
#[derive(Debug, Clone, Copy)]
pub(super) struct Source<'a> {
    pub sql: &'a str,
    pub arg: Option<&'a str>,
}

/// Every candidate of `source` (given its MATCH argument) that passes the filters: in one
/// statement, or, in a span, only those in it, each joined alone.
fn candidates(
    conn: &Connection,
    scope: &Scope,
    opts: &SearchOptions,
    from: Source,
    span: Option<&span::Span>,
) -> Result<Vec<Candidate>> {
    let Source { sql: source, arg } = from;
    if let Some(span) = span {
        let mut one = one::One::new(conn, scope, opts)?;
        let mut found = Vec::new();
        for (rowid, score) in span::matches(conn, source, arg, span)? {
            found.extend(one.join(rowid, score)?);
        }
        return Ok(found);
    }
    let w = filters(scope, opts, arg.map(text));
    let mut stmt = conn
        .prepare(&candidate_sql(source, opts, &w))
        .map_err(|e| fts_error(&e))?;
    let rows = stmt
        .query_map(w.params(), candidate)
        .map_err(|e| fts_error(&e))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| fts_error(&e))
}

/// The search's filters on a candidate `m` (columns `r`, `score`), its entry `e`, file `f` and
/// (with `--cwd`) session `s`, after the values bound before them.
fn filters(scope: &Scope, opts: &SearchOptions, first: impl IntoIterator<Item = Value>) -> Where {
    let mut w = Where::after(first);
    // The gateway filter, like `--model`, is kept by the span: its `IN` of a subquery would be
    // computed again for each candidate joined alone (`function --agent main`: 4.6 s).
    scope.restrict_to_roots(&mut w);
    if !scope.include_silent {
        w.and("e.silent = 0", []);
    }
    if let Some(cwd) = &opts.cwd {
        crate::query::list::cwd_filter(scope, cwd, &mut w);
    }
    if let Some(id) = opts.file_id {
        w.and("e.file_id = ?", [int(id)]);
    }
    if let Some(t) = opts.since_ms {
        w.and("e.ts_ms >= ?", [int(t)]);
    }
    if let Some(t) = opts.until_ms {
        w.and("e.ts_ms < ?", [int(t)]);
    }
    // `--model` is kept by the span (`span.rs`), which every search with it has.
    if !opts.kinds.is_empty() {
        w.and(
            format!(
                "{} IN ({})",
                fts_kind_sql("m.r"),
                placeholders(opts.kinds.len())
            ),
            opts.kinds.iter().map(|k| int(*k as i64)),
        );
    }
    w
}

/// The candidates of `source` (rows `r`, `score`) that pass `w`. The session row is joined only
/// for `--cwd`, the one filter that reads it: probing it for every candidate was a quarter of a
/// rare word's join.
fn candidate_sql(source: &str, opts: &SearchOptions, w: &Where) -> String {
    let sessions = if opts.cwd.is_some() {
        "JOIN sessions s ON s.file_id = e.file_id"
    } else {
        ""
    };
    format!(
        "SELECT m.r, m.score, e.file_id, e.seq, e.line, e.offset, e.len, e.ts_ms
         FROM ({source}) m
         JOIN entries e ON e.rid = {}
         JOIN files f ON f.id = e.file_id
         {sessions}
         WHERE {}",
        fts_entry_sql("m.r"),
        w.sql()
    )
}

/// A row of [`candidate_sql`].
fn candidate(r: &rusqlite::Row) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        rowid: r.get(0)?,
        relevance: -r.get::<_, f64>(1)?,
        file_id: r.get(2)?,
        seq: r.get(3)?,
        line: r.get(4)?,
        offset: r.get(5)?,
        len: r.get(6)?,
        ts_ms: r.get(7)?,
    })
}

/// FTS5 errors come from queries this module wrote, so they are bugs, not user mistakes; say so
/// without leaking FTS5 syntax to the user.
fn fts_error(e: &rusqlite::Error) -> Error {
    let text = e.to_string();
    if text.contains("fts5") {
        Error::Invalid(format!(
            "this query could not be run ({text}); please report it"
        ))
    } else {
        Error::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(1),
            Some(text),
        ))
    }
}

/// Drops candidates that are not on their session's current path (pi's default leaf).
fn keep_current_paths(conn: &Connection, candidates: &mut Vec<Candidate>) -> Result<()> {
    let mut on_path = OnPath::new(conn);
    let mut kept = Vec::with_capacity(candidates.len());
    for c in candidates.drain(..) {
        if on_path.holds(&c)? {
            kept.push(c);
        }
    }
    *candidates = kept;
    Ok(())
}

/// Whether candidates lie on their session's current branch (`--branch`): each session's path
/// from its leaf is walked once, when a candidate of it is first asked about.
struct OnPath<'c> {
    conn: &'c Connection,
    /// File id -> the entry positions (`seq`) on its current path.
    paths: HashMap<i64, HashSet<i64>>,
}

impl<'c> OnPath<'c> {
    fn new(conn: &'c Connection) -> Self {
        OnPath {
            conn,
            paths: HashMap::new(),
        }
    }

    /// # Errors
    /// Index errors.
    fn holds(&mut self, c: &Candidate) -> Result<bool> {
        if !self.paths.contains_key(&c.file_id) {
            let (leaf_seq, entries): (Option<i64>, i64) = self
                .conn
                .prepare_cached("SELECT leaf_seq, entry_count FROM sessions WHERE file_id = ?1")?
                .query_row([c.file_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let seqs = match leaf_seq {
                Some(seq) => self
                    .conn
                    .prepare_cached(ANCESTORS)?
                    .query_map(rusqlite::params![c.file_id, seq, entries], |r| r.get(0))?
                    .collect::<rusqlite::Result<HashSet<i64>>>()?,
                None => HashSet::new(),
            };
            self.paths.insert(c.file_id, seqs);
        }
        Ok(self.paths[&c.file_id].contains(&c.seq))
    }
}

/// Relevance (bm25) blended with recency ([`ranked::blend`]).
fn rank_words(candidates: &mut [Candidate], now_ms: i64) {
    for c in candidates.iter_mut() {
        c.relevance *= ranked::blend(c.ts_ms, now_ms);
    }
}

fn newest_first(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| b.ts_ms.cmp(&a.ts_ms).then(b.rowid.cmp(&a.rowid)));
}

/// Candidates best first (then the later row first).
fn best_first(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(b.rowid.cmp(&a.rowid))
    });
}

/// A test on a candidate's raw line: `false` when its texts cannot match.
type RawTest<'a> = &'a dyn Fn(&[u8]) -> bool;

/// A session file's path and open handle (`None`: gone since it was indexed; the next sync
/// removes it), and its listing facts: session id, cwd, name and title.
struct Session {
    path: String,
    file: Option<File>,
    info: (Option<String>, String, Option<String>, String),
}

/// Opens candidates' session files once each, and looks up what a hit shows.
struct Sessions<'c> {
    open: HashMap<i64, Session>,
    lookup: rusqlite::CachedStatement<'c>,
    entry: rusqlite::CachedStatement<'c>,
}

impl<'c> Sessions<'c> {
    fn new(conn: &'c Connection) -> Result<Self> {
        Ok(Sessions {
            open: HashMap::new(),
            lookup: conn.prepare_cached(&format!(
                "SELECT f.path, s.session_id, s.cwd, s.name, {TITLE}
                 FROM files f JOIN sessions s ON s.file_id = f.id WHERE f.id = ?1"
            ))?,
            entry: conn.prepare_cached("SELECT id, role, dup FROM entries WHERE rid = ?1")?,
        })
    }

    fn get(&mut self, file_id: i64) -> Result<&mut Session> {
        if !self.open.contains_key(&file_id) {
            let (path, id, cwd, name, first): (String, _, _, Option<String>, Option<String>) =
                self.lookup.query_row([file_id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?;
            let file = match File::open(&path) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io(&path, e)),
            };
            let title = name.clone().or(first).unwrap_or_default();
            let info = (id, cwd, name, title);
            self.open.insert(file_id, Session { path, file, info });
        }
        Ok(self.open.get_mut(&file_id).expect("inserted above"))
    }

    /// The entry id and role of a candidate, and whether it is a copy of an entry of an
    /// earlier session (`store::copies`).
    fn entry(&mut self, rowid: i64) -> Result<(Option<String>, Option<String>, bool)> {
        let rid = crate::store::schema::fts_entry(rowid).0;
        Ok(self
            .entry
            .query_row([rid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?)
    }
}

/// A candidate's score as its hit shows it: its relevance, or its time when it has none (a
/// search newest first).
fn score_of(c: &Candidate) -> f64 {
    if c.relevance == 0.0 {
        c.ts_ms.unwrap_or(0) as f64
    } else {
        c.relevance
    }
}

/// Reads each candidate's text back from its line and keeps those `matcher` accepts, up to
/// `limit`, in the order given, unless `stop` is set first; also says how many it read. A
/// line `raw` rejects is not parsed.
fn confirm(
    conn: &Connection,
    candidates: impl IntoIterator<Item = Result<Candidate>>,
    limit: usize,
    stop: &AtomicBool,
    raw: Option<RawTest>,
    matcher: impl Fn(&str) -> Option<Snippet>,
) -> Result<(Vec<Hit>, usize)> {
    let mut sessions = Sessions::new(conn)?;
    let mut hits = OneHitPerCopy::new(limit);
    let mut read = 0;
    for c in candidates {
        if limit == 0 {
            break;
        }
        let c = match c {
            Err(_) if hits.full() => break,
            c => c?,
        };
        if hits.done_before(score_of(&c), c.ts_ms) {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Stopped);
        }
        let session = sessions.get(c.file_id)?;
        let Some(file) = &session.file else {
            continue;
        };
        let bytes = read_at(file, c.offset as u64, c.len as usize)
            .map_err(|e| Error::io(&session.path, e))?;
        read += 1;
        if raw.is_some_and(|may_hold| !may_hold(&bytes)) {
            continue;
        }
        let kind = TextKind::from_bits(c.rowid);
        let Some(text) = text_of(bytes, kind) else {
            continue; // the file changed under the index; the next sync fixes it
        };
        let Some(snippet) = matcher(&text) else {
            continue;
        };
        let path = session.path.clone();
        let (session_id, cwd, name, title) = session.info.clone();
        let (entry_id, role, copy) = sessions.entry(c.rowid)?;
        let key = entry_id
            .clone()
            .zip(c.ts_ms)
            .map(|(id, ts)| (id, ts, kind.name()));
        let hit = Hit {
            source: None,
            path,
            session_id,
            cwd,
            session_name: name,
            entry_id,
            line: c.line,
            kind: kind.name(),
            role,
            timestamp: c.ts_ms.map(js::iso),
            score: score_of(&c),
            by: By::Words,
            similarity: None,
            snippet,
            also_in: Vec::new(),
            file_id: c.file_id,
            title,
        };
        hits.add(hit, key, copy);
    }
    Ok((hits.hits, read))
}

/// Hits with each copied entry once: a fork or clone copies entries with their ids and times
/// (`store::copies`' rule), and a copy is the same entry, as `stats` counts it.
///
/// A copy scores as its entry does (the same text and time), so the two are a tie, fed in
/// whatever order the rows came: with [`OneHitPerCopy::new`]'s limit, the candidates that tie
/// the last hit taken are still fed once the hits are full ([`OneHitPerCopy::done_before`]),
/// and may only settle which copy of a shown entry is shown. Otherwise the copy shown at the
/// limit depended on `--limit` and on the rows' order, which the team server's differs from
/// the local one's (the published benchmark at a million sessions found one, 2026-12-07).
#[derive(Default)]
pub struct OneHitPerCopy {
    pub hits: Vec<Hit>,
    /// (entry id, time, text kind) -> the hit showing it, and whether that is a later copy.
    shown: HashMap<(String, i64, &'static str), (usize, bool)>,
    /// Hits shown at most (none when 0), and the score of the last hit taken.
    limit: usize,
    last: Option<f64>,
}

impl OneHitPerCopy {
    /// At most `limit` hits.
    pub fn new(limit: usize) -> OneHitPerCopy {
        OneHitPerCopy {
            limit,
            ..OneHitPerCopy::default()
        }
    }

    /// Whether `limit` hits are shown.
    pub fn full(&self) -> bool {
        self.limit > 0 && self.hits.len() >= self.limit
    }

    /// Whether a candidate scoring `score` (and every later one, scoring no more) can change
    /// nothing: the hits are full and it does not tie the last one taken, or it has no time
    /// (no copy without one: a tie of untimed texts may be most of the candidates).
    pub fn done_before(&self, score: f64, ts_ms: Option<i64>) -> bool {
        self.full() && (!self.ties_last(score) || ts_ms.is_none())
    }

    /// Whether `score` is the last hit's: a candidate scoring it may still settle which copy
    /// of that hit's entry is shown, once the hits are full (what a reader asks of its next
    /// batch of candidates before reading their times).
    pub fn ties_last(&self, score: f64) -> bool {
        self.last == Some(score)
    }

    /// Adds `hit` (its entry a later session's copy when `copy`), or names its session in the
    /// hit that shows the same entry; the first session's copy is the one shown. Once the hits
    /// are full, only the latter.
    pub fn add(&mut self, hit: Hit, key: Option<(String, i64, &'static str)>, copy: bool) {
        let full = self.full();
        if !full {
            self.last = Some(hit.score);
        }
        let Some(key) = key else {
            if !full {
                self.hits.push(hit);
            }
            return;
        };
        match self.shown.get(&key) {
            Some(&(at, _)) if self.hits[at].file_id == hit.file_id => {
                if !full {
                    self.hits.push(hit);
                }
            }
            Some(&(at, shown_copy)) if shown_copy && !copy => {
                let old = std::mem::replace(&mut self.hits[at], hit);
                let also = &mut self.hits[at].also_in;
                *also = old.also_in;
                also.insert(0, old.path);
                self.shown.insert(key, (at, false));
            }
            Some(&(at, _)) => self.hits[at].also_in.push(hit.path),
            None if full => {}
            None => {
                self.shown.insert(key, (self.hits.len(), copy));
                self.hits.push(hit);
            }
        }
    }
}

/// Keeps the hits' order of first appearance per session, each session's hits together.
pub fn group_by_session(hits: Vec<Hit>) -> Vec<Hit> {
    let mut order: Vec<i64> = Vec::new();
    let mut by_file: HashMap<i64, Vec<Hit>> = HashMap::new();
    for h in hits {
        if !by_file.contains_key(&h.file_id) {
            order.push(h.file_id);
        }
        by_file.entry(h.file_id).or_default().push(h);
    }
    order
        .into_iter()
        .flat_map(|f| by_file.remove(&f).unwrap_or_default())
        .collect()
}

#[cfg(test)]
mod brief_tests {
    use super::brief_fts;

    #[test]
    fn long_runs_of_alternatives_are_cut_to_the_shortest_and_counted() {
        let junk: Vec<String> = (0..80).map(|i| format!("\"xk{i:02}q9fn\"")).collect();
        let fts = format!("({} OR \"fn\") AND (\"line\"*)", junk.join(" OR "));
        assert_eq!(
            brief_fts(&fts),
            "(\"fn\" OR \"xk00q9fn\" OR \"xk01q9fn\" OR \"xk02q9fn\" OR … 77 more) AND (\"line\"*)"
        );
        // Short runs, quotes inside phrases and prefixes stay as they were.
        for same in [
            "(\"fn\") AND (\"line\"*)",
            "\"a\" OR \"b\" OR \"c\" OR \"d\"",
            "\"say \"\"hi\"\"\" OR \"parse line\"*",
            "((\"x\" OR \"y\") AND \"z\"*) OR \"w\"",
        ] {
            assert_eq!(brief_fts(same), same);
        }
    }
}
