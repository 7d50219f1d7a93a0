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

/// The tail's first block, in bytes of text; each next block is twice as long, up to
/// [`LARGEST_BLOCK`]. A typed word's match that runs past the head mostly ends a few hundred
/// bytes further: only the block it ends in is read and decompressed, where the whole tail
/// was (decompressing and checking whole tails was half of a slow key's time at 10,000
/// sessions). Small in tests, so several blocks are scored.
const FIRST_BLOCK: usize = if cfg!(test) { 64 } else { 4 << 10 };
const LARGEST_BLOCK: usize = if cfg!(test) { 1 << 10 } else { 256 << 10 };

/// `pieces` cut into blocks (at character boundaries) of [`FIRST_BLOCK`] bytes, then twice as
/// many each time, each compressed as a zstd frame of its own; the frames one after the other
/// and each block's ends.
fn compress_blocks(
    pieces: &[&str],
    zstd: &mut zstd::bulk::Compressor,
) -> std::io::Result<(Vec<u8>, Box<[Block]>)> {
    let mut frames = Vec::new();
    let mut blocks = Vec::new();
    let mut text_end = 0u32;
    let mut block = String::with_capacity(FIRST_BLOCK);
    let mut size = FIRST_BLOCK;
    let mut flush = |block: &mut String, size: &mut usize| -> std::io::Result<()> {
        frames.extend_from_slice(&zstd.compress(block.as_bytes())?);
        text_end += u32::try_from(block.len()).map_err(std::io::Error::other)?;
        let z_end = u32::try_from(frames.len()).map_err(std::io::Error::other)?;
        blocks.push(Block { z_end, text_end });
        block.clear();
        *size = (*size * 2).min(LARGEST_BLOCK);
        Ok(())
    };
    for piece in pieces {
        let mut p = *piece;
        while !p.is_empty() {
            let room = size - block.len();
            if p.len() <= room {
                block.push_str(p);
                break;
            }
            let mut cut = room;
            while !p.is_char_boundary(cut) {
                cut -= 1;
            }
            block.push_str(&p[..cut]);
            p = &p[cut..];
            flush(&mut block, &mut size)?;
        }
    }
    if !block.is_empty() {
        flush(&mut block, &mut size)?;
    }
    Ok((frames, blocks.into_boxed_slice()))
}

/// Where one block of a tail ends: in the compressed frames and in the text.
#[derive(Clone, Copy)]
struct Block {
    z_end: u32,
    text_end: u32,
}

/// A tail: its blocks' frames, stored, and where each block ends.
struct Blocks {
    stored: Stored,
    blocks: Box<[Block]>,
}

impl Blocks {
    /// Block `i`'s range in the frames and its length in bytes of text.
    fn range(&self, i: usize) -> Option<(usize, usize, usize)> {
        let b = self.blocks.get(i)?;
        let (z0, t0) = match i.checked_sub(1).and_then(|j| self.blocks.get(j)) {
            Some(p) => (p.z_end, p.text_end),
            None => (0, 0),
        };
        Some((z0 as usize, b.z_end as usize, (b.text_end - t0) as usize))
    }
}

/// One session's search text, compact.
pub struct Compact {
    head: Box<str>,
    /// The rest, zstd-compressed in blocks.
    tail: Option<Blocks>,
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
        if rest.iter().all(|r| r.is_empty()) {
            return Compact::plain(head, bits);
        }
        let whole = || {
            [head.as_str()]
                .into_iter()
                .chain(rest.iter().copied())
                .collect()
        };
        let stored = compress_blocks(&rest, zstd).and_then(|(frames, blocks)| {
            let frames = frames.into_boxed_slice();
            let stored = match spill {
                Some(spill) => spill.put(frames)?,
                None => Stored::Memory(frames),
            };
            Ok(Blocks { stored, blocks })
        });
        match stored {
            Ok(tail) => Compact {
                head: head.into_boxed_str(),
                tail: Some(tail),
                bits,
            },
            // Not compressible or storable here (over 4 GB): kept whole.
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
        self.head.len()
            + self.tail.as_ref().map_or(0, |t| {
                t.stored.in_memory() + t.blocks.len() * std::mem::size_of::<Block>()
            })
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

    /// `f` of this text as a [`Hay`] whose tail's blocks are each decompressed once, when first
    /// needed.
    fn with_hay<T>(&self, f: impl FnOnce(&Hay) -> T) -> T {
        let pieces = [&*self.head];
        let Some(tail) = &self.tail else {
            return f(&Hay {
                pieces: &pieces,
                tail: None,
            });
        };
        let lazy = Lazy {
            tail,
            texts: (0..tail.blocks.len()).map(|_| OnceCell::new()).collect(),
        };
        f(&Hay {
            pieces: &pieces,
            tail: Some(&lazy as &dyn Tail),
        })
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

/// A compressed tail whose blocks are decompressed on first use.
struct Lazy<'c> {
    tail: &'c Blocks,
    texts: Box<[OnceCell<String>]>,
}

impl Tail for Lazy<'_> {
    fn blocks(&self) -> usize {
        self.texts.len()
    }

    fn block_len(&self, i: usize) -> usize {
        self.tail.range(i).map_or(0, |(_, _, len)| len)
    }

    fn block(&self, i: usize) -> &str {
        let Some(cell) = self.texts.get(i) else {
            return "";
        };
        cell.get_or_init(|| {
            let Some((z0, z1, len)) = self.tail.range(i) else {
                return String::new();
            };
            self.tail
                .stored
                .read(z0, z1)
                .and_then(|z| decompress(&z, len))
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default()
        })
    }
}

thread_local! {
    /// One zstd context a thread, kept: making one for each block (~100 KB, fresh pages) cost
    /// more than decompressing the block.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// `frame` decompressed into `len` bytes.
fn decompress(frame: &[u8], len: usize) -> Option<Vec<u8>> {
    DECOMPRESSOR.with(|d| {
        let mut d = d.try_borrow_mut().ok()?;
        if d.is_none() {
            *d = zstd::bulk::Decompressor::new().ok();
        }
        d.as_mut()?.decompress(frame, len).ok()
    })
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
        // A tail of many blocks, most of them the largest, and a head cut inside a long name
        // (the head never reaches the text).
        let big: String = (0..1_000)
            .map(|i| format!("word{i} ΟΔΟΣ zeta-{} ", i * 7))
            .collect();
        assert!(big.len() > 20 * LARGEST_BLOCK);
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
        let blocks = compact.tail.as_ref().map_or(0, |t| t.blocks.len());
        assert!(blocks > 4 && compact.size() < text.len());
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

    /// A match that ends in the tail's first block makes no other block; one that reads the
    /// whole text (a word the text lacks, in order) makes every block.
    #[test]
    fn a_match_decompresses_only_the_blocks_it_reads() {
        use crate::pi::picker::fuzzy::fuzzy_hay;
        // `b` just past the head (1 KiB), nothing but `d` after it for many blocks
        let text = "a".repeat(1100) + "bc" + &"d".repeat(4000);
        let s = super::super::tests::session(&text);
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let compact = Compact::new(&s, &text, &mut zstd, None);
        let tail = compact.tail.as_ref().unwrap();
        assert!(tail.blocks.len() > 4);
        let made = |word: &str| {
            let lazy = Lazy {
                tail,
                texts: (0..tail.blocks.len()).map(|_| OnceCell::new()).collect(),
            };
            let pieces = [&*compact.head];
            let hay = Hay {
                pieces: &pieces,
                tail: Some(&lazy as &dyn Tail),
            };
            let score = fuzzy_hay(word, &hay);
            let made = lazy.texts.iter().filter(|t| t.get().is_some()).count();
            (score.is_some(), made)
        };
        // Blocks are 64, 128, 256... bytes in tests: `b` is in the first or the second.
        let (found, b) = made("b");
        assert!(found && (1..=2).contains(&b), "{b} blocks made for `b`");
        assert_eq!(made("bcd"), (true, b));
        assert_eq!(made("zz"), (false, tail.blocks.len()));
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
