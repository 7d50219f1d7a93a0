//! The search query language, turned into something SQLite can run safely: user text never
//! reaches FTS5's parser as syntax, only as quoted strings this module writes.
//!
//! - words: all must match, any order, case- and accent-insensitive;
//! - `"exact phrase"`; `prefix*`; `-excluded`; `a OR b`;
//! - `re:PATTERN`: a regular expression (case-insensitive), bounded in size;
//! - literal: the exact substring (`--literal`, or by itself when no word can be found in the
//!   query, e.g. `->` or an emoji).

use regex::{Regex, RegexBuilder};

use crate::error::{Error, Result};
use crate::store::fts5::phrase;

/// What a query asks for.
#[derive(Debug, Clone)]
pub enum Query {
    /// An FTS5 expression over the words index, and the terms to highlight.
    Words {
        fts: String,
        terms: Vec<String>,
    },
    /// Every text containing this exact string (case-sensitive).
    Literal(String),
    Regex(Regex),
}

/// One piece of the user's query.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Term {
        text: String,
        phrase: bool,
        prefix: bool,
        negated: bool,
    },
    Or,
}

/// Regular expressions are compiled with these bounds (bytes of compiled program / lazy DFA).
const REGEX_LIMIT: usize = 8 << 20;

/// Parses what the user typed.
///
/// # Errors
/// `Invalid` with a one-line explanation (empty query, nothing but exclusions, a bad regex).
pub fn parse(input: &str, literal: bool) -> Result<Query> {
    if literal {
        if input.is_empty() {
            return Err(Error::Invalid(
                "an empty literal matches everything; give some text".into(),
            ));
        }
        return Ok(Query::Literal(input.to_string()));
    }
    let trimmed = input.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        if pattern.is_empty() {
            return Err(Error::Invalid("re: needs a pattern after it".into()));
        }
        let re = RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(REGEX_LIMIT)
            .dfa_size_limit(REGEX_LIMIT)
            .build()
            .map_err(|e| {
                Error::Invalid(format!(
                    "bad regular expression: {}",
                    one_line(&e.to_string())
                ))
            })?;
        return Ok(Query::Regex(re));
    }
    if trimmed.is_empty() {
        return Err(Error::Invalid("the query is empty".into()));
    }
    let tokens = tokenize(trimmed);
    let positive: Vec<&Token> = tokens
        .iter()
        .filter(|t| matches!(t, Token::Term { negated: false, .. }))
        .collect();
    // A term without a letter or digit has no word to look up: search the text literally.
    let wordless = |t: &&Token| matches!(t, Token::Term { text, .. } if !has_word(text));
    if positive.is_empty() {
        if tokens.iter().any(|t| matches!(t, Token::Term { .. }))
            && tokens.iter().all(|t| !wordless(&t))
        {
            return Err(Error::Invalid(
                "the query only excludes words; add a word to find".into(),
            ));
        }
        return Ok(Query::Literal(trimmed.to_string()));
    }
    if positive.iter().any(wordless) {
        return Ok(Query::Literal(trimmed.to_string()));
    }
    Ok(words_query(&tokens))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether FTS5's unicode61 tokenizer finds a word in `s` (letters and digits make words).
fn has_word(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// Splits at white space; `"..."` is one phrase; a lone quote is an ordinary character.
fn tokenize(input: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = input;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        let (negated, body) = match rest.strip_prefix('-') {
            Some(b) if b.starts_with('"') || b.starts_with(|c: char| !c.is_whitespace()) => {
                (true, b)
            }
            _ => (false, rest),
        };
        if let Some(inner) = body.strip_prefix('"') {
            if let Some(end) = inner.find('"') {
                out.push(Token::Term {
                    text: inner[..end].to_string(),
                    phrase: true,
                    prefix: false,
                    negated,
                });
                rest = &inner[end + 1..];
                continue;
            }
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if word == "OR" {
            out.push(Token::Or);
            continue;
        }
        let text = if negated { &word[1..] } else { word };
        let (text, prefix) = match text.strip_suffix('*') {
            Some(t) if has_word(t) => (t, true),
            _ => (text, false),
        };
        out.push(Token::Term {
            text: text.to_string(),
            phrase: false,
            prefix,
            negated,
        });
    }
    out
}

/// Whether a words query's FTS5 expression asks for its one term (a word or a phrase) and
/// nothing else: no prefix, no alternative, no exclusion.
pub(super) fn one_term(fts: &str, terms: &[String]) -> bool {
    matches!(terms, [t] if fts == format!("({})", phrase(t)))
}

/// The FTS5 phrases of a words query that asks for each of its terms (two or more) and nothing
/// else: no prefix, no alternative, no exclusion (`("the") AND ("function")`).
pub(super) fn each_term(fts: &str, terms: &[String]) -> Option<Vec<String>> {
    let phrases: Vec<String> = terms.iter().map(|t| phrase(t)).collect();
    let all = phrases
        .iter()
        .map(|p| format!("({p})"))
        .collect::<Vec<_>>()
        .join(" AND ");
    (phrases.len() >= 2 && fts == all).then_some(phrases)
}

fn words_query(tokens: &[Token]) -> Query {
    // Positive terms: AND of OR-groups (`a OR b c` is `(a OR b) AND c`).
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut excluded = Vec::new();
    let mut terms = Vec::new();
    let mut join_next = false;
    for t in tokens {
        match t {
            Token::Or => join_next = !groups.is_empty(),
            Token::Term {
                text,
                prefix,
                negated,
                ..
            } => {
                if !has_word(text) {
                    continue; // an excluded word-less term cannot be looked up
                }
                let mut fts = phrase(text);
                if *prefix {
                    fts.push('*');
                }
                if *negated {
                    excluded.push(fts);
                    continue;
                }
                terms.push(text.clone());
                match groups.last_mut() {
                    Some(g) if join_next => g.push(fts),
                    _ => groups.push(vec![fts]),
                }
                join_next = false;
            }
        }
    }
    let mut fts = groups
        .iter()
        .map(|g| format!("({})", g.join(" OR ")))
        .collect::<Vec<_>>()
        .join(" AND ");
    if !excluded.is_empty() {
        fts = format!("({fts}) NOT ({})", excluded.join(" OR "));
    }
    Query::Words { fts, terms }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fts(q: &str) -> String {
        match parse(q, false).unwrap() {
            Query::Words { fts, .. } => fts,
            other => panic!("{q}: {other:?}"),
        }
    }

    #[test]
    fn words_phrases_prefixes_exclusions_and_or() {
        assert_eq!(fts("foo bar"), r#"("foo") AND ("bar")"#);
        assert_eq!(fts(r#""exact phrase" x"#), r#"("exact phrase") AND ("x")"#);
        assert_eq!(fts("pre* -no"), r#"(("pre"*)) NOT ("no")"#);
        assert_eq!(fts("a OR b c"), r#"("a" OR "b") AND ("c")"#);
        // An unbalanced quote is an ordinary character, doubled inside the FTS5 string.
        assert_eq!(fts(r#"say "hi"#), r#"("say") AND ("""hi")"#);
        assert_eq!(fts("main.rs"), r#"("main.rs")"#);
    }

    #[test]
    fn wordless_queries_become_literal() {
        for q in ["->", "-", "🦀", "(("] {
            assert!(
                matches!(parse(q, false).unwrap(), Query::Literal(ref s) if s == q),
                "{q}"
            );
        }
    }

    #[test]
    fn bad_input_is_explained() {
        for q in ["", "   ", "-foo", "re:", "re:(", "re:a{1000000}"] {
            let err = parse(q, false).unwrap_err().to_string();
            assert!(!err.contains("fts5"), "{q}: {err}");
        }
    }
}
