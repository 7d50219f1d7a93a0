//! The words a text is listed under in `text_heads` (`migrations/pg/0006_text_heads.sql`):
//! those whose share of bm25 in it, `store::fts5::impact` at the fixed mean length [`AVGDL`],
//! is at least [`MIN_IMPACT`]. A ranked search of one word (`reads::heads`) scores the word's
//! listed texts and bounds every text not listed by [`MIN_IMPACT`]. Both constants are part of
//! the schema: a text listed under other ones would make that bound wrong, so changing either
//! takes a migration that lists every text again.

use std::collections::HashMap;

use super::words::words;
use pidx_core::store::fts5::impact;

/// The mean text length the listed impacts are computed at (a reader's own mean scales the
/// bound when above it, `fts5::Bm25::most`).
pub const AVGDL: f64 = 256.0;

/// The least impact a listed word has in its text: three quarters of the most (2.2).
pub const MIN_IMPACT: f64 = 1.65;

/// The longest word listed (the server's words index keeps none longer; a query of one is
/// refused).
const MAX_WORD: usize = 2047;

/// `text`'s listed words with their counts in it, and its length in tokens.
pub fn heads(text: &str) -> (Vec<(String, i32)>, i32) {
    let mut tf: HashMap<std::borrow::Cow<str>, i32> = HashMap::new();
    let mut len: i64 = 0;
    for w in words(text) {
        len += 1;
        *tf.entry(w).or_default() += 1;
    }
    let mut out: Vec<(String, i32)> = tf
        .into_iter()
        .filter(|(w, n)| w.len() <= MAX_WORD && impact(i64::from(*n), len, AVGDL) >= MIN_IMPACT)
        .map(|(w, n)| (w.into_owned(), n))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    (out, i32::try_from(len).unwrap_or(i32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_past_the_positions_a_tsvector_keeps_is_listed() {
        // `reads::ranked::positions_kept` counts on it: a word more than 256 times (the
        // positions a `tsvector` keeps a word) in a text of at most 16,383 tokens (its largest
        // position) is listed, so a phrase's count of texts reads such a text back.
        let text = format!("{}{}", "the ".repeat(257), "x ".repeat(16_383 - 257));
        let (h, n) = heads(&text);
        assert_eq!(n, 16_383);
        assert_eq!(
            h.iter().map(|h| (h.0.as_str(), h.1)).collect::<Vec<_>>(),
            [("the", 257), ("x", 16_126)]
        );
    }

    #[test]
    fn a_text_is_listed_under_its_dense_words_only() {
        // 3 tokens: each word's impact is high; a long text lists only what fills it.
        let (h, n) = heads("the The fox");
        assert_eq!(n, 3);
        assert_eq!(
            h.iter().map(|h| (h.0.as_str(), h.1)).collect::<Vec<_>>(),
            [("fox", 1), ("the", 2)]
        );
        let long = format!("{} zebra zebra", "lorem ipsum ".repeat(400));
        let (h, n) = heads(&long);
        assert_eq!(n, 802);
        assert_eq!(
            h.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
            ["ipsum", "lorem"]
        );
    }
}
