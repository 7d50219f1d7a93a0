//! A session's search text kept small for the picker, which matches every keystroke against
//! every session: pi's joined id, name, messages' text and cwd as its first [`HEAD`] bytes,
//! the rest zstd-compressed (read back only when a match gets past the head), and which
//! lower-cased characters occur anywhere in it, so a word with a character the session lacks
//! is turned down without reading any of its text. Scores are exactly `score`'s.

use std::cell::OnceCell;

use super::{
    js_id, js_trim, order, parallel, parse, score_hay, word_score, Hay, Parsed, Tail, Token,
};
use crate::query::list::SessionInfo;

/// Bytes of the text kept uncompressed: most typed words are matched within them.
pub const HEAD: usize = 1024;

/// One session's search text, compact.
pub struct Compact {
    head: Box<str>,
    /// The rest, zstd-compressed, and its length.
    tail: Option<(Box<[u8]>, u32)>,
    /// Lower-cased UTF-16 units present anywhere, modulo 128.
    bits: u128,
}

impl Compact {
    /// The search text of `s` whose messages' text is `text`; `zstd` compresses its tail.
    pub fn new(s: &SessionInfo, text: &str, zstd: &mut zstd::bulk::Compressor) -> Compact {
        let id = js_id(s.id.as_ref());
        let name = s.name.as_deref().unwrap_or("");
        let whole = [id.as_str(), " ", name, " ", text, " ", s.cwd.as_str()].concat();
        let bits = presence(&whole);
        let mut cut = HEAD.min(whole.len());
        while !whole.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = &whole.as_bytes()[cut..];
        let tail = match (rest.is_empty(), u32::try_from(rest.len())) {
            (false, Ok(len)) => match zstd.compress(rest) {
                Ok(z) => Some((z.into_boxed_slice(), len)),
                // Not compressible here: kept whole.
                Err(_) => return Compact::plain(whole, bits),
            },
            (false, Err(_)) => return Compact::plain(whole, bits),
            (true, _) => None,
        };
        let mut head = whole;
        head.truncate(cut);
        Compact {
            head: head.into_boxed_str(),
            tail,
            bits,
        }
    }

    fn plain(whole: String, bits: u128) -> Compact {
        Compact {
            head: whole.into_boxed_str(),
            tail: None,
            bits,
        }
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        self.head.len() + self.tail.as_ref().map_or(0, |(z, _)| z.len())
    }

    /// pi's `matchSession` score, or `None` when the session does not match.
    pub(super) fn score(&self, parsed: &Parsed) -> Option<f64> {
        if !self.may_match(parsed) {
            return None;
        }
        self.with_hay(|hay| score_hay(hay, parsed))
    }

    /// Each word's part of the score, for the words `todo` says, in order, until one does
    /// not match (its `None` ends the list).
    fn words(&self, words: &[Token], todo: &[bool]) -> Vec<Option<f64>> {
        self.with_hay(|hay| {
            let mut normalized = None;
            let mut out = Vec::new();
            for (t, _) in words.iter().zip(todo).filter(|(_, &todo)| todo) {
                let sc = if self.has_letters(t) {
                    word_score(hay, t, &mut normalized)
                } else {
                    None
                };
                out.push(sc);
                if sc.is_none() {
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
        t.phrase
            || t.value
                .to_lowercase()
                .encode_utf16()
                .all(|u| self.bits & (1u128 << (u % 128)) != 0)
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
                .and_then(|(z, len)| zstd::bulk::decompress(z, *len as usize).ok())
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default()
        })
    }
}

/// Each typed word's scores by session, kept between keystrokes: a word typed before is not
/// matched again while the next one is typed. Only for one list of sessions: [`Memo::clear`]
/// it when the list changes.
#[derive(Default)]
pub struct Memo {
    /// A word (`"` first for a phrase) and its score by session index (`None`: not known).
    words: Vec<(String, Vec<Option<Option<f64>>>)>,
}

/// Words remembered at most.
const MEMO_WORDS: usize = 24;

impl Memo {
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// The slot of each of `tokens`, made when missing (the oldest others forgotten).
    fn slots(&mut self, tokens: &[Token], sessions: usize) -> Vec<usize> {
        let key = |t: &Token| format!("{}{}", if t.phrase { '"' } else { ' ' }, t.value);
        let keys: Vec<String> = tokens.iter().map(key).collect();
        for k in &keys {
            if !self.words.iter().any(|(w, _)| w == k) {
                if self.words.len() >= MEMO_WORDS {
                    if let Some(old) = self.words.iter().position(|(w, _)| !keys.contains(w)) {
                        self.words.remove(old);
                    }
                }
                self.words.push((k.clone(), vec![None; sessions]));
            }
        }
        let slot = |k: &String| self.words.iter().position(|(w, _)| w == k).unwrap_or(0);
        keys.iter().map(slot).collect()
    }
}

/// [`super::rank_compact`] with each word's scores kept in `memo` (`sessions`: how many
/// sessions the list has). The same order: a session's score is still its words' scores
/// added up in the order they were typed.
pub fn rank_memo<'a>(
    query: &str,
    among: impl IntoIterator<Item = usize>,
    sessions: usize,
    modified: impl Fn(usize) -> i64,
    text: impl Fn(usize) -> Option<&'a Compact> + Sync,
    memo: &mut Memo,
) -> Vec<usize> {
    let trimmed = js_trim(query);
    if trimmed.is_empty() {
        return among.into_iter().collect();
    }
    let tokens = match parse(trimmed) {
        None => return Vec::new(),
        Some(Parsed::Tokens(tokens)) => tokens,
        Some(regex) => {
            let among: Vec<usize> = among.into_iter().collect();
            let scored = parallel(&among, |i| text(i).and_then(|t| t.score(&regex)));
            let scored = among.iter().zip(scored);
            let scored = scored.filter_map(|(&i, sc)| sc.map(|sc| (sc, i))).collect();
            return order(scored, modified);
        }
    };
    let slots = memo.slots(&tokens, sessions);
    let among: Vec<usize> = among.into_iter().collect();
    let known = |i: usize, w: usize| memo.words[slots[w]].1.get(i).copied().flatten();
    let fresh = parallel(&among, |i| {
        let todo: Vec<bool> = (0..tokens.len()).map(|w| known(i, w).is_none()).collect();
        let ended = (0..tokens.len()).any(|w| known(i, w) == Some(None));
        match text(i) {
            Some(t) if !ended && todo.contains(&true) => {
                let scores = t.words(&tokens, &todo);
                (todo, scores)
            }
            _ => (todo, Vec::new()),
        }
    });
    for (&i, (todo, scores)) in among.iter().zip(&fresh) {
        let words = (0..tokens.len()).filter(|&w| todo[w]);
        for (w, sc) in words.zip(scores) {
            if let Some(cell) = memo.words[slots[w]].1.get_mut(i) {
                *cell = Some(*sc);
            }
        }
    }
    let mut scored = Vec::new();
    'sessions: for &i in &among {
        let mut total = 0.0;
        for &slot in &slots {
            match memo.words[slot].1.get(i).copied().flatten() {
                Some(Some(sc)) => total += sc,
                _ => continue 'sessions,
            }
        }
        scored.push((total, i));
    }
    order(scored, modified)
}

/// The lower-cased UTF-16 units of `text` (modulo 128) as bits; a capital sigma counts as
/// both of its lower cases (which one depends on its neighbours).
fn presence(text: &str) -> u128 {
    let mut bits = 0u128;
    let mut set = |u: u16| bits |= 1u128 << (u % 128);
    for c in text.chars() {
        if c.is_ascii() {
            set(u16::from(c.to_ascii_lowercase() as u8));
            continue;
        }
        if c == 'Σ' {
            set('ς' as u16);
        }
        let mut buf = [0u16; 2];
        for l in c.to_lowercase() {
            l.encode_utf16(&mut buf).iter().for_each(|&u| set(u));
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_scores_equal_full_scores() {
        let text: String = (0..400)
            .map(|i| format!("word{i} ΟΔΟΣ zeta-{} ", i * 7))
            .collect();
        let mut s = super::super::tests::session(&text);
        s.name = Some("Named Σ".into());
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let compact = Compact::new(&s, &text, &mut zstd);
        assert!(compact.tail.is_some() && compact.size() < text.len());
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
            let parsed = super::super::parse(q).unwrap();
            assert_eq!(
                compact.score(&parsed),
                super::super::score(&s, &parsed),
                "{q:?}"
            );
        }
    }

    #[test]
    fn remembered_words_rank_as_the_whole_query() {
        let texts = [
            "borrow checker fights, flaky test",
            "the checker borrowed a book",
            "nothing here at all",
            "ΟΔΟΣ bo rr ow test",
            "Borrow CHECK flaky",
        ];
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let sessions: Vec<SessionInfo> = texts
            .iter()
            .map(|t| super::super::tests::session(&t.repeat(60)))
            .collect();
        let compacts: Vec<Compact> = sessions
            .iter()
            .map(|s| Compact::new(s, s.all_messages_text.as_deref().unwrap(), &mut zstd))
            .collect();
        let mut memo = Memo::default();
        for query in [
            "flaky test borrow checker",
            "bo \"a book\" x",
            "re:che+",
            "οδος t",
        ] {
            let mut typed = String::new();
            for c in query.chars().chain(" zz".chars()) {
                typed.push(c);
                let got = rank_memo(
                    &typed,
                    0..sessions.len(),
                    sessions.len(),
                    |i| sessions[i].modified_ms,
                    |i| compacts.get(i),
                    &mut memo,
                );
                assert_eq!(got, super::super::rank(&sessions, &typed), "{typed:?}");
            }
        }
    }
}
