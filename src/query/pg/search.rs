//! `pidx --pg URL search`: full text on the server. The query language is the local one
//! (`query::search::parse`: words, "phrases", prefix*, -excluded, OR), turned into a `tsquery`
//! over the words push stored (`store::pg::words`, split as the local index splits them) under
//! the GIN index. `--literal` takes its candidates from the words the needle must contain and
//! keeps the texts that hold it exactly (`strpos`). Each hit names its source.
//!
//! Differences from the local FTS5 search: hits rank by `ts_rank` then recency rather than
//! bm25, and a literal that is a piece of a single word (inside it at both ends) has no word to
//! look up, so it reads every text (the local index looks the piece up in its vocabulary).

use postgres::Transaction;

use super::Conds;
use crate::error::{Error, Result};
use crate::pi::js;
use crate::pi::text::TextKind;
use crate::query::search::{parse, terms_regex, Hit, Query, Snippet};
use crate::store::pg::server_err;
use crate::store::pg::words::{lexeme, phrase, words};

#[derive(Debug, Clone, Default)]
pub struct PgSearch {
    pub query: String,
    pub literal: bool,
    pub source: Option<String>,
    pub cwd: Option<String>,
    pub kinds: Vec<TextKind>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: usize,
}

/// Runs the search, best first.
///
/// # Errors
/// Server errors (a query PostgreSQL cannot parse is reported as such).
pub fn search(tx: &mut Transaction, q: &PgSearch) -> Result<Vec<Hit>> {
    let mut c = Conds::source(q.source.as_deref());
    if let Some(cwd) = &q.cwd {
        c.cwd(cwd);
    }
    let mut terms = Vec::new();
    let needle = match parse(&q.query, q.literal)? {
        Query::Words { fts, terms: t } => {
            c.and(
                "t.tsv @@ (?::text)::tsquery",
                vec![Box::new(tsquery(&fts)?)],
            );
            terms = t;
            None
        }
        Query::Literal(needle) => {
            if let Some(words) = literal_words(&needle) {
                c.and("t.tsv @@ (?::text)::tsquery", vec![Box::new(words)]);
            }
            c.and("strpos(t.body, ?) > 0", vec![Box::new(needle.clone())]);
            Some(needle)
        }
        Query::Regex(_) => {
            return Err(Error::Invalid(
                "re: is not available with --pg yet; use words or --literal".into(),
            ))
        }
    };
    // The literal's window starts before its first occurrence, which may lie past 4000.
    let (score, body) = match needle {
        Some(_) => (
            "0::float8".to_string(),
            format!(
                "substr(t.body, greatest(1, strpos(t.body, ${}) - 300), 4000)",
                c.params.len()
            ),
        ),
        None => (
            format!(
                "ts_rank(t.tsv, (${}::text)::tsquery)::float8",
                c.params.len()
            ),
            "left(t.body, 4000)".to_string(),
        ),
    };
    filters(q, &mut c);
    let sql = format!(
        "SELECT s.source, s.path, s.session_id, s.cwd, e.id, e.line, t.kind, e.role, e.ts_ms,
                {score} AS score, {body}, s.fid, s.name, s.first_message
         FROM entry_text t
         JOIN entries e ON e.source = t.source AND e.fid = t.fid AND e.seq = t.seq
         JOIN sessions s ON s.source = t.source AND s.fid = t.fid
         WHERE {} ORDER BY score DESC, e.ts_ms DESC NULLS LAST, s.path, e.seq, t.kind
         LIMIT {}",
        c.sql(),
        q.limit
    );
    let highlight = terms_regex(&terms);
    let rows = tx.query(&sql, &c.params()).map_err(server_err)?;
    Ok(rows
        .iter()
        .map(|r| hit(r, needle.as_deref(), highlight.as_ref()))
        .collect())
}

/// `--in`, `--since` and `--until`.
fn filters(q: &PgSearch, c: &mut Conds) {
    if !q.kinds.is_empty() {
        let kinds: Vec<i16> = q.kinds.iter().map(|k| *k as i16).collect();
        c.and("t.kind = ANY(?)", vec![Box::new(kinds)]);
    }
    if let Some(t) = q.since_ms {
        c.and("e.ts_ms >= ?", vec![Box::new(t)]);
    }
    if let Some(t) = q.until_ms {
        c.and("e.ts_ms < ?", vec![Box::new(t)]);
    }
}

/// A result row as the local search's hit, with its snippet cut here.
fn hit(r: &postgres::Row, needle: Option<&str>, highlight: Option<&regex::Regex>) -> Hit {
    let body: String = r.get(10);
    let ts_ms: Option<i64> = r.get(8);
    let name: Option<String> = r.get(12);
    let snippet = match needle {
        Some(n) => match body.find(n) {
            Some(at) => Snippet::at(&body, at, at + n.len()),
            None => Snippet::around(&body, None),
        },
        None => Snippet::around(&body, highlight),
    };
    Hit {
        source: Some(r.get(0)),
        path: r.get(1),
        session_id: r.get(2),
        cwd: r.get(3),
        title: name.clone().or(r.get(13)).unwrap_or_default(),
        session_name: name,
        entry_id: r.get(4),
        line: r.get(5),
        kind: TextKind::from_bits(i64::from(r.get::<_, i16>(6))).name(),
        role: r.get(7),
        timestamp: ts_ms.map(js::iso),
        // As locally: a literal's hits rank newest first.
        score: match needle {
            Some(_) => ts_ms.unwrap_or(0) as f64,
            None => r.get(9),
        },
        snippet,
        file_id: r.get(11),
    }
}

/// The `tsquery` of the FTS5 expression `parse` wrote (quoted terms, `*` after a prefix, AND,
/// OR, NOT and parentheses): each term the phrase of its words.
///
/// # Errors
/// `Invalid` for a word too long for the server's index.
fn tsquery(fts: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = fts;
    while let Some(c) = rest.chars().next() {
        if let Some(quoted) = rest.strip_prefix('"') {
            // "..." with "" for a quote inside.
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
            rest = &quoted[(end + 1).min(quoted.len())..];
            let prefix = rest.starts_with('*');
            if prefix {
                rest = &rest[1..];
            }
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

/// The words every text containing `needle` holds (as `query::search`'s literal plan): pieces
/// between separators are whole words; the first is dropped when the needle starts inside a
/// word (it may end a longer one), the last is a prefix when it ends inside one. ANDed rather
/// than a phrase: positions past the server's limits (16,383, 256 per word) are not kept.
fn literal_words(needle: &str) -> Option<String> {
    let word_at = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let starts_inside = word_at(needle.chars().next());
    let ends_inside = word_at(needle.chars().next_back());
    let all: Vec<String> = words(needle).map(|w| w.into_owned()).collect();
    let usable = all.get(usize::from(starts_inside)..).unwrap_or_default();
    if usable.is_empty() || usable.iter().any(|w| w.len() > 2047) {
        return None;
    }
    let last = usable.len() - 1;
    Some(
        usable
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let l = lexeme(w);
                if i == last && ends_inside {
                    l + ":*"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join(" & "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tsq(q: &str) -> String {
        match parse(q, false).unwrap() {
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
        assert_eq!(literal_words("fn main("), Some("'main'".into()));
        assert_eq!(literal_words(" fn main"), Some("'fn' & 'main':*".into()));
        assert_eq!(
            literal_words("src/main.rs:42"),
            Some("'main' & 'rs' & '42':*".into())
        );
        assert_eq!(literal_words("okeni"), None);
        assert_eq!(literal_words("->"), None);
    }
}
