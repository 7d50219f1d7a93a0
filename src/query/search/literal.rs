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
