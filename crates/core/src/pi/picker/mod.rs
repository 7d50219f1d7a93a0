//! pi's session picker rules (docs/pi-format.md §8.1), as pure functions: how long ago a
//! session was active, and the `/resume` filter and order (pi 0.87's `filterAndSortSessions` in
//! its default "threaded" mode: `parseSearchQuery`, `matchSession` with pi-tui's `fuzzyMatch`,
//! then by score, newest first, listing order). Positions and lengths are counted in UTF-16
//! code units, as JavaScript does, so scores (and therefore ties) come out the same.
//! `query::picker` applies them to the index's sessions.
//!
//! The one known difference: `re:` patterns run on Rust's `regex` crate, so JavaScript-only
//! syntax (look-around, back-references) is an invalid pattern here (no results).

pub(crate) mod fuzzy;

use regex::RegexBuilder;

use crate::pi::js;
use crate::pi::js::js_trim;
use fuzzy::fuzzy_hay;

/// pi's picker age: now, Nm, Nh, Nd, Nw, Nmo, Ny.
pub fn age(ms: i64, now_ms: i64) -> String {
    let mins = (now_ms - ms).max(0) / 60_000;
    match mins {
        0 => "now".into(),
        m if m < 60 => format!("{m}m"),
        m if m < 60 * 24 => format!("{}h", m / 60),
        m if m < 60 * 24 * 7 => format!("{}d", m / (60 * 24)),
        m if m < 60 * 24 * 30 => format!("{}w", m / (60 * 24 * 7)),
        m if m < 60 * 24 * 365 => format!("{}mo", m / (60 * 24 * 30)),
        m => format!("{}y", m / (60 * 24 * 365)),
    }
}

/// Matching sessions by score, then newest first, then listing order (`Array#sort` is
/// stable: equal keys keep the listing order).
pub(crate) fn order(scored: Vec<(f64, usize)>, modified: impl Fn(usize) -> i64) -> Vec<usize> {
    order_at(scored, modified, |i| i)
}

/// [`order`] with each session's place in the listing given by `position` (sessions of one
/// project kept among every project's: pi's `list` and `listAll` order ties apart).
pub(crate) fn order_at(
    scored: Vec<(f64, usize)>,
    modified: impl Fn(usize) -> i64,
    position: impl Fn(usize) -> usize,
) -> Vec<usize> {
    let mut keyed: Vec<(f64, i64, usize, usize)> = scored
        .into_iter()
        .map(|(sc, i)| (sc, modified(i), position(i), i))
        .collect();
    // Every key differs (the position is last): an unstable sort gives the same order.
    keyed.sort_unstable_by(|&(a, ma, pa, _), &(b, mb, pb, _)| {
        a.partial_cmp(&b)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(mb.cmp(&ma))
            .then(pa.cmp(&pb))
    });
    keyed.into_iter().map(|(_, _, _, i)| i).collect()
}

/// Why pi's picker would report an error for `query` (an empty or invalid `re:` pattern), if it
/// would; the picker then shows no sessions.
pub fn query_problem(query: &str) -> Option<String> {
    let pattern = js_trim(js_trim(query).strip_prefix("re:")?);
    if pattern.is_empty() {
        return Some("re: needs a regular expression after it".into());
    }
    match RegexBuilder::new(pattern).size_limit(8 << 20).build() {
        Ok(_) => None,
        Err(e) => Some(format!(
            "not a valid regular expression: {}",
            e.to_string().lines().last().unwrap_or("invalid")
        )),
    }
}

/// Whether every session matching `after` also matches `before`, so `after` needs to look
/// only at `before`'s matches: true when `after` extends `before` with fuzzy words (a longer
/// word, or another one). Quotes (phrases) and `re:` patterns do not narrow that way.
pub fn narrows(before: &str, after: &str) -> bool {
    let plain = |q: &str| !q.contains('"') && !js_trim(q).starts_with("re:");
    after.starts_with(before) && plain(before) && plain(after)
}

/// A parsed query (pi's `parseSearchQuery`).
pub(crate) enum Parsed {
    Regex(regex::Regex),
    Tokens(Vec<Token>),
}

pub(crate) struct Token {
    pub(crate) phrase: bool,
    pub(crate) value: String,
}

/// JavaScript's `\s`.
pub(crate) fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// pi's `parseSearchQuery`; `None` where it reports an error (an empty or invalid regex).
pub(crate) fn parse(trimmed: &str) -> Option<Parsed> {
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = js_trim(pattern);
        if pattern.is_empty() {
            return None;
        }
        return RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(8 << 20)
            .build()
            .ok()
            .map(Parsed::Regex);
    }
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut in_quote = false;
    let flush = |buf: &mut String, phrase: bool, tokens: &mut Vec<Token>| {
        let v = js_trim(buf).to_string();
        buf.clear();
        if !v.is_empty() {
            tokens.push(Token { phrase, value: v });
        }
    };
    for c in trimmed.chars() {
        if c == '"' {
            flush(&mut buf, in_quote, &mut tokens);
            in_quote = !in_quote;
            continue;
        }
        if !in_quote && js_space(c) {
            flush(&mut buf, false, &mut tokens);
            continue;
        }
        buf.push(c);
    }
    if in_quote {
        // Unbalanced quotes: plain white-space splitting, quotes kept.
        let tokens = trimmed
            .split(js_space)
            .filter(|t| !t.is_empty())
            .map(|t| Token {
                phrase: false,
                value: t.to_string(),
            })
            .collect();
        return Some(Parsed::Tokens(tokens));
    }
    flush(&mut buf, false, &mut tokens);
    Some(Parsed::Tokens(tokens))
}

/// UTF-16 code units of `s` lower-cased as `String#toLowerCase` does.
pub(crate) fn lower16(s: &str) -> Vec<u16> {
    s.to_lowercase().encode_utf16().collect()
}

/// A session id as JavaScript's string conversion gives it (`undefined`, `null`, ...).
pub(crate) fn js_id(id: Option<&serde_json::Value>) -> String {
    id.map_or("undefined".to_string(), |v| match v {
        serde_json::Value::Null => "null".to_string(),
        other => js::join_string(other),
    })
}

/// What a session is matched against (pi's id, name, messages' text and cwd joined by
/// spaces): `pieces` one after the other, then `tail`, the rest of the text, produced only
/// when a match reads that far.
pub(crate) struct Hay<'a> {
    pub pieces: &'a [&'a str],
    pub tail: Option<&'a dyn Tail>,
}

/// The rest of a [`Hay`]'s text in blocks, each made on first use: a match that ends in the
/// first block never makes the others.
pub(crate) trait Tail {
    /// How many blocks there are.
    fn blocks(&self) -> usize;
    /// Block `i`'s length in bytes, known without making it.
    fn block_len(&self, i: usize) -> usize;
    /// Block `i`'s text (empty past the last, or when it cannot be made).
    fn block(&self, i: usize) -> &str;
}

impl Hay<'_> {
    /// How many parts the text has: its pieces, then its tail's blocks.
    pub(crate) fn parts(&self) -> usize {
        self.pieces.len() + self.tail.map_or(0, |t| t.blocks())
    }

    /// Part `i`'s length in bytes, without making it.
    pub(crate) fn part_len(&self, i: usize) -> usize {
        match self.pieces.get(i) {
            Some(p) => p.len(),
            None => self.tail.map_or(0, |t| t.block_len(i - self.pieces.len())),
        }
    }

    pub(crate) fn whole(&self) -> String {
        let mut text = self.pieces.concat();
        if let Some(tail) = self.tail {
            for i in 0..tail.blocks() {
                text.push_str(tail.block(i));
            }
        }
        text
    }
}

/// `matchSession` over a [`Hay`].
pub(crate) fn score_hay(hay: &Hay, parsed: &Parsed) -> Option<f64> {
    match parsed {
        Parsed::Regex(re) => {
            let text = hay.whole();
            re.find(&text)
                .map(|m| text[..m.start()].encode_utf16().count() as f64 * 0.1)
        }
        Parsed::Tokens(tokens) => {
            let mut total = 0.0;
            let mut normalized: Option<Vec<u16>> = None;
            for t in tokens {
                total += word_score(hay, t, &mut normalized)?;
            }
            Some(total)
        }
    }
}

/// One word's (or phrase's) part of `matchSession`'s score; `normalized` keeps the text
/// normalised for phrases once made.
pub(crate) fn word_score(hay: &Hay, t: &Token, normalized: &mut Option<Vec<u16>>) -> Option<f64> {
    if t.phrase {
        let phrase = normalize(&t.value);
        if phrase.is_empty() {
            return Some(0.0);
        }
        let text = normalized.get_or_insert_with(|| normalize(&hay.whole()));
        Some(index_of(text, &phrase, 0)? as f64 * 0.1)
    } else {
        fuzzy_hay(&t.value, hay)
    }
}

/// pi's `normalizeWhitespaceLower`: lower case, white-space runs as one space, trimmed.
pub(crate) fn normalize(s: &str) -> Vec<u16> {
    let lower = s.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut space = false;
    for c in lower.chars() {
        if js_space(c) {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out.encode_utf16().collect()
}

pub(crate) fn index_of(hay: &[u16], needle: &[u16], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from.min(hay.len()));
    }
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_like_the_picker() {
        let now = 1_000_000_000_000;
        assert_eq!(age(now - 30_000, now), "now");
        assert_eq!(age(now - 5 * 60_000, now), "5m");
        assert_eq!(age(now - 3 * 3_600_000, now), "3h");
        assert_eq!(age(now - 40 * 86_400_000, now), "1mo");
    }
}
