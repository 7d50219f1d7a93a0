//! pi-tui's `fuzzyMatch` over a [`Hay`]: the text lower-cased unit by unit as the match reads
//! it, so a match that ends early reads (and decompresses) no more of a session's text.

use std::cell::Cell;

use super::{js_space, lower16, Hay};

/// The UTF-16 units of a [`Hay`] lower-cased, produced as they are needed: a fuzzy match
/// usually ends long before a session's text does, so the picker does not lower-case (or
/// read) megabytes per keystroke. `sigma` is set on meeting 'Σ', the one letter whose lower
/// case depends on its neighbours (final sigma), which only a whole-text `toLowerCase` gets
/// right.
struct Lowered<'a, 'h> {
    hay: &'a Hay<'h>,
    /// The tail, once read.
    tail: Option<&'h str>,
    /// The piece being read (`hay.pieces.len()`: the tail).
    part: usize,
    /// Byte offset in the current piece.
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
        tail: None,
        part: 0,
        at: 0,
        pending: [0; 6],
        pending_at: 0,
        pending_len: 0,
        sigma,
    }
}

impl Lowered<'_, '_> {
    /// The next character of the text (its first byte when ASCII), advancing past it.
    fn next_char(&mut self) -> Option<char> {
        loop {
            let pieces = self.hay.pieces;
            if self.part == pieces.len() && self.tail.is_none() {
                self.tail = Some(self.hay.tail.map_or("", |t| t.text()));
            }
            let part: &str = match pieces.get(self.part) {
                Some(p) => p,
                None if self.part == pieces.len() => self.tail.unwrap_or(""),
                None => return None,
            };
            let Some(&b) = part.as_bytes().get(self.at) else {
                self.part += 1;
                self.at = 0;
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
pub(super) fn fuzzy_match(query: &str, parts: &[&str]) -> Option<f64> {
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
pub(super) fn fuzzy_hay(query: &str, hay: &Hay) -> Option<f64> {
    let q = query.to_lowercase();
    let swapped = swap_letters_digits(&q);
    let sigma = Cell::new(false);
    let once = |q: &str| fuzzy_once(&q.encode_utf16().collect::<Vec<_>>(), lowered(hay, &sigma));
    let mut result = once(&q).or_else(|| swapped.as_deref().and_then(once).map(|s| s + 5.0));
    if sigma.get() {
        // A 'Σ' before the match ended: lower-case the whole text, as JavaScript does.
        let whole: Vec<u16> = lower16(&hay.whole());
        let once =
            |q: &str| fuzzy_once(&q.encode_utf16().collect::<Vec<_>>(), whole.iter().copied());
        result = once(&q).or_else(|| swapped.as_deref().and_then(once).map(|s| s + 5.0));
    }
    result
}

/// `abc123` -> `123abc` and back (ASCII letters and digits only), as pi-tui retries.
pub(super) fn swap_letters_digits(q: &str) -> Option<String> {
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
pub(super) fn fuzzy_once(q: &[u16], mut text: impl Iterator<Item = u16>) -> Option<f64> {
    if q.is_empty() {
        return Some(0.0);
    }
    let mut score = 0.0f64;
    let mut last: Option<usize> = None;
    let mut consecutive = 0.0f64;
    // Units read so far, and the last of them.
    let mut read = 0usize;
    let mut prev: Option<u16> = None;
    for &unit in q {
        let (i, before) = loop {
            let u = text.next()?;
            let at = (read, prev);
            read += 1;
            prev = Some(u);
            if u == unit {
                break at;
            }
        };
        // As in pi-tui, a first match at index 0 counts as consecutive (-1 + 1 == 0).
        if last.map_or(i == 0, |l| l + 1 == i) {
            consecutive += 1.0;
            score -= consecutive * 5.0;
        } else {
            consecutive = 0.0;
            if let Some(l) = last {
                score += (i - l - 1) as f64 * 2.0;
            }
        }
        if i == 0 || before.is_some_and(is_boundary) {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = Some(i);
    }
    // The query is the whole text: it matched at 0.. and nothing follows.
    if last == Some(q.len() - 1) && text.next().is_none() {
        score -= 100.0;
    }
    Some(score)
}
