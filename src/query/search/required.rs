//! Candidates for `re:` search: the literal runs every match must contain, each planned like a
//! literal needle (`literal.rs`) and ANDed. Every text a regular expression matches contains
//! each run (the words index folds case and the accents and compatibility forms that
//! case-insensitive matching allows, as `ſ`, `K`), so the candidates miss nothing; the regex
//! then confirms against the JSONL line as before. Only ASCII runs are used: they are the
//! ones whose case folding the words index is known to cover.

use regex_syntax::hir::{Hir, HirKind};
use rusqlite::Connection;

use super::literal::{self, Plan};
use crate::error::Result;

/// Where the candidates for `pattern` come from.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, pattern: &str) -> Result<Plan> {
    let runs = required_runs(pattern);
    // Phrases cost nothing to plan; vocabulary lookups walk the whole index, so they are used
    // only when no run gives a phrase.
    let phrases: Vec<String> = runs
        .iter()
        .filter_map(|r| literal::phrase(r))
        .map(|q| format!("({q})"))
        .collect();
    if !phrases.is_empty() {
        return Ok(Plan::Match(phrases.join(" AND ")));
    }
    let mut parts = Vec::new();
    for run in runs {
        match literal::plan(conn, &run)? {
            Plan::Nothing => return Ok(Plan::Nothing),
            Plan::Match(q) => parts.push(format!("({q})")),
            Plan::Scan => {}
        }
    }
    if parts.is_empty() {
        return Ok(Plan::Scan);
    }
    Ok(Plan::Match(parts.join(" AND ")))
}

/// The ASCII literal runs of the pattern's top-level sequence (parsed case-sensitively: a
/// case-insensitive match contains a case variant of each run, which the index does not tell
/// apart).
pub fn required_runs(pattern: &str) -> Vec<String> {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Vec::new();
    };
    let items: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(items) => items.iter().collect(),
        _ => vec![&hir],
    };
    let mut runs = Vec::new();
    let mut run = Vec::new();
    for item in items {
        match item.kind() {
            HirKind::Literal(lit) => run.extend_from_slice(&lit.0),
            _ => flush(&mut run, &mut runs),
        }
    }
    flush(&mut run, &mut runs);
    runs
}

fn flush(run: &mut Vec<u8>, runs: &mut Vec<String>) {
    let bytes = std::mem::take(run);
    if !bytes.is_empty() && bytes.is_ascii() {
        runs.push(String::from_utf8_lossy(&bytes).into_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::required_runs;

    #[test]
    fn runs_are_the_literals_of_the_top_level_sequence() {
        assert_eq!(required_runs(r"fn \w+_line"), ["fn ", "_line"]);
        assert_eq!(required_runs(r"TODO\(\w+\)"), ["TODO(", ")"]);
        assert_eq!(required_runs("parse_line"), ["parse_line"]);
        assert!(required_runs("foo|bar").is_empty());
        assert!(required_runs("(?i)abc").is_empty());
        assert!(required_runs("café").is_empty());
    }
}
