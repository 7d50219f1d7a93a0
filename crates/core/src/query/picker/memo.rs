//! What the picker keeps between keystrokes over one list of sessions: each typed word's
//! score by session (a word typed before is not matched again while the next one is typed),
//! and where each fuzzy word's match ended in each session's text, so that a key that adds a
//! character to a word reads on from there instead of from the start of every session's text.

use super::compact::{letters, Compact, Prepared};
use super::{parallel, scored_order};
use crate::pi::js::js_trim;
use crate::pi::picker::fuzzy::{Resume, Word};
use crate::pi::picker::{order_at, parse, Parsed, Token};

/// Typed words' scores and match ends by session, for one list of sessions: [`Memo::clear`]
/// it when the list changes.
#[derive(Default)]
pub struct Memo {
    /// A word (`"` first for a phrase) and its score by session index (`None`: not known).
    words: Vec<(String, Vec<Option<Option<f64>>>)>,
    /// Where fuzzy words' matches ended.
    ends: Vec<Ends>,
    tick: u64,
}

/// Words whose scores are remembered at most.
const MEMO_WORDS: usize = 24;
/// Words whose match ends are remembered at most (a list of them per word).
const MEMO_ENDS: usize = 8;

/// Where a fuzzy word's match ended, by session index (`None`: not known).
struct Ends {
    /// The word, lower-cased, and its length in UTF-16 units.
    lower: String,
    units: usize,
    /// When it was last typed (a [`Memo::tick`]).
    used: u64,
    by_session: Vec<Option<Resume>>,
}

impl Memo {
    pub fn clear(&mut self) {
        self.words.clear();
        self.ends.clear();
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

    /// For each fuzzy word: the match ends to read on from (those of its longest remembered
    /// start, itself included), and the list its own ends go to (made when missing, in the
    /// place of the least recently used one that is neither).
    fn ends_slots(&mut self, words: &[Prepared], sessions: usize) -> Vec<Option<(usize, usize)>> {
        self.tick += 1;
        let from: Vec<Option<usize>> = words
            .iter()
            .map(|w| {
                let lower = &w.fuzzy.as_ref()?.lower;
                let starts = self.ends.iter().enumerate();
                let starts = starts.filter(|(_, e)| lower.starts_with(e.lower.as_str()));
                starts.max_by_key(|(_, e)| e.units).map(|(i, _)| i)
            })
            .collect();
        let mut tos: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for (w, start) in words.iter().zip(&from) {
            let to = w
                .fuzzy
                .as_ref()
                .and_then(|f| self.ends_of(f, sessions, &from, &tos));
            if let Some(to) = to {
                self.ends[to].used = self.tick;
                tos.push(to);
            }
            out.push(to.map(|to| (start.unwrap_or(to), to)));
        }
        out
    }

    /// The list of `word`'s match ends, made when missing (see [`Memo::ends_slots`]).
    fn ends_of(
        &mut self,
        word: &Word,
        sessions: usize,
        from: &[Option<usize>],
        tos: &[usize],
    ) -> Option<usize> {
        if let Some(to) = self.ends.iter().position(|e| e.lower == word.lower) {
            return Some(to);
        }
        let new = Ends {
            lower: word.lower.clone(),
            units: word.len(),
            used: self.tick,
            by_session: vec![None; sessions],
        };
        if self.ends.len() < MEMO_ENDS {
            self.ends.push(new);
            return Some(self.ends.len() - 1);
        }
        let busy = |i: &usize| from.contains(&Some(*i)) || tos.contains(i);
        let old = (0..self.ends.len())
            .filter(|i| !busy(i))
            .min_by_key(|&i| self.ends[i].used)?;
        self.ends[old] = new;
        Some(old)
    }

    /// Where word `w`'s start's match ended in session `i`, and that start's length.
    fn start(
        &self,
        slots: &[Option<(usize, usize)>],
        w: usize,
        i: usize,
    ) -> Option<(&Resume, usize)> {
        let (from, _) = slots.get(w).copied().flatten()?;
        let ends = &self.ends[from];
        ends.by_session.get(i)?.as_ref().map(|r| (r, ends.units))
    }
}

/// [`super::rank_compact`] with each word's scores and match ends kept in `memo` (`sessions`:
/// how many sessions the list has; `position`: where each stands in the listing ranked, pi's
/// last tie-break). The same order: a session's score is still its words' scores added up in
/// the order they were typed, each word's as pi-tui computes it.
pub fn rank_memo<'a>(
    query: &str,
    among: impl IntoIterator<Item = usize>,
    sessions: usize,
    modified: impl Fn(usize) -> i64,
    position: impl Fn(usize) -> usize,
    text: impl Fn(usize) -> Option<&'a Compact> + Sync,
    memo: &mut Memo,
) -> Vec<usize> {
    let trimmed = js_trim(query);
    if trimmed.is_empty() {
        return among.into_iter().collect();
    }
    let among: Vec<usize> = among.into_iter().collect();
    let tokens = match parse(trimmed) {
        None => return Vec::new(),
        Some(Parsed::Tokens(tokens)) if tokens.len() <= MAX_WORDS => tokens,
        // A regular expression, or more words than a word mask holds (nobody types that many):
        // scored afresh.
        Some(parsed) => {
            return scored_order(&among, modified, position, |i| {
                text(i).and_then(|t| t.score(&parsed))
            })
        }
    };
    let words: Vec<Prepared> = tokens.iter().map(Prepared::new).collect();
    let slots = memo.slots(&tokens, sessions);
    let ends = memo.ends_slots(&words, sessions);
    let fresh = {
        let memo = &*memo;
        let known = |i: usize, w: usize| memo.words[slots[w]].1.get(i).copied().flatten();
        parallel(&among, |i| {
            let unknown = (0..words.len()).filter(|&w| known(i, w).is_none());
            let todo = unknown.fold(0u64, |mask, w| mask | 1 << w);
            let ended = (0..words.len()).any(|w| known(i, w) == Some(None));
            match text(i) {
                Some(t) if !ended && todo != 0 => {
                    (todo, t.words(&words, todo, |w| memo.start(&ends, w, i)))
                }
                _ => (todo, Vec::new()),
            }
        })
    };
    memo.remember(&among, &fresh, &slots, &ends);
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
    order_at(scored, modified, position)
}

/// What one session's words came to: which words were matched (a bit each), and their scores
/// and ends.
type Fresh = (u64, Vec<(Option<f64>, Option<Resume>)>);

/// Words a query may have for its scores to be remembered (a bit each in [`Fresh`]).
const MAX_WORDS: usize = 64;

impl Memo {
    /// Keeps the scores and match ends just computed for the sessions at `among`.
    fn remember(
        &mut self,
        among: &[usize],
        fresh: &[Fresh],
        slots: &[usize],
        ends: &[Option<(usize, usize)>],
    ) {
        for (&i, (todo, scores)) in among.iter().zip(fresh) {
            let words = (0..MAX_WORDS).filter(|&w| todo >> w & 1 == 1);
            for (w, (sc, end)) in words.zip(scores) {
                if let Some(cell) = self.words[slots[w]].1.get_mut(i) {
                    *cell = Some(*sc);
                }
                if let Some((_, to)) = ends[w] {
                    if let Some(cell) = self.ends[to].by_session.get_mut(i) {
                        *cell = *end;
                    }
                }
            }
        }
    }
}

impl<'t> Prepared<'t> {
    fn new(token: &'t Token) -> Prepared<'t> {
        Prepared {
            token,
            mask: letters(token),
            fuzzy: (!token.phrase).then(|| Word::new(&token.value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::session_info::SessionInfo;

    #[test]
    fn remembered_words_rank_as_the_whole_query() {
        let texts = [
            "borrow checker fights, flaky test",
            "the checker borrowed a book",
            "nothing here at all",
            "ΟΔΟΣ bo rr ow test",
            "Borrow CHECK flaky",
            "İstanbul ab12 \u{212a}elvin ΟΔΟΣ flaky",
        ];
        let mut zstd = zstd::bulk::Compressor::new(1).unwrap();
        let mut spill = Some(super::super::Spill::new().unwrap());
        let sessions: Vec<SessionInfo> = texts
            .iter()
            .map(|t| super::super::tests::session(&t.repeat(60)))
            .collect();
        let compacts: Vec<Compact> = sessions
            .iter()
            .map(|s| {
                Compact::new(
                    s,
                    s.all_messages_text.as_deref().unwrap(),
                    &mut zstd,
                    spill.as_mut(),
                )
            })
            .collect();
        let mut memo = Memo::default();
        let many_words = "t ".repeat(MAX_WORDS) + "fl";
        for query in [
            many_words.as_str(),
            "flaky test borrow checker",
            "bo \"a book\" x",
            "re:che+",
            "οδος t",
            "ab12 12ab istanbul",
            "i̇stan kelvin",
            "flaky οδοσ",
        ] {
            let mut typed = String::new();
            for c in query.chars().chain(" zz".chars()) {
                typed.push(c);
                let got = rank_memo(
                    &typed,
                    0..sessions.len(),
                    sessions.len(),
                    |i| sessions[i].modified_ms,
                    |i| i,
                    |i| compacts.get(i),
                    &mut memo,
                );
                assert_eq!(got, super::super::rank(&sessions, &typed), "{typed:?}");
            }
        }
    }
}
