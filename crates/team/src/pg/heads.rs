//! The words a text is listed under in `text_heads` (`migrations/pg/0006_text_heads.sql`):
//! those whose share of bm25 in it, `store::fts5::impact` at the fixed mean length [`AVGDL`],
//! is at least [`MIN_IMPACT`]. A ranked search of one word (`reads::heads`) scores the word's
//! listed texts and bounds every text not listed by [`MIN_IMPACT`]. Both constants are part of
//! the schema: a text listed under other ones would make that bound wrong, so changing either
//! takes a migration that lists every text again.

use std::borrow::Cow;

use super::words::occurrences;
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
    let (occ, len) = occurrences(text);
    listed(&occ, len)
}

/// [`heads`] of a text's sorted [`occurrences`] (split once for its `tsvector` and its heads)
/// and its length in tokens: each run of one word is its count.
pub fn listed(occ: &[(Cow<'_, str>, u32)], len: usize) -> (Vec<(String, i32)>, i32) {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    for run in occ.chunk_by(|a, b| a.0 == b.0) {
        let (w, n) = (&run[0].0, run.len() as i64);
        if w.len() <= MAX_WORD && impact(n, len, AVGDL) >= MIN_IMPACT {
            out.push((w.to_string(), i32::try_from(n).unwrap_or(i32::MAX)));
        }
    }
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
    fn runs_of_the_sorted_words_count_as_a_tally_of_every_word() {
        // The tally `listed` replaced: every word counted in a map, listed words kept.
        let long = "y".repeat(MAX_WORD + 1);
        let text = format!("Ünïcode unicode {long} the THE the a b a Straße strasse {long} z");
        let mut tally: std::collections::HashMap<String, i64> = Default::default();
        let mut len = 0;
        for w in super::super::words::words(&text) {
            len += 1;
            *tally.entry(w.into_owned()).or_default() += 1;
        }
        let mut want: Vec<(String, i32)> = tally
            .into_iter()
            .filter(|(w, n)| w.len() <= MAX_WORD && impact(*n, len, AVGDL) >= MIN_IMPACT)
            .map(|(w, n)| (w, n as i32))
            .collect();
        want.sort();
        assert_eq!(heads(&text), (want, len as i32));
        assert_eq!(len, 13);
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
