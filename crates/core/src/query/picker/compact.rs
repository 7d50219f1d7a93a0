//! A session's search text kept small for the picker, which matches every keystroke against
//! every session: pi's joined id, name, messages' text and cwd as its first [`HEAD`] bytes,
//! the rest zstd-compressed (read back only when a match gets past the head), and which
//! lower-cased characters occur anywhere in it, so a word with a character the session lacks
//! is turned down without reading any of its text. Scores are exactly `score`'s.

use std::cell::OnceCell;

use super::spill::{Spill, Stored};
use crate::pi::picker::fuzzy::{fuzzy_resume, Resume, Word};
use crate::pi::picker::{js_id, score_hay, word_score, Hay, Parsed, Tail, Token};
use crate::query::session_info::SessionInfo;

/// A typed word and what matching it needs: the letters a text must have, and the fuzzy
/// word prepared once (`None` for a phrase).
pub(super) struct Prepared<'t> {
    pub token: &'t Token,
    pub mask: u128,
    pub fuzzy: Option<Word>,
}

/// Bytes of the text kept uncompressed: most typed words are matched within them.
pub const HEAD: usize = 1024;

/// A tail longer than this is compressed from its pieces as a stream instead of joined into
/// one buffer first (a copy of a huge message). Small in tests, so both ways are scored.
const STREAM_ABOVE: usize = if cfg!(test) { 16 << 10 } else { 1 << 20 };

/// `pieces` compressed as one zstd frame, written a piece at a time.
fn stream(pieces: &[&str]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut z = zstd::stream::Encoder::new(Vec::new(), 1)?;
    for p in pieces {
        z.write_all(p.as_bytes())?;
    }
    z.finish()
}

/// One session's search text, compact.
pub struct Compact {
    head: Box<str>,
    /// The rest, zstd-compressed, and its length.
    tail: Option<(Stored, u32)>,
    /// Lower-cased UTF-16 units present anywhere, modulo 128.
    bits: u128,
}

impl Compact {
    /// The search text of `s` whose messages' text is `text`; `zstd` compresses its tail,
    /// kept in `spill` when given (else in memory).
    pub fn new(
        s: &SessionInfo,
        text: &str,
        zstd: &mut zstd::bulk::Compressor,
        spill: Option<&mut Spill>,
    ) -> Compact {
        let id = js_id(s.id.as_ref());
        let name = s.picker_name();
        // pi's joined text, never joined here: a session with a 100 MB message would be held
        // twice over (its text and the joined copy) while it is compacted.
        let pieces = [id.as_str(), " ", &name, " ", text, " ", s.cwd.as_str()];
        let bits = pieces.iter().fold(0, |bits, p| bits | presence(p));
        let mut head = String::with_capacity(HEAD);
        let mut rest: Vec<&str> = Vec::new();
        for p in pieces {
            if !rest.is_empty() {
                rest.push(p);
            } else if head.len() + p.len() > HEAD {
                let mut cut = HEAD - head.len();
                while !p.is_char_boundary(cut) {
                    cut -= 1;
                }
                head.push_str(&p[..cut]);
                rest.push(&p[cut..]);
            } else {
                head.push_str(p);
            }
        }
        let len: usize = rest.iter().map(|r| r.len()).sum();
        if len == 0 {
            return Compact::plain(head, bits);
        }
        let whole = || {
            [head.as_str()]
                .into_iter()
                .chain(rest.iter().copied())
                .collect()
        };
        let Ok(len32) = u32::try_from(len) else {
            return Compact::plain(whole(), bits);
        };
        let compressed = if len > STREAM_ABOVE {
            stream(&rest)
        } else {
            zstd.compress(rest.concat().as_bytes())
        };
        let stored = match (compressed, spill) {
            (Ok(z), Some(spill)) => spill.put(z.into_boxed_slice()),
            (Ok(z), None) => Ok(Stored::Memory(z.into_boxed_slice())),
            (Err(e), _) => Err(e),
        };
        match stored {
            Ok(stored) => Compact {
                head: head.into_boxed_str(),
                tail: Some((stored, len32)),
                bits,
            },
            // Not compressible or storable here: kept whole.
            Err(_) => Compact::plain(whole(), bits),
        }
    }

    fn plain(whole: String, bits: u128) -> Compact {
        Compact {
            head: whole.into_boxed_str(),
            tail: None,
            bits,
        }
    }

    /// Bytes held in memory.
    pub fn size(&self) -> usize {
        self.head.len() + self.tail.as_ref().map_or(0, |(z, _)| z.in_memory())
    }

    /// pi's `matchSession` score, or `None` when the session does not match.
    pub(super) fn score(&self, parsed: &Parsed) -> Option<f64> {
        if !self.may_match(parsed) {
            return None;
        }
        self.with_hay(|hay| score_hay(hay, parsed))
    }

    /// Each word's part of the score, for the words whose bits are set in `todo`, in order,
    /// until one does not match (its `None` ends the list); with where each fuzzy word's match
    /// ended (from where `from(w)` says word `w`'s start ended, when known).
    pub(super) fn words<'r>(
        &self,
        words: &[Prepared],
        todo: u64,
        from: impl Fn(usize) -> Option<(&'r Resume, usize)>,
    ) -> Vec<(Option<f64>, Option<Resume>)> {
        self.with_hay(|hay| {
            let mut normalized = None;
            let mut out = Vec::new();
            let todo = |w: usize| w < 64 && todo >> w & 1 == 1;
            for (w, word) in words.iter().enumerate().filter(|&(w, _)| todo(w)) {
                let got = if self.bits & word.mask != word.mask {
                    (None, None)
                } else if let Some(fuzzy) = &word.fuzzy {
                    fuzzy_resume(fuzzy, hay, from(w))
                } else {
                    (word_score(hay, word.token, &mut normalized), None)
                };
                out.push(got);
                if got.0.is_none() {
                    break;
                }
            }
            out
        })
    }

    /// `f` of this text as a [`Hay`] whose tail is decompressed once, when first needed.
    fn with_hay<T>(&self, f: impl FnOnce(&Hay) -> T) -> T {
        let lazy = Lazy {
            compact: self,
            text: OnceCell::new(),
        };
        let pieces = [&*self.head];
        let hay = Hay {
            pieces: &pieces,
            tail: self.tail.is_some().then_some(&lazy as &dyn Tail),
        };
        f(&hay)
    }

    /// False for a fuzzy word with a character the text does not have (it cannot match).
    fn has_letters(&self, t: &Token) -> bool {
        let mask = letters(t);
        self.bits & mask == mask
    }

    /// False when a fuzzy word has a character the text does not (it cannot match).
    fn may_match(&self, parsed: &Parsed) -> bool {
        let Parsed::Tokens(tokens) = parsed else {
            return true;
        };
        tokens.iter().all(|t| self.has_letters(t))
    }
}

/// A compressed tail, decompressed on first use.
struct Lazy<'c> {
    compact: &'c Compact,
    text: OnceCell<String>,
}

impl Tail for Lazy<'_> {
    fn text(&self) -> &str {
        self.text.get_or_init(|| {
            self.compact
                .tail
                .as_ref()
                .and_then(|(z, len)| zstd::bulk::decompress(&z.read()?, *len as usize).ok())
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default()
        })
    }
}

/// A fuzzy word's lower-cased UTF-16 units (modulo 128) as bits (none for a phrase): a text
/// without one of them cannot match it.
pub(super) fn letters(t: &Token) -> u128 {
    if t.phrase {
        return 0;
    }
    let units = t.value.to_lowercase().encode_utf16().collect::<Vec<_>>();
    units.iter().fold(0, |bits, &u| bits | 1u128 << (u % 128))
}

/// The lower-cased UTF-16 units of `text` (modulo 128) as bits; a capital sigma counts as
/// both of its lower cases (which one depends on its neighbours). ASCII bytes are only marked
/// seen and lower-cased once each at the end (a character at a time, this was 141 of the 516 ms
/// the picker spent compacting 10,000 sessions' text).
fn presence(text: &str) -> u128 {
    let bytes = text.as_bytes();
    let mut seen = [false; 128];
    let mut bits = 0u128;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b.is_ascii() {
            seen[usize::from(b)] = true;
            at += 1;
            continue;
        }
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        at += c.len_utf8();
        bits |= char_units(c);
    }
    (0u8..128)
        .filter(|&b| seen[usize::from(b)])
        .fold(bits, |bits, b| {
            bits | 1u128 << (b.to_ascii_lowercase() % 128)
        })
}

/// The bits of one character's lower cases' UTF-16 units.
fn char_units(c: char) -> u128 {
    let mut bits = 0u128;
    let mut set = |u: u16| bits |= 1u128 << (u % 128);
    if c == 'Σ' {
        set('ς' as u16);
    }
    let mut buf = [0u16; 2];
    for l in c.to_lowercase() {
        l.encode_utf16(&mut buf).iter().for_each(|&u| set(u));
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presence_equals_a_character_at_a_time() {
        let each = |text: &str| {
            text.chars().fold(0u128, |bits, c| {
                let units = if c.is_ascii() {
                    1u128 << (c.to_ascii_lowercase() as u32 % 128)
                } else {
                    char_units(c)
                };
                bits | units
            })
        };
        let every_ascii: String = (0u8..128).map(char::from).collect();
        for text in [
            "",
            "Plain ASCII, UPPER and lower: 42!",
            every_ascii.as_str(),
            "ΟΔΟΣ Σίσυφος İstanbul ǅ ß 𝔘𝔫𝔦 😀 \u{10FFFF}",
            "mixed ascii then ÉCOLE then ascii again Z",
        ] {
            assert_eq!(presence(text), each(text), "{text:?}");
        }
        assert_ne!(presence("A"), presence("b"));
        assert_eq!(presence("A"), presence("a"));
    }

    #[test]
    fn compact_scores_equal_full_scores() {
        let text: String = (0..400)
            .map(|i| format!("word{i} ΟΔΟΣ zeta-{} ", i * 7))
            .collect();
        // A tail compressed a piece at a time (over STREAM_ABOVE), and a head cut inside a
        // long name (the head never reaches the text).
        let big: String = (0..1_000)
            .map(|i| format!("word{i} ΟΔΟΣ zeta-{} ", i * 7))
            .collect();
        assert!(text.len() < STREAM_ABOVE && big.len() > STREAM_ABOVE);
        for (text, name) in [
            (&text, "Named Σ".to_string()),
            (&big, "Named Σ".to_string()),
            (&text, "Σ".repeat(700) + " named"),
        ] {
            compact_scores_equal_full_scores_of(text, name);
        }
    }

    fn compact_scores_equal_full_scores_of(text: &str, name: String) {
        let mut s = super::super::tests::session(text);
        s.name = Some(name);
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let compact = Compact::new(&s, text, &mut zstd, None);
        assert!(compact.tail.is_some() && compact.size() < text.len());
        assert!(compact.head.len() <= HEAD && compact.head.len() > HEAD - 4);
        for q in [
            "word1",
            "zeta 2793",
            "οδος",
            "qqq",
            "app",
            "\"zeta-7 word2\"",
            "re:zeta-27\\d+",
            "word399 zeta",
            "named",
            "u app",
        ] {
            let parsed = crate::pi::picker::parse(q).unwrap();
            assert_eq!(
                compact.score(&parsed),
                super::super::score(&s, &parsed),
                "{q:?}"
            );
        }
    }

    #[test]
    fn matches_read_on_from_where_the_shorter_word_ended_score_as_fresh_ones() {
        use crate::pi::picker::fuzzy::{fuzzy_hay, fuzzy_resume, Word};
        let text: String = (0..300)
            .map(|i| format!("w{i} İx ΟΔΟΣ q{} ", i * 13))
            .collect();
        let s = super::super::tests::session(&text);
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let compact = Compact::new(&s, &text, &mut zstd, None);
        assert!(compact.tail.is_some());
        for word in ["w299q3887", "q3887w", "i̇xοδος", "ab12", "w1q13x", "0199aa"] {
            let mut prefix = String::new();
            let mut before = None;
            for c in word.chars() {
                prefix.push(c);
                let w = Word::new(&prefix);
                let (resumed, end) = compact.with_hay(|hay| {
                    let from = before.as_ref().map(|(r, n)| (r, *n));
                    fuzzy_resume(&w, hay, from)
                });
                let fresh = compact.with_hay(|hay| fuzzy_hay(&prefix, hay));
                assert_eq!(resumed, fresh, "{prefix:?}");
                before = end.map(|r| (r, w.len()));
            }
        }
    }
}
