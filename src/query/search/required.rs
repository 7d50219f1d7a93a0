//! Candidates for `re:` search: the literal runs every match must contain, each planned like a
//! literal needle (`literal.rs`) and ANDed. Every text a regular expression matches contains
//! each run (the words index folds case and the accents and compatibility forms that
//! case-insensitive matching allows, as `ſ`, `K`), so the candidates miss nothing; the regex
//! then confirms against the JSONL line as before. Only ASCII runs are used: they are the
//! ones whose case folding the words index is known to cover.

use regex_syntax::hir::{Hir, HirKind};
use rusqlite::Connection;

use super::literal::{self, Lookups, Plan};
use crate::error::Result;

/// Where the candidates for `pattern` come from, making at most the lookups `most` allows.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, pattern: &str, most: Lookups) -> Result<Plan> {
    let runs = required_runs(pattern);
    // Range lookups cost nothing; scans of the words table (when `most` allows them) only
    // when no run gives a phrase.
    let allowed: &[Lookups] = match most {
        Lookups::Ranges => &[Lookups::Ranges],
        Lookups::All => &[Lookups::Ranges, Lookups::All],
    };
    for &lookups in allowed {
        let mut parts = Vec::new();
        for run in &runs {
            match literal::plan(conn, run, lookups)? {
                Plan::Nothing => return Ok(Plan::Nothing),
                Plan::Match(q) => parts.push(format!("({q})")),
                Plan::Scan => {}
            }
        }
        if !parts.is_empty() {
            return Ok(Plan::Match(parts.join(" AND ")));
        }
    }
    Ok(Plan::Scan)
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

/// A test on a candidate's raw JSONL line that says when no text of it can match `pattern`,
/// before the line is parsed (as [`literal::raw_prefilter`], whose reasons hold run by run): a
/// matching text contains each required run up to case, and a run of ASCII letters, `_` and
/// spaces is written in the line as it is, unless the line has `\u` escapes. Only letters
/// without a non-ASCII case variant are trusted (`k` and `s` have `K` and `ſ`), so an ASCII
/// case-insensitive byte search finds the run. `None`: no such run.
pub fn raw_prefilter(pattern: &str) -> Option<impl Fn(&[u8]) -> bool> {
    let runs = required_runs(pattern)
        .into_iter()
        .filter(|r| {
            r.bytes().all(|b| {
                (b.is_ascii_alphabetic() && !matches!(b.to_ascii_lowercase(), b'k' | b's'))
                    || b == b'_'
                    || b == b' '
            })
        })
        .map(|r| {
            regex::bytes::RegexBuilder::new(&regex::escape(&r))
                .case_insensitive(true)
                .unicode(false)
                .build()
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .ok()?;
    if runs.is_empty() {
        return None;
    }
    let escape = memchr::memmem::Finder::new(b"\\u").into_owned();
    Some(move |line: &[u8]| escape.find(line).is_some() || runs.iter().all(|r| r.is_match(line)))
}

fn flush(run: &mut Vec<u8>, runs: &mut Vec<String>) {
    let bytes = std::mem::take(run);
    if !bytes.is_empty() && bytes.is_ascii() {
        runs.push(String::from_utf8_lossy(&bytes).into_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::{raw_prefilter, required_runs};

    #[test]
    fn runs_are_the_literals_of_the_top_level_sequence() {
        assert_eq!(required_runs(r"fn \w+_line"), ["fn ", "_line"]);
        assert_eq!(required_runs(r"TODO\(\w+\)"), ["TODO(", ")"]);
        assert_eq!(required_runs("parse_line"), ["parse_line"]);
        assert!(required_runs("foo|bar").is_empty());
        assert!(required_runs("(?i)abc").is_empty());
        assert!(required_runs("café").is_empty());
    }

    #[test]
    fn only_letters_without_a_non_ascii_case_variant_are_trusted_in_raw_lines() {
        // Every character that a case-insensitive regex matches for an ASCII letter.
        for letter in b'a'..=b'z' {
            let re = regex::Regex::new(&format!("(?i)^{}$", letter as char)).unwrap();
            let foreign = (0x80u32..=0x10FFFF)
                .filter_map(char::from_u32)
                .any(|c| re.is_match(c.encode_utf8(&mut [0; 4])));
            assert_eq!(foreign, matches!(letter, b'k' | b's'), "{}", letter as char);
        }
    }

    #[test]
    fn the_raw_prefilter_never_rejects_a_line_whose_text_can_match() {
        let may = raw_prefilter(r"fn \w+_line").unwrap();
        assert!(may(br#"{"content":"FN parse_LINE(x)"}"#));
        assert!(may(br#"{"content":"f\u006e parse_line"}"#));
        assert!(!may(br#"{"content":"fn main() { line }"}"#));
        assert!(!may(br#"{"content":"parse_line"}"#));
        // Runs with `k` or `s`, punctuation or digits give no test.
        for pattern in ["ask_\\w+", r"src/main\.rs:\d+", "foo|bar", "(?i)abc"] {
            assert!(raw_prefilter(pattern).is_none(), "{pattern}");
        }
    }
}
