//! The server's words: what `push` puts in `entry_text.tsv` and what `pidx --pg URL search`
//! looks up. Split and folded by pidx rather than by PostgreSQL's `to_tsvector`, for two
//! reasons: speed (the server's parser took 23 s of the 51 s first push of 1,000 sessions; a
//! `tsvector` sent in binary costs the server nothing to parse) and agreement with the local
//! index, whose FTS5 `unicode61 remove_diacritics 2` tokenizer splits the same way: words are
//! runs of letters and digits (`main.rs` is `main` and `rs`), lower-cased, accents of Latin
//! letters removed, every character past ASCII taken as that tokenizer takes it
//! ([`super::chars`]).

use std::borrow::Cow;

use postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::chars::{class, Class};
use pidx_core::redact;

/// PostgreSQL's limits: a lexeme's bytes, positions per lexeme, the largest position, and the
/// bytes of a whole `tsvector` (kept under the server's 1 MiB with room for its alignment).
const MAX_LEXEME: usize = 2047;
const MAX_POSITIONS: usize = 256;
const MAX_POSITION: usize = 16383;
const MAX_BYTES: usize = 1_000_000;

/// Whether `c` is part of a word (as the local index's tokenizer takes it).
pub fn word_char(c: char) -> bool {
    class(c) != Class::Separator
}

/// The words of `text`, in order, each lower-cased and without Latin accents.
pub fn words(text: &str) -> Words<'_> {
    Words {
        text,
        at: 0,
        last: (0, 0),
    }
}

pub struct Words<'a> {
    text: &'a str,
    at: usize,
    /// The byte range of the word `next` gave last.
    last: (usize, usize),
}

impl<'a> Iterator for Words<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        loop {
            let bytes = self.text.as_bytes();
            let mut i = self.at;
            while i < bytes.len() {
                if bytes[i] < 0x80 {
                    if bytes[i].is_ascii_alphanumeric() {
                        break;
                    }
                    i += 1;
                } else {
                    let c = self.text[i..].chars().next()?;
                    if word_char(c) {
                        break;
                    }
                    i += c.len_utf8();
                }
            }
            if i >= bytes.len() {
                self.at = bytes.len();
                return None;
            }
            let start = i;
            let mut plain = true;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    if !b.is_ascii_alphanumeric() {
                        break;
                    }
                    plain &= !b.is_ascii_uppercase();
                    i += 1;
                } else {
                    let c = self.text[i..].chars().next()?;
                    if !word_char(c) {
                        break;
                    }
                    plain = false;
                    i += c.len_utf8();
                }
            }
            self.at = i;
            self.last = (start, i);
            let w = &self.text[start..i];
            if plain {
                return Some(Cow::Borrowed(w));
            }
            match fold(w) {
                // Only marks that folding takes away: no word for the local index either (a
                // loop, not a call: a text of a million lone marks is a million of these).
                f if f.is_empty() => continue,
                f => return Some(Cow::Owned(f)),
            }
        }
    }
}

/// The tokens of a body as push sent it: its words, each secret's marker (`[redacted: RULE]`)
/// one empty token that no word of a query equals. The original held the secret's words
/// there, which the server must not keep; with one token in their place a phrase neither
/// spans a secret nor finds the marker's words, as locally. (The text's length is its `ntok`,
/// the original's, not the number of these tokens.)
pub fn shown_tokens(body: &str) -> Vec<Cow<'_, str>> {
    let marks = redact::markers(body);
    let mut out = Vec::new();
    let mut at = 0;
    for (start, end) in marks {
        out.extend(words(&body[at..start]));
        out.push(Cow::Borrowed(""));
        at = end;
    }
    out.extend(words(&body[at..]));
    out
}

/// How often each of `wanted` (ASCII words as [`words`] gives them: lower case) stands as a
/// whole word in `text`, without splitting all of `text`: a word holding only ASCII is found
/// by a case-blind search and kept when no letter or digit touches it; a word holding any
/// other character is folded as [`words`] folds it and compared. The same counts as splitting
/// `text` and comparing every word, several times faster on a long text (a common word's
/// search over the team server reads back hundreds of MB of its texts).
pub struct Counter {
    finder: aho_corasick::AhoCorasick,
    wanted: Vec<String>,
}

impl Counter {
    /// `None` unless every word of `wanted` is ASCII letters and digits (others are counted
    /// by splitting).
    pub fn new(wanted: &[String]) -> Option<Counter> {
        if wanted.is_empty()
            || wanted.iter().any(|w| {
                w.is_empty()
                    || !w
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
            })
        {
            return None;
        }
        let finder = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(wanted)
            .ok()?;
        Some(Counter {
            finder,
            wanted: wanted.to_vec(),
        })
    }

    /// Each wanted word's count in a body as push sent it, in `wanted`'s order: [`count`]
    /// less the words of its secrets' markers (`[redacted: RULE]`), which the local index
    /// never saw.
    ///
    /// [`count`]: Counter::count
    pub fn count_shown(&self, body: &str) -> Vec<i64> {
        let mut counts = self.count(body);
        for (start, end) in redact::markers(body) {
            for (c, inside) in counts.iter_mut().zip(self.count(&body[start..end])) {
                *c -= inside;
            }
        }
        counts
    }

    /// Each wanted word's count in `text`, in `wanted`'s order.
    pub fn count(&self, text: &str) -> Vec<i64> {
        let mut counts = vec![0i64; self.wanted.len()];
        let bytes = text.as_bytes();
        for m in self.finder.find_overlapping_iter(text) {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            if !before.is_some_and(word_char) && !after.is_some_and(word_char) {
                counts[m.pattern().as_usize()] += 1;
            }
        }
        // Words holding a character past ASCII: the only ones the search above cannot see
        // (and never counts: a letter touches its match), each folded.
        let mut i = 0;
        while let Some(off) = bytes[i..].iter().position(|&b| b >= 0x80) {
            let at = i + off;
            let start = text[..at]
                .char_indices()
                .rev()
                .take_while(|(_, c)| word_char(*c))
                .last()
                .map_or(at, |(j, _)| j);
            let end = text[at..]
                .char_indices()
                .find(|(_, c)| !word_char(*c))
                .map_or(text.len(), |(j, _)| at + j);
            if end > at {
                let folded = fold(&text[start..end]);
                if let Some(k) = self.wanted.iter().position(|w| *w == folded) {
                    counts[k] += 1;
                }
                i = end;
            } else {
                // A character past ASCII that is no letter or digit.
                i = at + text[at..].chars().next().map_or(1, char::len_utf8);
            }
        }
        counts
    }
}

fn fold(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if let Class::Folded(f) = class(c) {
            out.push(f);
        }
    }
    out
}

/// A `tsvector` in PostgreSQL's binary format (what `tsvectorrecv` reads: the lexemes sorted
/// byte-wise, each once, with its increasing positions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsVector(Vec<u8>);

/// The words of `text` a `tsvector` can hold, each with its position (1-based, the token's:
/// the `tsvector` caps them as PostgreSQL does, the postings keep them, pg 0021), sorted by
/// word then position; and how many words `text` has (a word too long to hold counts too).
pub fn occurrences(text: &str) -> (Vec<(Cow<'_, str>, u32)>, usize) {
    occurrences_outside(text, &[])
}

/// [`occurrences`] without the words that touch any of `hidden` (byte ranges of `text`, in
/// order, none overlapping). Those still count in the length and take their positions, so the
/// length and every other word's position are the whole text's. Push's words of a text whose
/// secrets it replaces: the local index counts the original, so the server ranks it alike,
/// and holds none of the secret's words (nor the marker's).
pub fn occurrences_outside<'a>(
    text: &'a str,
    hidden: &[(usize, usize)],
) -> (Vec<(Cow<'a, str>, u32)>, usize) {
    let mut n = 0;
    let mut occ = Vec::new();
    let mut next_hidden = hidden.iter().peekable();
    let mut ws = words(text);
    while let Some(w) = ws.next() {
        n += 1;
        let (start, end) = ws.last;
        while next_hidden.next_if(|h| h.1 <= start).is_some() {}
        let touches = next_hidden.peek().is_some_and(|h| h.0 < end);
        if w.len() <= MAX_LEXEME && !touches {
            occ.push((w, u32::try_from(n).unwrap_or(u32::MAX)));
        }
    }
    occ.sort_unstable();
    (occ, n)
}

/// The words so common that a phrase holding one is read from the pairs it makes (pg 0025,
/// "common grams"): `"the borrow"` reads the postings of the term `the borrow`, the texts
/// where `the` is followed by `borrow`, instead of every posting of `the` (a million at
/// 300,000 sessions, where `borrow` is in one text in five). English's commonest function
/// words and the halves of its contractions (`it's` is `it` and `s`), which fill most prose;
/// a word of code, however frequent, is rarely half of a phrase. The list is the server's:
/// pushed grams are of these words, and migration 0025's `pidx_common_words()` names the same
/// (a test compares them); another list would need another migration and pushes again.
pub const COMMON: [&str; 35] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "have", "i", "if",
    "in", "is", "it", "no", "not", "of", "on", "or", "s", "t", "that", "the", "this", "to", "was",
    "we", "will", "with", "you", "your",
];

/// Whether `word` (a folded word) is one of [`COMMON`].
pub fn common(word: &str) -> bool {
    // Every common word is at most five bytes: most words are ruled out by their length alone
    // (the search's string comparisons were 1.5% of pidx's CPU in a first push).
    word.len() <= 5 && COMMON.binary_search(&word).is_ok()
}

/// The term of the pair `a` `b` (folded words, `b` right after `a`) when the server holds
/// one: either is [`COMMON`], and the term fits a lexeme. Words hold no space, so no word is
/// such a term.
pub fn gram(a: &str, b: &str) -> Option<String> {
    ((common(a) || common(b)) && a.len() + 1 + b.len() <= MAX_LEXEME).then(|| format!("{a} {b}"))
}

/// A text's grams ([`gram`]) by the words that make them: the term of `(a, b, n)` is the
/// `a`-th and the `b`-th of the text's distinct words (the runs of its sorted
/// [`occurrences`], as its `tsvector` lists them), at the next `n` of `positions` (the first
/// word's). Numbers, not strings: a push meets a gram about as often as a word (each common
/// word makes up to two), and making a string of each, sorting the strings and hashing them
/// doubled pidx's CPU in a first push (12 -> 23 s for 1,000 sessions).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Grams {
    pub pairs: Vec<(u32, u32, u32)>,
    pub positions: Vec<u32>,
}

impl Grams {
    /// Each gram's words (indices) with its positions.
    pub fn each(&self) -> impl Iterator<Item = ((u32, u32), &[u32])> {
        let mut rest = self.positions.as_slice();
        self.pairs.iter().map(move |&(a, b, n)| {
            let (at, after) = rest.split_at(rest.len().min(n as usize));
            rest = after;
            ((a, b), at)
        })
    }
}

/// The grams of a text's [`occurrences`] (sorted by word then position): each pair of words
/// one right after the other of which [`gram`] makes a term, by pair then position; only
/// pairs of the first `held` distinct words (a cut `tsvector` holds a prefix of them, and the
/// server takes a word's grams away with the word's last text, which it knows by the
/// `tsvector`s).
pub fn grams(occ: &[(Cow<'_, str>, u32)], held: usize) -> Grams {
    // Each distinct word's number, and whether it is common, once; then the words in order.
    let mut words: Vec<(&str, bool)> = Vec::new();
    let mut by_place: Vec<(u32, u32)> = Vec::with_capacity(occ.len());
    for run in occ.chunk_by(|a, b| a.0 == b.0) {
        let j = u32::try_from(words.len()).unwrap_or(u32::MAX);
        words.push((&run[0].0, common(&run[0].0)));
        by_place.extend(run.iter().map(|o| (o.1, j)));
    }
    by_place.sort_unstable();
    let makes = |a: u32, b: u32| {
        let ((wa, ca), (wb, cb)) = (words[a as usize], words[b as usize]);
        (a as usize) < held
            && (b as usize) < held
            && (ca || cb)
            && wa.len() + 1 + wb.len() <= MAX_LEXEME
    };
    let mut found: Vec<(u32, u32, u32)> = (by_place.windows(2))
        .filter(|pair| pair[0].0.checked_add(1) == Some(pair[1].0))
        .filter(|pair| makes(pair[0].1, pair[1].1))
        .map(|pair| (pair[0].1, pair[1].1, pair[0].0))
        .collect();
    found.sort_unstable();
    let mut out = Grams::default();
    for run in found.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        let n = u32::try_from(run.len()).unwrap_or(u32::MAX);
        out.pairs.push((run[0].0, run[0].1, n));
        out.positions.extend(run.iter().map(|g| g.2));
    }
    out
}

#[cfg(test)]
/// A text's grams as terms with their positions, sorted (as the server holds them).
pub(crate) fn gram_terms(occ: &[(Cow<'_, str>, u32)], held: usize) -> Vec<(String, u32)> {
    let mut words: Vec<&str> = occ.iter().map(|o| o.0.as_ref()).collect();
    words.dedup();
    let g = grams(occ, held);
    let mut out: Vec<(String, u32)> = (g.each())
        .flat_map(|((a, b), at)| {
            let term = gram(words[a as usize], words[b as usize]).expect("a gram's term");
            at.iter().map(move |&p| (term.clone(), p))
        })
        .collect();
    out.sort_unstable();
    out
}

impl TsVector {
    /// The words of `text` with their positions. A text too big for one `tsvector` keeps
    /// positions only while they fit, then only lexemes.
    pub fn of(text: &str) -> TsVector {
        TsVector::of_sorted(&occurrences(text).0)
    }

    /// The `tsvector` of [`occurrences`].
    pub fn of_sorted(occ: &[(Cow<'_, str>, u32)]) -> TsVector {
        let mut out = Vec::with_capacity(16 + occ.len() * 4);
        out.extend_from_slice(&0i32.to_be_bytes());
        let mut count = 0i32;
        let mut size = 0usize;
        let mut with_positions = true;
        let mut i = 0;
        while i < occ.len() {
            let lex = &occ[i].0;
            let mut end = i;
            while end < occ.len() && occ[end].0 == *lex {
                end += 1;
            }
            let mut positions: Vec<u16> = occ[i..end]
                .iter()
                .map(|o| o.1.min(MAX_POSITION as u32) as u16)
                .collect();
            positions.dedup();
            positions.truncate(MAX_POSITIONS);
            if with_positions && size + lex.len() + 3 + 2 * positions.len() > MAX_BYTES / 2 {
                with_positions = false;
            }
            if !with_positions {
                positions.clear();
            }
            size += lex.len() + 3 + 2 * positions.len();
            if size > MAX_BYTES {
                break;
            }
            out.extend_from_slice(lex.as_bytes());
            out.push(0);
            out.extend_from_slice(&(positions.len() as u16).to_be_bytes());
            for p in positions {
                out.extend_from_slice(&p.to_be_bytes());
            }
            count += 1;
            i = end;
        }
        out[..4].copy_from_slice(&count.to_be_bytes());
        TsVector(out)
    }

    /// Its lexemes, each once, in its order: what `tsvector_to_array` gives on the server, and
    /// what `word_texts` counts (pg 0019).
    pub fn lexemes(&self) -> impl Iterator<Item = &str> {
        let bytes = &self.0;
        let count = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let mut at = 4;
        (0..count).map_while(move |_| {
            let len = bytes[at..].iter().position(|&b| b == 0)?;
            let lex = std::str::from_utf8(&bytes[at..at + len]).ok()?;
            let npos = u16::from_be_bytes([bytes[at + len + 1], bytes[at + len + 2]]);
            at += len + 3 + 2 * usize::from(npos);
            Some(lex)
        })
    }
}

impl ToSql for TsVector {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::TS_VECTOR
    }

    to_sql_checked!();
}

/// One `tsquery` operand: the lexeme quoted (words hold only letters and digits; quotes and
/// backslashes are escaped all the same).
pub fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsquery` of `text`'s words one after the other (`'a' <-> 'b'`), the last a prefix when
/// `prefix`; `None` when `text` has no word.
pub fn phrase(text: &str, prefix: bool) -> Option<String> {
    let lexemes: Vec<String> = words(text).map(|w| lexeme(&w)).collect();
    let mut out = lexemes.join(" <-> ");
    if out.is_empty() {
        return None;
    }
    if prefix {
        out.push_str(":*");
    }
    Some(format!("({out})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsvector_s_lexemes_are_its_words_each_once() {
        let v = TsVector::of("Deploy the deploy script; the script ran");
        assert_eq!(
            v.lexemes().collect::<Vec<_>>(),
            ["deploy", "ran", "script", "the"]
        );
        assert_eq!(TsVector::of("").lexemes().count(), 0);
        // Past the positions' half of the size, lexemes come without positions; past the
        // size, none: the lexemes are what the value holds, not every word of the text.
        let big: String = (0..120_000).map(|i| format!("w{i} ")).collect();
        let v = TsVector::of(&big);
        let n = v.lexemes().count();
        assert!(n > 1000 && n < 120_000, "{n}");
        assert!(v.lexemes().all(|l| l.starts_with('w')));
    }

    fn all(s: &str) -> Vec<String> {
        words(s).map(Cow::into_owned).collect()
    }

    #[test]
    fn words_are_folded_runs_of_letters_and_digits() {
        assert_eq!(all("Open main.rs:42"), ["open", "main", "rs", "42"]);
        assert_eq!(
            all("Jalapeño ÉCOLE über—Łódź"),
            ["jalapeno", "ecole", "uber", "łodz"]
        );
        assert_eq!(all("  --> "), Vec::<String>::new());
        assert_eq!(all("日本語 テキスト"), ["日本語", "テキスト"]);
    }

    #[test]
    fn lone_marks_make_no_word_however_many() {
        let text = format!("{}x", " \u{301}".repeat(500_000));
        assert_eq!(all(&text), ["x"]);
    }

    #[test]
    fn hidden_words_keep_their_length_and_positions_but_not_their_place() {
        let text = "token=AbC9x-Q7 then the key sk_live_9 end";
        let at = |s: &str| text.find(s).unwrap();
        // The first range cuts into its last word; the second holds two words.
        let hidden = [(at("AbC9x"), at("-Q7") + 2), (at("sk_live"), at(" end"))];
        let (occ, n) = occurrences_outside(text, &hidden);
        let (whole, whole_n) = occurrences(text);
        assert_eq!(n, whole_n);
        let held: Vec<(&str, u32)> = occ.iter().map(|(w, p)| (w.as_ref(), *p)).collect();
        assert_eq!(
            held,
            [
                ("end", 10),
                ("key", 6),
                ("the", 5),
                ("then", 4),
                ("token", 1)
            ]
        );
        assert!(whole.iter().any(|(w, _)| w == "abc9x"));
        assert_eq!(occurrences_outside(text, &[]), (whole, whole_n));
    }

    #[test]
    fn a_marker_is_one_token_matching_no_word_and_counts_no_word() {
        let body = "rotate [redacted: github-token] before the token [redacted: jwt] end";
        assert_eq!(
            shown_tokens(body),
            ["rotate", "", "before", "the", "token", "", "end"]
        );
        let wanted: Vec<String> = ["token", "redacted", "jwt", "end"]
            .map(String::from)
            .to_vec();
        let c = Counter::new(&wanted).unwrap();
        assert_eq!(c.count(body), [2, 2, 1, 1]);
        assert_eq!(c.count_shown(body), [1, 0, 0, 1]);
        // Not a marker: no such rule.
        assert_eq!(
            all("[redacted: nothing]"),
            shown_tokens("[redacted: nothing]")
        );
    }

    #[test]
    fn the_counter_counts_as_splitting_every_word() {
        let wanted: Vec<String> = ["error", "k", "strasse", "e2e"].map(String::from).to_vec();
        let c = Counter::new(&wanted).unwrap();
        for text in [
            "error ERROR Error errors terror error_code error.rs",
            "Érror érror errör error\u{e9} erroré é error",
            "\u{212a} K k KK k\u{301}",
            "Straße STRASSE strasse straße-strasse",
            "e2e E2E e2eé 2e2e e2e2",
            "— error — 🙂error🙂 «error» ñerror errorñ",
            "",
            "üüü",
        ] {
            let mut want = vec![0i64; wanted.len()];
            for w in words(text) {
                if let Some(k) = wanted.iter().position(|x| *x == w) {
                    want[k] += 1;
                }
            }
            assert_eq!(c.count(text), want, "in {text:?}");
        }
        assert!(Counter::new(&["jalapeño".to_string()]).is_none());
        assert!(Counter::new(&["Error".to_string()]).is_none());
    }

    #[test]
    fn a_tsvector_has_sorted_unique_lexemes_with_positions() {
        let v = TsVector::of("b a b");
        let mut want = 2i32.to_be_bytes().to_vec();
        want.extend_from_slice(b"a\0\x00\x01\x00\x02");
        want.extend_from_slice(b"b\0\x00\x02\x00\x01\x00\x03");
        assert_eq!(v.0, want);
    }

    #[test]
    fn a_huge_text_still_makes_a_valid_tsvector() {
        let text: String = (0..300_000).map(|i| format!("w{i} same ")).collect();
        let v = TsVector::of(&text);
        assert!(v.0.len() <= MAX_BYTES + 4, "{}", v.0.len());
    }

    /// Push keeps only the grams of words a cut `tsvector` holds, and tells it is cut by its
    /// last lexeme (`push::local`): that holds only while it keeps a prefix of the sorted words.
    #[test]
    fn a_cut_tsvector_holds_the_first_sorted_words_and_ends_before_the_texts_last() {
        for (text, cut) in [
            (
                (0..300_000)
                    .map(|i| format!("w{i} same "))
                    .collect::<String>(),
                true,
            ),
            ("the borrow of the checker".to_string(), false),
        ] {
            let occ = occurrences(&text).0;
            let mut all: Vec<&str> = occ.iter().map(|o| o.0.as_ref()).collect();
            all.dedup();
            let v = TsVector::of_sorted(&occ);
            let held: Vec<&str> = v.lexemes().collect();
            assert_eq!(held, all[..held.len()]);
            assert_eq!(held.len() < all.len(), cut);
            assert_eq!(held.last() != all.last(), cut);
        }
    }

    #[test]
    fn phrases_quote_each_word() {
        assert_eq!(phrase("Main.rs", false).unwrap(), "('main' <-> 'rs')");
        assert_eq!(phrase("tok", true).unwrap(), "('tok':*)");
        assert_eq!(phrase("->", false), None);
    }
}

#[cfg(test)]
mod against_fts5 {
    use super::super::chars::LocalTokens;
    use super::*;

    /// Texts of characters from everywhere (ASCII, Latin with accents, combining marks, CJK,
    /// emoji, private use, unassigned, every plane) split as the local index splits them: the
    /// table of `chars` is asked one character at a time, so this checks that no character's
    /// class depends on its neighbours, and the splitting, folding and counting built on it.
    #[test]
    fn words_are_the_local_index_words_for_text_from_every_plane() {
        let local = LocalTokens::new().unwrap();
        let pools: [&[(u32, u32)]; 4] = [
            &[(0x20, 0x7e)],
            &[
                (0xa0, 0x24f),
                (0x300, 0x36f),
                (0x1e00, 0x1eff),
                (0x2000, 0x206f),
            ],
            &[
                (0x370, 0x52f),
                (0x900, 0xdff),
                (0x3000, 0x30ff),
                (0x4e00, 0x4eff),
                (0xe000, 0xe0ff),
                (0xff00, 0xffef),
            ],
            &[(0x1_0000, 0x10_ffff)],
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut checked = 0;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..1 + next(40) {
                let pool = pools[next(4) as usize];
                let (lo, hi) = pool[next(pool.len() as u64) as usize];
                if let Some(c) = char::from_u32(lo + next(u64::from(hi - lo + 1)) as u32) {
                    text.push(c);
                }
                if next(5) == 0 {
                    text.push(' ');
                }
            }
            let ours: Vec<String> = words(&text).map(Cow::into_owned).collect();
            assert_eq!(ours, local.of(&text).unwrap(), "{text:?}");
            let (_, n) = occurrences(&text);
            assert_eq!(n, ours.len());
            let wanted: Vec<String> = ours.iter().take(3).cloned().collect();
            if let Some(counter) = Counter::new(&wanted) {
                let by_split: Vec<i64> = wanted
                    .iter()
                    .map(|w| ours.iter().filter(|o| *o == w).count() as i64)
                    .collect();
                assert_eq!(counter.count(&text), by_split, "{text:?}");
            }
            checked += ours.len();
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn the_common_words_are_sorted_folded_words() {
        assert!(
            COMMON.windows(2).all(|w| w[0] < w[1]) && COMMON.iter().all(|w| w.len() <= 5),
            "binary search needs order, and `common` rules longer words out by their length"
        );
        for w in COMMON {
            assert_eq!(words(w).collect::<Vec<_>>(), [w]);
            assert!(common(w));
        }
        assert!(!common("borrow") && !common("th") && !common(""));
        // The server's list (migration 0025), which its trigger takes a gone word's grams by.
        let sql = include_str!("../../../../migrations/pg/0025_common_grams.sql");
        let list = sql.split("ARRAY[").nth(1).and_then(|s| s.split(']').next());
        let server: Vec<&str> = (list.unwrap().split(','))
            .map(|w| w.trim().trim_matches('\''))
            .collect();
        assert_eq!(server, COMMON);
    }

    #[test]
    fn grams_are_the_adjacent_pairs_with_a_common_word() {
        let text = "The borrow of THE checker; parse line, it's done";
        let got = super::gram_terms(&occurrences(text).0, usize::MAX);
        let want: Vec<(String, u32)> = [
            ("borrow of", 2),
            ("it s", 8),
            ("line it", 7),
            ("of the", 3),
            ("s done", 9),
            ("the borrow", 1),
            ("the checker", 4),
        ]
        .iter()
        .map(|(g, at)| (g.to_string(), *at))
        .collect();
        assert_eq!(got, want);
        // A hidden word is no half of a pair (`THE checker` hidden: `of` and `parse` were
        // next to it).
        let at = text.find("checker").unwrap();
        let (occ, n) = occurrences_outside(text, &[(at - 4, at + 7)]);
        assert_eq!(n, 10);
        let got: Vec<String> = super::gram_terms(&occ, usize::MAX)
            .into_iter()
            .map(|g| g.0)
            .collect();
        assert_eq!(
            got,
            ["borrow of", "it s", "line it", "s done", "the borrow"]
        );
        // Of a cut `tsvector` (its first `held` words), only the pairs of words it holds:
        // `borrow`, `done`, `it` and `line` of the sorted `borrow`, `done`, `it`, `line`, `of`,
        // `parse`, `s`, `the`.
        let got: Vec<String> = super::gram_terms(&occ, 4)
            .into_iter()
            .map(|g| g.0)
            .collect();
        assert_eq!(got, ["line it"]);
        // A pair too long for a lexeme is no term, on push and on search alike.
        let long = "x".repeat(MAX_LEXEME - 4);
        assert!(gram("the", &long).is_some());
        assert!(gram("the", &format!("{long}x")).is_none());
        assert!(gram("parse", "line").is_none());
    }
}
