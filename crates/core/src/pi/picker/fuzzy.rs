//! pi-tui's `fuzzyMatch` over a [`Hay`]: the text lower-cased unit by unit as the match reads
//! it, so a match that ends early reads (and decompresses) no more of a session's text.

use std::cell::Cell;

use super::{js_space, lower16, Hay};

/// The UTF-16 units of a [`Hay`] lower-cased, produced as they are needed: a fuzzy match
/// usually ends long before a session's text does, so the picker does not lower-case (or
/// read, or decompress past the block it ends in) megabytes per keystroke. `sigma` is set on
/// meeting 'Σ', the one letter whose lower case depends on its neighbours (final sigma), which
/// only a whole-text `toLowerCase` gets right.
struct Lowered<'a, 'h> {
    hay: &'a Hay<'h>,
    /// The part being read (a piece, then a block of the tail) and its text once made.
    part: usize,
    text: Option<&'h str>,
    /// Bytes of the parts before `part`.
    before: usize,
    /// Byte offset in the current part.
    at: usize,
    /// Units of a non-ASCII character's lower case still to give.
    pending: [u16; 6],
    pending_at: usize,
    pending_len: usize,
    sigma: &'a Cell<bool>,
}

fn lowered<'a, 'h>(hay: &'a Hay<'h>, sigma: &'a Cell<bool>) -> Lowered<'a, 'h> {
    Lowered {
        hay,
        part: 0,
        text: None,
        before: 0,
        at: 0,
        pending: [0; 6],
        pending_at: 0,
        pending_len: 0,
        sigma,
    }
}

/// `lowered` from byte offset `byte` of the text (a character boundary): the parts before it
/// are skipped by their lengths, not made.
fn lowered_at<'a, 'h>(hay: &'a Hay<'h>, sigma: &'a Cell<bool>, byte: usize) -> Lowered<'a, 'h> {
    let mut l = lowered(hay, sigma);
    let mut rest = byte;
    let parts = hay.parts();
    while l.part < parts {
        let len = hay.part_len(l.part);
        if rest <= len {
            break;
        }
        rest -= len;
        l.before += len;
        l.part += 1;
    }
    l.at = rest;
    l
}

impl<'h> Lowered<'_, 'h> {
    /// Byte offset in the whole text of the next character to read.
    fn byte(&self) -> usize {
        self.before + self.at
    }

    /// The current part's text (made when first read); `None` past the last part.
    fn current(&mut self) -> Option<&'h str> {
        if self.text.is_none() {
            let hay = self.hay;
            self.text = match hay.pieces.get(self.part) {
                Some(p) => Some(p),
                None if self.part < hay.parts() => {
                    hay.tail.map(|t| t.block(self.part - hay.pieces.len()))
                }
                None => None,
            };
        }
        self.text
    }

    /// Moves to the start of the next part.
    fn next_part(&mut self) {
        self.before += self.hay.part_len(self.part);
        self.part += 1;
        self.at = 0;
        self.text = None;
    }

    /// The next character of the text (its first byte when ASCII), advancing past it.
    fn next_char(&mut self) -> Option<char> {
        loop {
            let part = self.current()?;
            let Some(&b) = part.as_bytes().get(self.at) else {
                self.next_part();
                continue;
            };
            let c = if b.is_ascii() {
                char::from(b)
            } else {
                part[self.at..].chars().next()?
            };
            self.at += c.len_utf8();
            return Some(c);
        }
    }
}

/// Lower-cased UTF-16 units read one by one, which may skip ahead faster.
pub(crate) trait Units: Iterator<Item = u16> {
    /// Skips units up to the next that may be `unit`; how many, and the last of them.
    fn skip_to(&mut self, _unit: u16) -> (usize, Option<u16>) {
        (0, None)
    }
}

impl Units for std::iter::Copied<std::slice::Iter<'_, u16>> {}

impl Units for Lowered<'_, '_> {
    /// Skips the ASCII bytes of the current piece that are not `unit` (ASCII lower-cases
    /// unit for unit; anything else is left to `next`).
    fn skip_to(&mut self, unit: u16) -> (usize, Option<u16>) {
        if self.pending_at < self.pending_len {
            return (0, None);
        }
        let Some(part) = self.current() else {
            return (0, None);
        };
        let rest = part.as_bytes().get(self.at..).unwrap_or_default();
        let n = ascii_run_before(rest, unit);
        if n == 0 {
            return (0, None);
        }
        self.at += n;
        (n, Some(u16::from(rest[n - 1].to_ascii_lowercase())))
    }
}

/// How many bytes at the start of `text` are ASCII and, lower-cased, not `unit`: the first
/// such byte is found with `memchr` (both cases of a letter), then checked to have only ASCII
/// before it (both passes word-at-a-time; this is where the picker spends most of a key).
fn ascii_run_before(text: &[u8], unit: u16) -> usize {
    let found = match u8::try_from(unit) {
        Ok(b) if b.is_ascii() => {
            let (lower, upper) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
            memchr::memchr2(lower, upper, text)
        }
        _ => None,
    };
    let end = found.unwrap_or(text.len());
    let before = &text[..end];
    if before.is_ascii() {
        end
    } else {
        before.iter().position(|b| !b.is_ascii()).unwrap_or(end)
    }
}

impl Iterator for Lowered<'_, '_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if self.pending_at < self.pending_len {
            self.pending_at += 1;
            return Some(self.pending[self.pending_at - 1]);
        }
        let c = self.next_char()?;
        if c.is_ascii() {
            return Some(u16::from(c.to_ascii_lowercase() as u8));
        }
        if c == 'Σ' {
            self.sigma.set(true);
        }
        // A character lowers to at most three, each at most two units.
        self.pending_len = 0;
        for l in c.to_lowercase() {
            self.pending_len += l.encode_utf16(&mut self.pending[self.pending_len..]).len();
        }
        self.pending_at = 1;
        Some(self.pending[0])
    }
}

/// pi-tui's `fuzzyMatch` of `query` against `parts` joined by spaces and lower-cased.
#[cfg(test)]
pub(crate) fn fuzzy_match(query: &str, parts: &[&str]) -> Option<f64> {
    let mut pieces = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            pieces.push(" ");
        }
        pieces.push(p);
    }
    fuzzy_hay(
        query,
        &Hay {
            pieces: &pieces,
            tail: None,
        },
    )
}

/// pi-tui's `fuzzyMatch` of `query` against a [`Hay`] lower-cased.
pub(crate) fn fuzzy_hay(query: &str, hay: &Hay) -> Option<f64> {
    fuzzy_resume(&Word::new(query), hay, None).0
}

/// A typed word ready to match: lower-cased, as UTF-16 units, with pi-tui's retry (letters
/// and digits swapped).
pub struct Word {
    pub lower: String,
    units: Vec<u16>,
    swapped: Option<Vec<u16>>,
}

impl Word {
    pub fn new(query: &str) -> Word {
        let lower = query.to_lowercase();
        let swapped = swap_letters_digits(&lower).map(|s| s.encode_utf16().collect());
        Word {
            units: lower.encode_utf16().collect(),
            lower,
            swapped,
        }
    }

    /// Its length in UTF-16 units.
    pub fn len(&self) -> usize {
        self.units.len()
    }
}

/// Where a word's match in one text ended, kept so that the next key (the same word with more
/// characters) reads on from there instead of from the start: pi-tui's `fuzzyMatch` is greedy
/// (each character is taken at its first occurrence after the previous one's), so the match
/// of `chec` is the start of the match of `check`, with the same score so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resume {
    /// The score so far (without the whole-text bonus, which depends on the word's end).
    score: f64,
    /// Byte offset in the text where reading goes on; [`Resume::FAILED`]: no match (so no
    /// longer word matches either).
    byte: u32,
    /// UTF-16 units read before `byte`, and the last of them.
    read: u32,
    prev: u16,
    /// Index of the last matched unit (`u32::MAX`: none), and the consecutive run's length.
    last: u32,
    consecutive: u16,
}

impl Resume {
    const FAILED: Resume = Resume {
        score: 0.0,
        byte: u32::MAX,
        read: 0,
        prev: 0,
        last: u32::MAX,
        consecutive: 0,
    };

    fn progress(&self) -> Progress {
        Progress {
            score: self.score,
            last: (self.last != u32::MAX).then_some(self.last as usize),
            consecutive: f64::from(self.consecutive),
            read: self.read as usize,
            prev: (self.read > 0).then_some(self.prev),
        }
    }

    fn of(p: &Progress, byte: usize) -> Option<Resume> {
        Some(Resume {
            score: p.score,
            byte: u32::try_from(byte).ok().filter(|&b| b != u32::MAX)?,
            read: u32::try_from(p.read).ok()?,
            prev: p.prev.unwrap_or(0),
            last: p.last.map_or(Some(u32::MAX), |l| u32::try_from(l).ok())?,
            consecutive: u16::try_from(p.consecutive as u64).ok()?,
        })
    }
}

/// `fuzzy_hay` of `word`, continuing from `from` (where `word`'s first `from.1` units' match
/// ended in this text) when given; with where this match ended, for the next key (`None` when
/// it cannot be kept: a 'Σ' was read, or a character's lower case was cut apart).
pub(crate) fn fuzzy_resume(
    word: &Word,
    hay: &Hay,
    from: Option<(&Resume, usize)>,
) -> (Option<f64>, Option<Resume>) {
    if word.units.is_empty() {
        return (Some(0.0), None);
    }
    let sigma = Cell::new(false);
    let (primary, state) = match from {
        Some((r, n)) if n <= word.units.len() && r.byte == u32::MAX => (None, Some(*r)),
        Some((r, n)) if n <= word.units.len() => {
            let text = lowered_at(hay, &sigma, r.byte as usize);
            primary(&word.units, n, r.progress(), text, &sigma)
        }
        _ => primary(
            &word.units,
            0,
            Progress::default(),
            lowered(hay, &sigma),
            &sigma,
        ),
    };
    let retry = |q: &[u16]| fuzzy_once(q, lowered(hay, &sigma)).map(|s| s + 5.0);
    let mut result = primary.or_else(|| word.swapped.as_deref().and_then(retry));
    if sigma.get() {
        // A 'Σ' before the match ended: lower-case the whole text, as JavaScript does.
        let whole: Vec<u16> = lower16(&hay.whole());
        let once = |q: &[u16]| fuzzy_once(q, whole.iter().copied());
        let swapped = word.swapped.as_deref();
        result = once(&word.units).or_else(|| swapped.and_then(once).map(|s| s + 5.0));
    }
    (result, state)
}

/// The first pass of `fuzzy_resume`: `units[done..]` matched on from `p` in `text`; its score
/// and where it ended.
fn primary(
    units: &[u16],
    done: usize,
    mut p: Progress,
    mut text: Lowered,
    sigma: &Cell<bool>,
) -> (Option<f64>, Option<Resume>) {
    let matched = p.advance(&units[done..], &mut text);
    let clean = !sigma.get();
    if !matched {
        return (None, clean.then_some(Resume::FAILED));
    }
    let whole_char = text.pending_at >= text.pending_len;
    let state = (clean && whole_char)
        .then(|| Resume::of(&p, text.byte()))
        .flatten();
    (Some(p.finish(units.len(), &mut text)), state)
}

/// `abc123` -> `123abc` and back (ASCII letters and digits only), as pi-tui retries.
pub(crate) fn swap_letters_digits(q: &str) -> Option<String> {
    let split =
        q.find(|c: char| c.is_ascii_digit() != q.starts_with(|d: char| d.is_ascii_digit()))?;
    let (a, b) = q.split_at(split);
    let letters = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_lowercase());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    ((letters(a) && digits(b)) || (digits(a) && letters(b))).then(|| format!("{b}{a}"))
}

fn is_boundary(unit: u16) -> bool {
    char::from_u32(u32::from(unit)).is_some_and(|c| js_space(c) || "-_./:".contains(c))
}

/// One pass of pi-tui's `fuzzyMatch` over a lower-cased text given unit by unit: the text is
/// read only up to where the query's last character matched (one more unit when the query
/// could equal the whole text).
pub(crate) fn fuzzy_once(q: &[u16], mut text: impl Units) -> Option<f64> {
    if q.is_empty() {
        return Some(0.0);
    }
    let mut p = Progress::default();
    if !p.advance(q, &mut text) {
        return None;
    }
    Some(p.finish(q.len(), &mut text))
}

/// A match under way: the score so far, the last matched unit, the consecutive run, units read
/// and the last of them.
#[derive(Default)]
struct Progress {
    score: f64,
    last: Option<usize>,
    consecutive: f64,
    read: usize,
    prev: Option<u16>,
}

impl Progress {
    /// Matches `q`'s units in turn, reading `text` on; false when one is not found.
    fn advance(&mut self, q: &[u16], text: &mut impl Units) -> bool {
        for &unit in q {
            let (i, before) = loop {
                let (skipped, last) = text.skip_to(unit);
                if skipped > 0 {
                    self.read += skipped;
                    self.prev = last;
                }
                let Some(u) = text.next() else {
                    return false;
                };
                let at = (self.read, self.prev);
                self.read += 1;
                self.prev = Some(u);
                if u == unit {
                    break at;
                }
            };
            // As in pi-tui, a first match at index 0 counts as consecutive (-1 + 1 == 0).
            if self.last.map_or(i == 0, |l| l + 1 == i) {
                self.consecutive += 1.0;
                self.score -= self.consecutive * 5.0;
            } else {
                self.consecutive = 0.0;
                if let Some(l) = self.last {
                    self.score += (i - l - 1) as f64 * 2.0;
                }
            }
            if i == 0 || before.is_some_and(is_boundary) {
                self.score -= 10.0;
            }
            self.score += i as f64 * 0.1;
            self.last = Some(i);
        }
        true
    }

    /// The score once a query of `len` units matched: the whole text equal to the query (it
    /// matched at 0.. and nothing follows) earns the exact-match bonus.
    fn finish(self, len: usize, text: &mut impl Iterator<Item = u16>) -> f64 {
        let mut score = self.score;
        if self.last == Some(len - 1) && text.next().is_none() {
            score -= 100.0;
        }
        score
    }
}

#[cfg(test)]
mod tests {
    use super::ascii_run_before;

    /// The fast skip stops where the byte-by-byte rule stops (at a non-ASCII byte or at the
    /// unit in either case), or earlier, never later.
    #[test]
    fn the_fast_skip_never_passes_a_possible_match() {
        let texts = [
            "",
            "plain text here",
            "Mixed CASE Xylophone",
            "naïve café",
            "日本語 x",
            "zzzzQ",
        ];
        for text in texts {
            for unit in
                ["x", "q", "e", " ", "ï", "語", "1", "Z"].map(|u| u.encode_utf16().next().unwrap())
            {
                let slow = text
                    .bytes()
                    .position(|b| !b.is_ascii() || u16::from(b.to_ascii_lowercase()) == unit)
                    .unwrap_or(text.len());
                let fast = ascii_run_before(text.as_bytes(), unit);
                assert!(fast <= slow, "{text:?} {unit}");
                if !(unit < 128 && (unit as u8).is_ascii_uppercase()) {
                    assert_eq!(fast, slow, "{text:?} {unit}");
                }
            }
        }
    }
}
