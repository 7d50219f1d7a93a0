//! `list --query`: pi's session picker filter and order (pi 0.87's `filterAndSortSessions` in
//! its default "threaded" mode, with pi-tui's `fuzzyMatch`), so a CLI user sees what `/resume`
//! would show for the same typed text. Positions and lengths are counted in UTF-16 code units,
//! as JavaScript does, so scores (and therefore ties) come out the same.
//!
//! The one known difference: `re:` patterns run on Rust's `regex` crate, so JavaScript-only
//! syntax (look-around, back-references) is an invalid pattern here (no results).

mod compact;
mod fuzzy;
mod memo;
mod spill;

use regex::RegexBuilder;

use crate::pi::js;
use crate::pi::js::js_trim;
use crate::query::list::SessionInfo;

pub use compact::Compact;
use fuzzy::fuzzy_hay;
#[cfg(test)]
use fuzzy::{fuzzy_match, fuzzy_once, swap_letters_digits};
pub use memo::{rank_memo, Memo};
pub use spill::Spill;

/// Filters and orders `sessions` (already in pi's listing order) as pi's picker does.
pub fn filter_and_sort(sessions: Vec<SessionInfo>, query: &str) -> Vec<SessionInfo> {
    let order = rank(&sessions, query);
    let mut slots: Vec<Option<SessionInfo>> = sessions.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// `filter_and_sort` without moving the sessions: the indexes of the matching ones, in pi's
/// order (all of them, as listed, for an empty query). The picker filters its in-memory list
/// with it on every keystroke.
pub fn rank(sessions: &[SessionInfo], query: &str) -> Vec<usize> {
    rank_among(sessions, query, 0..sessions.len())
}

/// `rank` over the sessions at `among` only (in any order): the picker narrows each
/// keystroke's search to what matched the text typed before it (see [`narrows`]).
pub fn rank_among(
    sessions: &[SessionInfo],
    query: &str,
    among: impl IntoIterator<Item = usize>,
) -> Vec<usize> {
    rank_by(
        query,
        among,
        |i| sessions[i].modified_ms,
        |i, parsed| score(&sessions[i], parsed),
    )
}

/// `rank_among` over compact search texts: `text(i)` is session `i`'s (a session without one
/// does not match), `modified(i)` its modification time.
pub fn rank_compact<'a>(
    query: &str,
    among: impl IntoIterator<Item = usize>,
    modified: impl Fn(usize) -> i64,
    text: impl Fn(usize) -> Option<&'a Compact> + Sync,
) -> Vec<usize> {
    rank_by(query, among, modified, |i, parsed| text(i)?.score(parsed))
}

/// `filter_and_sort`'s order with each session's messages' text read by `text` one session at
/// a time and dropped once scored, so memory does not grow with the number of sessions.
///
/// # Errors
/// What `text` returns.
pub fn rank_streamed<E>(
    sessions: &[SessionInfo],
    query: &str,
    mut text: impl FnMut(&SessionInfo) -> Result<String, E>,
) -> Result<Vec<usize>, E> {
    rank_streamed_at(sessions, query, |i| text(&sessions[i]))
}

/// [`rank_streamed`] with each session's text read by its index in `sessions` (the team
/// server's rows: a file id alone does not name one there).
///
/// # Errors
/// What `text` returns.
pub fn rank_streamed_at<E>(
    sessions: &[SessionInfo],
    query: &str,
    mut text: impl FnMut(usize) -> Result<String, E>,
) -> Result<Vec<usize>, E> {
    let trimmed = js_trim(query);
    if trimmed.is_empty() {
        return Ok((0..sessions.len()).collect());
    }
    let Some(parsed) = parse(trimmed) else {
        return Ok(Vec::new());
    };
    let mut scored = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        if let Some(sc) = score_text(s, &text(i)?, &parsed) {
            scored.push((sc, i));
        }
    }
    Ok(order(scored, |i| sessions[i].modified_ms))
}

/// How closely a session holds a query, for choosing one session with nobody to look
/// (`pick --print`): pi's fuzzy words match letters in order, which a long transcript satisfies
/// for almost any query, so its best score alone can be an unrelated session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Closeness {
    /// Only as letters in order (pi's fuzzy match), not as typed.
    Scattered,
    /// Every word (or quoted phrase) appears as typed, not all together.
    EveryWord,
    /// The whole query appears as typed (white space and case aside), or its `re:` matches.
    Phrase,
}

/// [`rank_streamed`] with each match's [`Closeness`]: pi's order, each text read once.
///
/// # Errors
/// What `text` returns.
pub fn rank_closeness_streamed<E>(
    sessions: &[SessionInfo],
    query: &str,
    mut text: impl FnMut(&SessionInfo) -> Result<String, E>,
) -> Result<Vec<(usize, Closeness)>, E> {
    let Some(parsed) = parse(js_trim(query)) else {
        return Ok(Vec::new());
    };
    let mut scored = Vec::new();
    let mut close = vec![Closeness::Scattered; sessions.len()];
    for (i, s) in sessions.iter().enumerate() {
        let text = text(s)?;
        if let Some(sc) = score_text(s, &text, &parsed) {
            scored.push((sc, i));
            close[i] = closeness(s, &text, &parsed);
        }
    }
    let ranked = order(scored, |i| sessions[i].modified_ms);
    Ok(ranked.into_iter().map(|i| (i, close[i])).collect())
}

/// How closely a session that `parsed` matches holds it (its text as [`score_text`] sees it).
fn closeness(s: &SessionInfo, text: &str, parsed: &Parsed) -> Closeness {
    let Parsed::Tokens(tokens) = parsed else {
        return Closeness::Phrase;
    };
    let id = js_id(s.id.as_ref());
    let name = s.name.as_deref().unwrap_or("");
    let hay = normalize(&[id.as_str(), name, text, s.cwd.as_str()].join(" "));
    let words: Vec<Vec<u16>> = tokens.iter().map(|t| normalize(&t.value)).collect();
    let whole = normalize(
        &tokens
            .iter()
            .map(|t| t.value.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    );
    let found = |w: &[u16]| index_of(&hay, w, 0).is_some();
    if found(&whole) {
        Closeness::Phrase
    } else if words.iter().all(|w| found(w)) {
        Closeness::EveryWord
    } else {
        Closeness::Scattered
    }
}

/// pi's filter and order over any store of sessions: `modified(i)` is the session's
/// modification time (the tie-break), `score(i, query)` pi's `matchSession`.
fn rank_by(
    query: &str,
    among: impl IntoIterator<Item = usize>,
    modified: impl Fn(usize) -> i64,
    score: impl Fn(usize, &Parsed) -> Option<f64> + Sync,
) -> Vec<usize> {
    let trimmed = js_trim(query);
    if trimmed.is_empty() {
        return among.into_iter().collect();
    }
    let Some(parsed) = parse(trimmed) else {
        return Vec::new();
    };
    let among: Vec<usize> = among.into_iter().collect();
    scored_order(&among, modified, |i| score(i, &parsed))
}

/// The sessions at `among` that `score` matches, scored on every core, in pi's order.
fn scored_order(
    among: &[usize],
    modified: impl Fn(usize) -> i64,
    score: impl Fn(usize) -> Option<f64> + Sync,
) -> Vec<usize> {
    let scored = parallel(among, score);
    let scored = among
        .iter()
        .zip(scored)
        .filter_map(|(&i, sc)| sc.map(|sc| (sc, i)))
        .collect();
    order(scored, modified)
}

/// `f` of each of `among`, in order, on every core for thousands of them.
fn parallel<T: Send>(among: &[usize], f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let all = |part: &[usize]| part.iter().map(|&i| f(i)).collect::<Vec<T>>();
    if among.len() < 2000 || cores < 2 {
        return all(among);
    }
    let chunk = among.len().div_ceil(cores);
    let (first, rest) = among.split_at(chunk.min(among.len()));
    // The first part here, the others on their own threads.
    std::thread::scope(|scope| {
        let parts: Vec<_> = rest
            .chunks(chunk)
            .map(|part| scope.spawn(|| all(part)))
            .collect();
        let mut out = all(first);
        for p in parts {
            out.extend(p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
}

/// Matching sessions by score, then newest first, then listing order (`Array#sort` is
/// stable: equal keys keep the listing order).
fn order(scored: Vec<(f64, usize)>, modified: impl Fn(usize) -> i64) -> Vec<usize> {
    let mut keyed: Vec<(f64, i64, usize)> = scored
        .into_iter()
        .map(|(sc, i)| (sc, modified(i), i))
        .collect();
    // Every key differs (the index is last): an unstable sort gives the same order.
    keyed.sort_unstable_by(|&(a, ma, ia), &(b, mb, ib)| {
        a.partial_cmp(&b)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(mb.cmp(&ma))
            .then(ia.cmp(&ib))
    });
    keyed.into_iter().map(|(_, _, i)| i).collect()
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
enum Parsed {
    Regex(regex::Regex),
    Tokens(Vec<Token>),
}

struct Token {
    phrase: bool,
    value: String,
}

/// JavaScript's `\s`.
fn js_space(c: char) -> bool {
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
fn parse(trimmed: &str) -> Option<Parsed> {
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
fn lower16(s: &str) -> Vec<u16> {
    s.to_lowercase().encode_utf16().collect()
}

/// pi's `matchSession`: the score, or `None` when the session does not match.
fn score(s: &SessionInfo, parsed: &Parsed) -> Option<f64> {
    score_text(s, s.all_messages_text.as_deref().unwrap_or(""), parsed)
}

/// `score` with the session's messages' text given apart.
fn score_text(s: &SessionInfo, text: &str, parsed: &Parsed) -> Option<f64> {
    let id = js_id(s.id.as_ref());
    let pieces = [
        id.as_str(),
        " ",
        s.name.as_deref().unwrap_or(""),
        " ",
        text,
        " ",
        s.cwd.as_str(),
    ];
    score_hay(
        &Hay {
            pieces: &pieces,
            tail: None,
        },
        parsed,
    )
}

/// A session id as JavaScript's string conversion gives it (`undefined`, `null`, ...).
fn js_id(id: Option<&serde_json::Value>) -> String {
    id.map_or("undefined".to_string(), |v| match v {
        serde_json::Value::Null => "null".to_string(),
        other => js::join_string(other),
    })
}

/// What a session is matched against (pi's id, name, messages' text and cwd joined by
/// spaces): `pieces` one after the other, then `tail`, the rest of the text, produced only
/// when a match reads that far.
struct Hay<'a> {
    pub pieces: &'a [&'a str],
    pub tail: Option<&'a dyn Tail>,
}

/// The rest of a [`Hay`]'s text, made on first use.
trait Tail {
    fn text(&self) -> &str;
}

impl Hay<'_> {
    fn whole(&self) -> String {
        let mut text = self.pieces.concat();
        if let Some(tail) = self.tail {
            text.push_str(tail.text());
        }
        text
    }
}

/// `matchSession` over a [`Hay`].
fn score_hay(hay: &Hay, parsed: &Parsed) -> Option<f64> {
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
fn word_score(hay: &Hay, t: &Token, normalized: &mut Option<Vec<u16>>) -> Option<f64> {
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
fn normalize(s: &str) -> Vec<u16> {
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

fn index_of(hay: &[u16], needle: &[u16], from: usize) -> Option<usize> {
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
    fn fuzzy_scores_as_pi_tui() {
        let t: Vec<u16> = "ab-c".encode_utf16().collect();
        // a at 0: consecutive (pi-tui quirk) -5, boundary -10; b at 1: consecutive -10, +0.1;
        // c at 3: gap +2, boundary -10, +0.3
        let expected = -5.0 - 10.0 - 10.0 + 0.1 + 2.0 - 10.0 + 0.3;
        assert_eq!(
            fuzzy_once(&"abc".encode_utf16().collect::<Vec<_>>(), t.iter().copied()),
            Some(expected)
        );
        assert_eq!(swap_letters_digits("abc123").as_deref(), Some("123abc"));
        assert_eq!(swap_letters_digits("12ab").as_deref(), Some("ab12"));
        assert_eq!(swap_letters_digits("a1b"), None);
    }

    pub(super) fn session(text: &str) -> SessionInfo {
        SessionInfo {
            file_id: 0,
            source: None,
            path: String::new(),
            id: Some(serde_json::Value::from("0199aa")),
            cwd: "/home/u/app".into(),
            name: None,
            parent_session_path: None,
            created_ms: None,
            modified_ms: 0,
            message_count: 1,
            first_message: String::new(),
            all_messages_text: Some(text.into()),
            gateway: None,
        }
    }

    #[test]
    fn narrowing_keystroke_by_keystroke_gives_the_full_ranking() {
        let sessions: Vec<SessionInfo> = [
            "borrow checker fights",
            "the checker borrowed a book",
            "ab12 and 12ab",
            "nothing here",
            "ΟΔΟΣ bo rr ow",
            "Borrow CHECK",
        ]
        .iter()
        .map(|t| session(t))
        .collect();
        for query in ["borrow check", "ab12", "b r w x", "odos", "οδος b"] {
            let mut before: Vec<usize> = (0..sessions.len()).collect();
            let mut typed = String::new();
            for c in query.chars() {
                typed.push(c);
                // In the previous ranking's order, as the picker passes them.
                let narrowed = rank_among(&sessions, &typed, before.clone());
                assert_eq!(narrowed, rank(&sessions, &typed), "{typed:?}");
                before = narrowed;
            }
        }
    }

    #[test]
    fn only_added_fuzzy_words_narrow() {
        assert!(narrows("bor", "borrow"));
        assert!(narrows("borrow", "borrow ch"));
        assert!(narrows("", "x"));
        assert!(!narrows("borrow", "borro"));
        assert!(!narrows("\"a b", "\"a b\""));
        assert!(!narrows("re:a", "re:ab"));
        assert!(!narrows("r", "re:x"));
    }

    #[test]
    fn lazy_lowering_matches_whole_text_lowering() {
        // A final capital sigma lowers to ς, as JavaScript's toLowerCase does.
        assert!(fuzzy_match("οδος", &["ΟΔΟΣ"]).is_some());
        assert!(fuzzy_match("οδοσ", &["ΟΔΟΣ"]).is_none());
        // The whole text equal to the query earns pi-tui's exact-match bonus; a prefix does not.
        let exact = fuzzy_match("ab", &["AB"]).unwrap();
        let prefix = fuzzy_match("ab", &["ABC"]).unwrap();
        assert_eq!(prefix - exact, 100.0);
        // Parts are joined by one space: the space is a word boundary.
        assert_eq!(fuzzy_match("b", &["a", "b"]), Some(-10.0 + 0.2));
    }
}
