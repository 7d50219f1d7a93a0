//! A short window of a hit's text around the first match, with the matched ranges marked.

use regex::{Regex, RegexBuilder};
use serde::Serialize;

use crate::store::words::{accented, latin_base};

/// Characters kept before and after the first match.
const BEFORE: usize = 60;
const AFTER: usize = 100;

/// Text around a match; `marks` are byte ranges of `text` that matched.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Snippet {
    pub text: String,
    pub marks: Vec<(usize, usize)>,
}

impl Snippet {
    /// The window around `text[start..end]`.
    pub fn at(text: &str, start: usize, end: usize) -> Snippet {
        let from = back_chars(text, start, BEFORE);
        let to = forward_chars(text, end, AFTER);
        let mut s = String::new();
        let mut shift = 0usize;
        if from > 0 {
            s.push('…');
            shift = '…'.len_utf8();
        }
        s.push_str(&text[from..to]);
        if to < text.len() {
            s.push('…');
        }
        Snippet {
            text: s,
            marks: vec![(start - from + shift, end - from + shift)],
        }
    }

    /// The window around the first match of `terms` (or the start of the text), marking every
    /// match inside it.
    pub fn around(text: &str, terms: Option<&Regex>) -> Snippet {
        let first = terms.and_then(|re| re.find(text));
        let mut snippet = match first {
            Some(m) => Snippet::at(text, m.start(), m.end()),
            None => Snippet::at(text, 0, 0),
        };
        if first.is_none() {
            snippet.marks.clear();
        }
        if let Some(re) = terms {
            snippet.marks = re
                .find_iter(&snippet.text)
                .map(|m| (m.start(), m.end()))
                .collect();
        }
        snippet
    }
}

/// A case-insensitive regex finding any of the query's terms, to mark them.
pub fn terms_regex(terms: &[String]) -> Option<Regex> {
    let alternatives: Vec<String> = terms
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| {
            // Words of a phrase may be separated by any punctuation or space in the text. The
            // separator class is left out of case folding (`(?-i:)`; letters and numbers fold to
            // letters and numbers): folding all of them was a third of building the regex of
            // `src/main.rs:42` (1.0 -> 0.67 ms, of a 12 ms search).
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(folded)
                .collect::<Vec<_>>()
                .join(r"(?-i:[^\p{L}\p{N}]+)")
        })
        .filter(|t| !t.is_empty())
        .collect();
    if alternatives.is_empty() {
        return None;
    }
    RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// A word's pattern matching what the full-text index matches it with: each Latin letter
/// also as any accented letter that folds to it (`jalapeno` marks `jalapeño`, and back).
fn folded(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        let base = latin_base(c).unwrap_or(c).to_ascii_lowercase();
        let mut accents = accented(base).peekable();
        if accents.peek().is_none() {
            out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
            continue;
        }
        out.push('[');
        out.push(base);
        out.extend(accents);
        out.push(']');
    }
    out
}

fn back_chars(text: &str, at: usize, n: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

fn forward_chars(text: &str, at: usize, n: usize) -> usize {
    text[at..]
        .char_indices()
        .nth(n)
        .map_or(text.len(), |(i, _)| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_point_at_the_match_inside_the_window() {
        let text = format!("{}needle{}", "a".repeat(200), "b".repeat(200));
        let s = Snippet::at(&text, 200, 206);
        let (a, b) = s.marks[0];
        assert_eq!(&s.text[a..b], "needle");
        assert!(s.text.starts_with('…') && s.text.ends_with('…'));
    }

    #[test]
    fn terms_are_found_case_insensitively_across_punctuation() {
        let re = terms_regex(&["Main.rs".into(), "exact phrase".into()]).unwrap();
        let s = Snippet::around("see src/MAIN.rs and an exact-phrase", Some(&re));
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["MAIN.rs", "exact-phrase"]);
        // Folding applies to the words, and any non-letter, non-number run separates them.
        let re = terms_regex(&["ÉCOLE normale".into(), "src/main.rs:42".into()]).unwrap();
        let s = Snippet::around("à l'école — NORMALE, see SRC\\Main.RS: 42", Some(&re));
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["école — NORMALE", "SRC\\Main.RS: 42"]);
    }

    #[test]
    fn accents_are_marked_as_the_index_folds_them() {
        let re = terms_regex(&["jalapeno".into(), "crème brûlée".into()]).unwrap();
        let s = Snippet::around("Jalapeño and CRÈME-BRULEE, not jalapen", Some(&re));
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["Jalapeño", "CRÈME-BRULEE"]);
    }
}
