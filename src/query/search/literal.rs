//! Candidates for literal (exact substring) search from the words index. Every text containing
//! the needle must be a candidate (the JSONL line then confirms the exact match), so the query
//! asks only for what the needle guarantees:
//!
//! - the needle is cut into pieces at ASCII punctuation and spaces, which are always word
//!   separators for FTS5's unicode61 tokenizer;
//! - pieces with a separator on both sides inside the needle are exact words, one after the
//!   other in the text as in the needle: together one phrase;
//! - when the needle ends inside a word, the phrase's last word is a prefix;
//! - the first piece, when the needle starts inside a word, may be the end of a longer word, so
//!   it adds no condition;
//! - a needle that is one ASCII piece, inside a word at both ends (`9f2c1ab`, `tokeniz`), is
//!   looked up in the vocabulary: every indexed word containing it.
//!
//! What is left (no usable piece, a single non-ASCII piece, too many vocabulary words) scans
//! every text.

use rusqlite::Connection;

use crate::error::Result;

/// More vocabulary words than this and a scan is cheaper than the OR query.
const MAX_TERMS: usize = 2000;

/// Where literal candidates come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// An FTS5 expression over `fts` that every text containing the needle matches.
    Match(String),
    /// No indexed word contains the needle: nothing can match.
    Nothing,
    /// Only a scan of every text can tell.
    Scan,
}

/// ASCII punctuation and spaces: always word separators for unicode61.
fn sep(c: char) -> bool {
    c.is_ascii() && !c.is_ascii_alphanumeric()
}

/// The phrase every text containing `needle` matches, when the needle has a piece that is a
/// whole word or a word's start (no vocabulary lookup needed).
pub fn phrase(needle: &str) -> Option<String> {
    let pieces: Vec<&str> = needle.split(sep).filter(|p| !p.is_empty()).collect();
    let starts_inside = !needle.starts_with(sep);
    let ends_inside = !needle.ends_with(sep);
    // Pieces follow each other in the text as they do in the needle (only separators between
    // them), so the usable ones form one phrase.
    let usable = pieces.get(usize::from(starts_inside)..).unwrap_or_default();
    if usable.is_empty() {
        return None;
    }
    let phrase = format!("\"{}\"", usable.join(" ").replace('"', "\"\""));
    Some(if ends_inside { phrase + "*" } else { phrase })
}

/// The plan for `needle`.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, needle: &str) -> Result<Plan> {
    if let Some(phrase) = phrase(needle) {
        return Ok(Plan::Match(phrase));
    }
    let pieces: Vec<&str> = needle.split(sep).filter(|p| !p.is_empty()).collect();
    if pieces.is_empty() {
        return Ok(Plan::Scan);
    }
    // One piece, inside a word at both ends: the vocabulary (a walk of the whole index, so
    // the slow way).
    let piece = pieces[0];
    if !piece.is_ascii() {
        return Ok(Plan::Scan);
    }
    let folded = piece.to_ascii_lowercase();
    let mut stmt =
        conn.prepare_cached("SELECT term FROM fts_vocab WHERE instr(term, ?1) > 0 LIMIT ?2")?;
    let terms: Vec<String> = stmt
        .query_map(rusqlite::params![folded, MAX_TERMS as i64 + 1], |r| {
            r.get(0)
        })?
        .collect::<rusqlite::Result<_>>()?;
    if terms.len() > MAX_TERMS {
        return Ok(Plan::Scan);
    }
    if terms.is_empty() {
        return Ok(Plan::Nothing);
    }
    Ok(Plan::Match(
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR "),
    ))
}

/// A test on a candidate's raw JSONL line that says when its texts cannot contain `needle`,
/// before the line is parsed (most candidates of a needle made of common words do not match).
/// Only for needles of ASCII letters, `_` and spaces, which JSON writes as they are and which
/// pidx's text extraction never creates across two strings (its texts join with newlines, and
/// re-serialised tool arguments differ from the line only in numbers and structure): then a
/// text holds the needle only where the line holds its bytes, unless the line has `\u` escapes
/// (which can spell any letter). `None`: no such test for this needle.
pub fn raw_prefilter(needle: &str) -> Option<impl Fn(&[u8]) -> bool + '_> {
    let plain = !needle.is_empty()
        && needle
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b' ');
    plain.then(|| {
        let find = memchr::memmem::Finder::new(needle.as_bytes());
        let escape = memchr::memmem::Finder::new(b"\\u");
        move |line: &[u8]| find.find(line).is_some() || escape.find(line).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::raw_prefilter;

    #[test]
    fn the_raw_prefilter_never_rejects_a_line_whose_text_holds_the_needle() {
        let may = raw_prefilter("parse_header").unwrap();
        assert!(may(br#"{"message":{"content":"call parse_header now"}}"#));
        // A \u escape can spell the needle's letters: the line must be parsed.
        assert!(may(
            br#"{"message":{"content":"call p\u0061rse_header now"}}"#
        ));
        assert!(!may(br#"{"message":{"content":"parse the header"}}"#));
        assert!(raw_prefilter("fn main").is_some());
        for needle in ["src/main.rs", "x\"y", "a\\b", "v2", "é", "1e2", ""] {
            assert!(raw_prefilter(needle).is_none(), "{needle:?}");
        }
    }
}
