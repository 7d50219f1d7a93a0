//! `list --query`: pi's session picker filter and order over the index's sessions (the rules
//! themselves are `pi::picker`'s): (pi 0.87's `filterAndSortSessions` in
//! its default "threaded" mode, with pi-tui's `fuzzyMatch`), so a CLI user sees what `/resume`
//! would show for the same typed text. Positions and lengths are counted in UTF-16 code units,
//! as JavaScript does, so scores (and therefore ties) come out the same.
//!
//! The one known difference: `re:` patterns run on Rust's `regex` crate, so JavaScript-only
//! syntax (look-around, back-references) is an invalid pattern here (no results).

mod compact;
mod memo;
mod spill;
mod typed;

use crate::pi::js::js_trim;
#[cfg(test)]
use crate::pi::picker::fuzzy::{fuzzy_match, fuzzy_once, swap_letters_digits};
use crate::pi::picker::{
    index_of, js_id, normalize, order, order_at, parse, score_hay, Hay, Parsed,
};
pub use crate::pi::picker::{narrows, query_problem};
use crate::query::session_info::SessionInfo;

pub use compact::Compact;
pub use memo::{rank_memo, Memo};
pub use spill::Spill;
pub use typed::{compact_texts, Typed};

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
    scored_order(&among, modified, |i| i, |i| score(i, &parsed))
}

/// The sessions at `among` that `score` matches, scored on every core, in pi's order
/// (`position`: where each stands in the listing).
fn scored_order(
    among: &[usize],
    modified: impl Fn(usize) -> i64,
    position: impl Fn(usize) -> usize,
    score: impl Fn(usize) -> Option<f64> + Sync,
) -> Vec<usize> {
    let scored = parallel(among, score);
    let scored = among
        .iter()
        .zip(scored)
        .filter_map(|(&i, sc)| sc.map(|sc| (sc, i)))
        .collect();
    order_at(scored, modified, position)
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

/// pi's `matchSession`: the score, or `None` when the session does not match.
fn score(s: &SessionInfo, parsed: &Parsed) -> Option<f64> {
    score_text(s, s.all_messages_text.as_deref().unwrap_or(""), parsed)
}

/// `score` with the session's messages' text given apart.
fn score_text(s: &SessionInfo, text: &str, parsed: &Parsed) -> Option<f64> {
    let id = js_id(s.id.as_ref());
    let name = s.picker_name();
    let pieces = [id.as_str(), " ", &name, " ", text, " ", s.cwd.as_str()];
    score_hay(
        &Hay {
            pieces: &pieces,
            tail: None,
        },
        parsed,
    )
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
