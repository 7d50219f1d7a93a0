//! Candidates for `re:` search: the literal runs every match must contain, each planned like a
//! literal needle (`literal.rs`) and ANDed. Every text a regular expression matches contains
//! each run (the words index folds case and the accents and compatibility forms that
//! case-insensitive matching allows, as `ſ`, `K`), so the candidates miss nothing; the regex
//! then confirms against the JSONL line as before. Only ASCII runs are used: they are the
//! ones whose case folding the words index is known to cover.

use regex_syntax::hir::{Class, Hir, HirKind};
use rusqlite::Connection;

use super::literal::{self, Lookups, Plan};
use crate::error::Result;

/// Where the candidates for `pattern` come from, making at most the lookups `most` allows.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, pattern: &str, most: Lookups) -> Result<Plan> {
    let runs = required_needles(pattern);
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
    runs_with_edges(pattern)
        .into_iter()
        .map(|r| r.text)
        .collect()
}

/// [`required_runs`] as literal needles to plan: a run the pattern puts right after (or
/// before) characters that always separate words (`fn\s+`, `[(,]\s*x`) gets a space there, so
/// the literal planner knows the word ends (or starts) with the run, as it does for `fn `.
fn required_needles(pattern: &str) -> Vec<String> {
    runs_with_edges(pattern)
        .into_iter()
        .map(|r| {
            let (before, after) = (
                if r.before { " " } else { "" },
                if r.after { " " } else { "" },
            );
            format!("{before}{}{after}", r.text)
        })
        .collect()
}

/// A required run, and whether a word separator always stands right before and after it.
struct Run {
    text: String,
    before: bool,
    after: bool,
}

fn runs_with_edges(pattern: &str) -> Vec<Run> {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Vec::new();
    };
    let items: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(items) => items.iter().collect(),
        _ => vec![&hir],
    };
    let mut runs = Vec::new();
    let mut run = Vec::new();
    let mut before = false;
    for item in items {
        if let Some(bytes) = literal_bytes(item) {
            run.extend_from_slice(&bytes);
            continue;
        }
        // `x{2,}`: its first copies continue the run, the rest may or may not follow.
        if let HirKind::Repetition(rep) = item.kind() {
            if let Some(bytes) = literal_bytes(&rep.sub).filter(|_| rep.min >= 1) {
                for _ in 0..rep.min.min(64) {
                    run.extend_from_slice(&bytes);
                }
                flush(&mut run, &mut runs, before, false);
                before = false;
                continue;
            }
        }
        let separates = separators_only(item);
        flush(&mut run, &mut runs, before, separates);
        before = separates;
    }
    flush(&mut run, &mut runs, before, false);
    runs
}

/// The bytes every match of `hir` is, up to ASCII case (the index folds case, and `re:` is
/// case-insensitive): a literal, a class of one ASCII letter's two cases (`[Qq]`), a literal
/// repeated an exact number of times (`q{3}`), and sequences of those.
fn literal_bytes(hir: &Hir) -> Option<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(lit.0.to_vec()),
        HirKind::Class(class) => {
            let (lo, hi) = match class {
                Class::Unicode(c) => match c.ranges() {
                    [a, b] if a.start() == a.end() && b.start() == b.end() => {
                        (a.start(), b.start())
                    }
                    _ => return None,
                },
                Class::Bytes(c) => match c.ranges() {
                    [a, b] if a.start() == a.end() && b.start() == b.end() => {
                        (char::from(a.start()), char::from(b.start()))
                    }
                    _ => return None,
                },
            };
            (lo.is_ascii_uppercase() && hi == lo.to_ascii_lowercase()).then(|| vec![hi as u8])
        }
        HirKind::Repetition(rep) if Some(rep.min) == rep.max && rep.min <= 64 => {
            Some(literal_bytes(&rep.sub)?.repeat(rep.min as usize))
        }
        HirKind::Capture(cap) => literal_bytes(&cap.sub),
        HirKind::Concat(items) => {
            let parts: Option<Vec<Vec<u8>>> = items.iter().map(literal_bytes).collect();
            Some(parts?.concat())
        }
        _ => None,
    }
}

/// Classes larger than this are not checked character by character (`\W`, `[^a-z]`): taken
/// as possibly holding a word character.
const MAX_CLASS: u32 = 4096;

/// Whether every match of `hir` is one or more characters that FTS5's unicode61 tokenizer
/// always separates words with (anything but letters, numbers and private-use characters, its
/// default `categories`). Checked conservatively: Rust's alphanumerics include every letter
/// and number (and some marks, which only makes this say no more often).
fn separators_only(hir: &Hir) -> bool {
    let separator = |c: char| {
        !(c.is_alphanumeric() || matches!(c, '\u{e000}'..='\u{f8ff}' | '\u{f0000}'..='\u{10ffff}'))
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            let size: u32 = class.ranges().iter().map(|r| r.len() as u32).sum();
            size > 0
                && size <= MAX_CLASS
                && class
                    .ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(separator))
        }
        HirKind::Class(Class::Bytes(class)) => {
            !class.ranges().is_empty()
                && class.ranges().iter().all(|r| {
                    r.end() < 0x80 && (r.start()..=r.end()).all(|b| separator(char::from(b)))
                })
        }
        HirKind::Literal(lit) => {
            !lit.0.is_empty() && lit.0.iter().all(|&b| b < 0x80 && separator(char::from(b)))
        }
        HirKind::Repetition(rep) => rep.min >= 1 && separators_only(&rep.sub),
        HirKind::Capture(cap) => separators_only(&cap.sub),
        HirKind::Concat(items) => !items.is_empty() && items.iter().all(separators_only),
        HirKind::Alternation(items) => items.iter().all(separators_only),
        HirKind::Empty | HirKind::Look(_) => false,
    }
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

fn flush(run: &mut Vec<u8>, runs: &mut Vec<Run>, before: bool, after: bool) {
    let bytes = std::mem::take(run);
    if !bytes.is_empty() && bytes.is_ascii() {
        runs.push(Run {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            before,
            after,
        });
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
        // Case-insensitive letters are a class of their two cases, except `k` and `s` (Kelvin
        // sign, long s): a class of three.
        assert_eq!(required_runs("(?i)abc"), ["abc"]);
        assert_eq!(required_runs("(?i)ask"), ["a"]);
        assert!(required_runs("café").is_empty());
    }

    #[test]
    fn runs_next_to_separators_are_planned_as_word_edges() {
        use super::required_needles;
        assert_eq!(required_needles(r"fn\s+\w+_line"), ["fn ", "_line"]);
        assert_eq!(required_needles(r"fn \w+_line"), ["fn ", "_line"]);
        assert_eq!(required_needles(r"[(,]\s*parse\s"), ["parse "]);
        assert_eq!(required_needles(r"\s+parse[.:]+line"), [" parse ", " line"]);
        // Not always a separator: optional, possibly a word character, or too large to check.
        assert_eq!(required_needles(r"fn\s*x"), ["fn", "x"]);
        assert_eq!(required_needles(r"fn[\sa]x"), ["fn", "x"]);
        assert_eq!(required_needles(r"fn[\s_]x"), ["fn ", " x"]);
        assert_eq!(required_needles(r"fn\Wx"), ["fn", "x"]);
        assert_eq!(required_needles(r"fn\bx"), ["fn", "x"]);
    }

    #[test]
    fn case_classes_and_exact_repeats_are_literals() {
        assert_eq!(required_runs(r"[Qq]{3}[0-9]"), ["qqq"]);
        assert_eq!(required_runs(r"x{2,}y"), ["xx", "y"]);
        assert_eq!(required_runs(r"(ab){2}c"), ["ababc"]);
        assert_eq!(required_runs(r"[Qa]{3}"), Vec::<String>::new());
        assert_eq!(required_runs(r"x{0,3}y"), ["y"]);
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
        let may = raw_prefilter("(?i)abc").unwrap();
        assert!(may(br#"{"content":"xABcx"}"#) && !may(br#"{"content":"ab c"}"#));
        // Runs with `k` or `s`, punctuation or digits give no test.
        for pattern in ["ask_\\w+", r"src/main\.rs:\d+", "foo|bar", "(?i)s"] {
            assert!(raw_prefilter(pattern).is_none(), "{pattern}");
        }
    }
}
