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
use crate::store::words::{self, Lookup};

/// More vocabulary words than this and a scan is cheaper than the OR query.
pub(super) const MAX_TERMS: usize = 2000;
/// The same for a needle inside words at both ends (`the`, `oun`), whose OR query holds every
/// word containing it: FTS5 steps an OR through all of its words at every row, so its cost
/// grows with words times rows. On the 1 GB corpus (401,440 texts) the OR took 69 ms for 62
/// words, 105 for 252, 187 for 443, 472 for 1,025 and 709 for 1,126, a scan of every text
/// newest run first 230-290 ms whatever the needle.
const MAX_INSIDE_TERMS: usize = 500;
/// Words ending with a needle's first piece, each one a phrase with the needle's later words,
/// when the last of those is a prefix: FTS5 expands a prefix again for every phrase (`"x
/// line"*` cost 22 ms each on a 1 GB index, 68 of them 1.5 s), so past this many the words
/// and the rest are asked for apart (`(w1 OR w2 ...) AND "line"*`: more candidates, one
/// expansion). Phrases without a prefix cost a fraction of a millisecond each.
const MAX_PREFIXED_PHRASES: usize = 8;

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
/// whole word or a word's start (no lookup needed). The first piece is left out when the
/// needle starts inside a word: the text's word may be longer (`reparse_line`).
fn phrase(needle: &str) -> Option<String> {
    let pieces: Vec<&str> = needle.split(sep).filter(|p| !p.is_empty()).collect();
    let usable = pieces
        .get(usize::from(starts_inside(needle))..)
        .unwrap_or_default();
    (!usable.is_empty()).then(|| phrase_of(usable.iter().copied(), ends_inside(needle)))
}

fn starts_inside(needle: &str) -> bool {
    !needle.starts_with(sep)
}

fn ends_inside(needle: &str) -> bool {
    !needle.ends_with(sep)
}

/// Words that follow each other in the text, as one FTS5 phrase; the last one a prefix when
/// the needle ends inside a word.
fn phrase_of<'a>(words: impl Iterator<Item = &'a str>, prefix: bool) -> String {
    let mut phrase = crate::store::fts5::phrase(&words.collect::<Vec<_>>().join(" "));
    if prefix {
        phrase.push('*');
    }
    phrase
}

/// Which lookups of the words table a plan may make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookups {
    /// Index ranges only (words ending with a piece): milliseconds.
    Ranges,
    /// Also a scan of the table (words containing a piece): about 0.1 s per million words.
    All,
}

/// The plan for `needle`.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, needle: &str, lookups: Lookups) -> Result<Plan> {
    let pieces: Vec<&str> = needle.split(sep).filter(|p| !p.is_empty()).collect();
    let Some(&first) = pieces.first() else {
        return Ok(Plan::Scan);
    };
    let (starts_inside, ends_inside) = (starts_inside(needle), ends_inside(needle));
    let inside = pieces.len() == 1 && ends_inside;
    if starts_inside && first.is_ascii() && (!inside || lookups == Lookups::All) {
        // A word inside a word at both ends: every indexed word containing it. Else the
        // first piece ends a word: every indexed word ending with it, each one a phrase with
        // the pieces that follow.
        let folded = first.to_ascii_lowercase();
        let found = if inside {
            words::containing(conn, &folded, MAX_INSIDE_TERMS)?
        } else {
            words::ending_with(conn, &folded, MAX_TERMS)?
        };
        match found {
            Lookup::Words(found) if found.is_empty() => return Ok(Plan::Nothing),
            Lookup::Words(found) => {
                let prefix = ends_inside && !inside;
                return Ok(Plan::Match(alternatives(
                    &found,
                    &folded,
                    &pieces[1..],
                    prefix,
                )));
            }
            Lookup::TooMany | Lookup::Unsure if inside => return Ok(Plan::Scan),
            Lookup::TooMany | Lookup::Unsure => {}
        }
    }
    Ok(phrase(needle).map_or(Plan::Scan, Plan::Match))
}

/// The FTS5 expression for texts where one of `words` (all ending with `piece`, folded) is
/// followed by the words `rest` (the last one a prefix when `prefix`).
fn alternatives(words: &[String], piece: &str, rest: &[&str], prefix: bool) -> String {
    let phrase = |w: &str| phrase_of(std::iter::once(w).chain(rest.iter().copied()), prefix);
    if prefix && words.len() > MAX_PREFIXED_PHRASES {
        // The piece as a word of its own is usually the common one (`parse`, beside rare
        // `stringparse`): alone in the AND form it brought most of its candidates (40,347 of
        // them for `parse_line` on the 1 GB corpus, 5,023 with its own phrase).
        let (own, others): (Vec<&String>, Vec<&String>) = words.iter().partition(|w| *w == piece);
        let any = others
            .iter()
            .map(|w| phrase_of(std::iter::once(w.as_str()), false))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut expr = format!("(({any}) AND {})", phrase_of(rest.iter().copied(), true));
        for w in own {
            expr = format!("{} OR {expr}", phrase(w));
        }
        return expr;
    }
    words
        .iter()
        .map(|w| phrase(w))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Which prefixes FTS5 pays much for: those whose frequent words (`store::impacts`) hold a
/// quarter of the index's texts or more between them. On the 1 GB corpus `line` (in 130,431 of
/// 401,443 texts) costs 25 ms alone, where `main` (31,983) and `42` (none frequent) cost a few
/// ms in their phrases, less than reading the looser query's extra candidates. A prefix whose
/// words are each rare but many (`4`: 5,804 numbers) is missed: its query stays as it was.
///
/// # Errors
/// Index errors.
pub(super) fn costly_prefixes(conn: &Connection) -> Result<impl Fn(&str) -> bool + '_> {
    let rows = crate::store::fts5::totals(conn, "fts")?.map_or(0, |(rows, _)| rows);
    Ok(move |prefix: &str| {
        rows > 0
            && crate::store::impacts::texts_of_prefix(conn, prefix).is_ok_and(|n| n >= rows / 4)
    })
}

/// `fts` (an expression of this module's or `required.rs`'s: phrases, a phrase's last word
/// maybe a prefix, `AND` and `OR` with parentheses) without the prefixes `costly` says FTS5
/// pays much for: a phrase ending in one loses that word, and one alone matches anything.
/// Every text matching `fts` matches it. FTS5 builds a prefix's whole list of texts with their
/// positions whatever else the query asks (`"parse l"*`: 273 ms on the 1 GB corpus, `"parse"`
/// 1.6 ms), so a search takes its candidates from this first (`newest::Looser`). `None` when
/// no prefix was dropped or nothing is left (or `fts` is not of that form).
pub(super) fn loosened(fts: &str, costly: &dyn Fn(&str) -> bool) -> Option<String> {
    let mut p = Loosening {
        b: fts.as_bytes(),
        at: 0,
        costly,
        dropped: false,
    };
    let loose = p.expr()?;
    (p.at == fts.len() && p.dropped).then_some(())?;
    match loose {
        Loose::All => None,
        Loose::Only(e) => Some(e),
    }
}

/// What is left of an expression without its costly prefixes.
enum Loose {
    /// Every text.
    All,
    Only(String),
}

struct Loosening<'a> {
    b: &'a [u8],
    at: usize,
    costly: &'a dyn Fn(&str) -> bool,
    dropped: bool,
}

impl Loosening<'_> {
    /// An expression: terms joined by one operator (`AND` or `OR`; mixing them needs
    /// parentheses).
    fn expr(&mut self) -> Option<Loose> {
        let mut terms = vec![self.term()?];
        let mut op: Option<&str> = None;
        loop {
            let rest = &self.b[self.at..];
            let next = if rest.starts_with(b" AND ") {
                "AND"
            } else if rest.starts_with(b" OR ") {
                "OR"
            } else {
                break;
            };
            if op.is_some_and(|o| o != next) {
                return None;
            }
            op = Some(next);
            self.at += next.len() + 2;
            terms.push(self.term()?);
        }
        let kept: Vec<String> = match op {
            Some("OR") if terms.iter().any(|t| matches!(t, Loose::All)) => return Some(Loose::All),
            _ => terms
                .into_iter()
                .filter_map(|t| match t {
                    Loose::All => None,
                    Loose::Only(e) => Some(e),
                })
                .collect(),
        };
        Some(match kept.len() {
            0 => Loose::All,
            1 => Loose::Only(kept.into_iter().next().expect("one")),
            _ => Loose::Only(kept.join(&format!(" {} ", op.expect("several terms")))),
        })
    }

    /// A parenthesised expression, or a phrase maybe ending in a prefix.
    fn term(&mut self) -> Option<Loose> {
        let b = self.b;
        if b.get(self.at) == Some(&b'(') {
            self.at += 1;
            let inner = self.expr()?;
            (b.get(self.at) == Some(&b')')).then_some(())?;
            self.at += 1;
            return Some(match inner {
                Loose::Only(e) => Loose::Only(format!("({e})")),
                all => all,
            });
        }
        (b.get(self.at) == Some(&b'"')).then_some(())?;
        let start = self.at + 1;
        let mut end = start;
        // A phrase ends at a quote not doubled.
        loop {
            match b.get(end)? {
                b'"' if b.get(end + 1) == Some(&b'"') => end += 2,
                b'"' => break,
                _ => end += 1,
            }
        }
        let words = std::str::from_utf8(&b[start..end]).ok()?;
        self.at = end + 1;
        if b.get(self.at) != Some(&b'*') {
            return Some(Loose::Only(format!("\"{words}\"")));
        }
        self.at += 1;
        let (before, prefix) = match words.rsplit_once(' ') {
            Some((before, prefix)) => (Some(before), prefix),
            None => (None, words),
        };
        if !(self.costly)(prefix) {
            return Some(Loose::Only(format!("\"{words}\"*")));
        }
        self.dropped = true;
        Some(before.map_or(Loose::All, |before| Loose::Only(format!("\"{before}\""))))
    }
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
    use super::{loosened, raw_prefilter};

    #[test]
    fn loosening_drops_the_prefixes_and_keeps_the_rest() {
        let cases = [
            (r#""src main rs 42"*"#, Some(r#""src main rs""#)),
            (r#""fn m"* OR "nfn m"*"#, Some(r#""fn" OR "nfn""#)),
            (
                r#"("fn" OR "nfn") AND ("line"*)"#,
                Some(r#"("fn" OR "nfn")"#),
            ),
            (
                r#"("fn" OR "nfn") AND ("l"*) AND ("x y")"#,
                Some(r#"("fn" OR "nfn") AND ("x y")"#),
            ),
            (
                r#""parse l"* OR (("a" OR "b") AND "l"*)"#,
                Some(r#""parse" OR (("a" OR "b"))"#),
            ),
            // A prefix alone, or in an OR: every text.
            (r#""line"*"#, None),
            (r#""fn" OR "li"*"#, None),
            // Nothing to drop.
            (r#""src main rs""#, None),
            (r#"("fn") AND ("line")"#, None),
            // Not of the form: left as it is.
            (r#""a"* AND "b" OR "c""#, None),
            (r#""a b"* junk"#, None),
        ];
        for (fts, want) in cases {
            assert_eq!(loosened(fts, &|_| true).as_deref(), want, "{fts}");
        }
        // Only the prefixes said to be costly go.
        let costly = |p: &str| p.len() < 3;
        assert_eq!(
            loosened(r#""fn m"* OR "nfn main"*"#, &costly).as_deref(),
            Some(r#""fn" OR "nfn main"*"#)
        );
        assert_eq!(loosened(r#""src main rs 42x"*"#, &costly), None);
    }

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
