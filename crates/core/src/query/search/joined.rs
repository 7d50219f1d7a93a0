//! Candidates for literal search from the joints index (`store::joints`): a needle with a `_`
//! between letters or digits (`parse_line`, `SUM_ONLY_MESSAGE`, `self.read_at(`) asks for the
//! texts holding each of its joints, which are rare even when its words are everywhere.
//!
//! Each `_` of a run of letters, digits and `_` in the needle is a joint of the text too, with
//! the same neighbours, except at the needle's ends: a side that reaches the needle's start may
//! be the end of a longer word in the text (every indexed word ending with it is asked for, from
//! the words table), and one that reaches its end may go on (a prefix). A side kept whole in
//! the needle is exact; both are cut to `SIDE` bytes as the index cuts them. A needle that
//! starts with its `_` (`_line`) asks for the right side alone (`_line*`), which the index
//! holds for every `_` followed by a letter or digit (migration 0017).

use rusqlite::Connection;

use crate::error::Result;
use crate::store::joints::{self, SIDE};
use crate::store::words::{self, Lookup};

/// More words ending with the needle's first piece than this, and that joint is left out when
/// the needle has another one (each word is one more term to look up).
const MANY_WORDS: usize = 64;

/// Where a literal needle's candidates come from, as far as joints tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Joined {
    /// An FTS5 expression over `joints` that every text holding the needle matches (beside the
    /// texts of `joints_unknown`).
    Match(String),
    /// No indexed text can hold the needle.
    Nothing,
    /// The joints cannot tell (no usable joint, or the index lacks some).
    Unusable,
}

/// One joint of the needle, as written: its left side (or, when `ends_word`, what ends the
/// text's word) and right side, and whether the text's right side may go on. `alone`: the
/// needle starts with the `_`, and the joint is the right side alone (`_line`).
struct Joint<'n> {
    left: &'n str,
    right: &'n str,
    ends_word: bool,
    prefix: bool,
    alone: bool,
}

/// The joints every text holding `needle` has.
fn needle_joints(needle: &str) -> Vec<Joint<'_>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut at = 0;
    for run in needle.split(|c: char| !ident(c)) {
        let (start, end) = (at, at + run.len());
        at = end + needle[end..].chars().next().map_or(0, char::len_utf8);
        let pieces: Vec<&str> = run.split('_').collect();
        for (i, pair) in pieces.windows(2).enumerate() {
            let starts = i == 0 && start == 0;
            let prefix = i + 2 == pieces.len() && end == needle.len();
            if pair[0].is_empty() && pair[1].is_empty() {
                continue; // a lone `_`
            }
            // A leading `_`: any word, or none, may stand before it in the text.
            let alone = starts && pair[0].is_empty();
            out.push(Joint {
                left: pair[0],
                right: pair[1],
                ends_word: starts && !alone,
                prefix,
                alone,
            });
        }
    }
    out
}

/// The index's token for sides `left`, `right`, each cut as the index cuts it (an exact side
/// longer than `SIDE` is cut to the same bytes in the text); `*` when the text's right side may
/// go on.
fn term(left: &str, right: &str, prefix: bool) -> String {
    let left = &left[left.len().saturating_sub(SIDE)..];
    let right = &right[..right.len().min(SIDE)];
    let star = if prefix { "*" } else { "" };
    format!(
        "\"{}_{}\"{star}",
        left.to_ascii_lowercase(),
        right.to_ascii_lowercase()
    )
}

/// The plan for `needle`.
///
/// # Errors
/// Index errors.
pub fn plan(conn: &Connection, needle: &str) -> Result<Joined> {
    let mut found = needle_joints(needle);
    if found.iter().any(|j| j.alone) && joints::lacks_rights(conn)? {
        found.retain(|j| !j.alone);
    }
    if found.is_empty() || joints::is_stale(conn)? {
        return Ok(Joined::Unusable);
    }
    let mut terms = Vec::new();
    let mut words_joint = None;
    for j in &found {
        if !j.ends_word {
            terms.push(term(j.left, j.right, j.prefix));
            continue;
        }
        let folded = j.left.to_ascii_lowercase();
        match words::ending_with(conn, &folded, super::literal::MAX_TERMS)? {
            Lookup::Words(w) if w.is_empty() => return Ok(Joined::Nothing),
            Lookup::Words(w) => {
                let mut alternatives: Vec<String> =
                    w.iter().map(|w| term(w, j.right, j.prefix)).collect();
                alternatives.sort_unstable();
                alternatives.dedup();
                words_joint = Some(alternatives);
            }
            Lookup::TooMany | Lookup::Unsure => {}
        }
    }
    if let Some(alternatives) = words_joint {
        if terms.is_empty() || alternatives.len() <= MANY_WORDS {
            terms.push(format!("({})", alternatives.join(" OR ")));
        }
    }
    if terms.is_empty() {
        return Ok(Joined::Unusable);
    }
    Ok(Joined::Match(terms.join(" AND ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(needle: &str) -> Vec<String> {
        needle_joints(needle)
            .iter()
            .map(|j| {
                let t = term(j.left, j.right, j.prefix);
                if j.ends_word {
                    format!("...{t}")
                } else {
                    t
                }
            })
            .collect()
    }

    #[test]
    fn a_needles_joints_are_exact_inside_and_open_at_its_ends() {
        assert_eq!(terms("parse_line"), ["...\"parse_line\"*"]);
        assert_eq!(
            terms("SUM_ONLY_MESSAGE"),
            ["...\"sum_only\"", "\"only_message\"*"]
        );
        assert_eq!(terms("self.read_at(f)"), ["\"read_at\""]);
        assert_eq!(terms("x.read_at"), ["\"read_at\"*"]);
        assert_eq!(terms("__init__"), ["\"_init\"", "\"init_\""]);
        assert_eq!(terms("a__b"), ["...\"a_\"", "\"_b\"*"]);
        assert_eq!(terms("(_x"), ["\"_x\"*"]);
        // A leading `_`: the right side alone.
        assert_eq!(terms("_line"), ["\"_line\"*"]);
        assert_eq!(terms("_missing`"), ["\"_missing\""]);
        assert_eq!(terms("__"), Vec::<String>::new());
        assert!(terms("fn main").is_empty());
        // A non-ASCII letter ends a side in the needle as in the text.
        assert_eq!(terms("caf\u{e9}_au"), ["\"_au\"*"]);
    }

    #[test]
    fn long_sides_are_cut_as_the_index_cuts_them() {
        let long = "b".repeat(SIDE + 5);
        let exact = format!("{}_{}", "a".repeat(SIDE + 3), "b".repeat(SIDE));
        assert_eq!(
            terms(&format!(".{}_{long}.", "a".repeat(SIDE + 3))),
            [format!("\"{}_{}\"", "a".repeat(SIDE), "b".repeat(SIDE))]
        );
        assert_eq!(
            terms(&format!(".{}_{long}", "a".repeat(SIDE + 3))),
            [format!("\"{}_{}\"*", "a".repeat(SIDE), "b".repeat(SIDE))]
        );
        assert_eq!(
            terms(&format!(".{exact}.")),
            [format!("\"{}_{}\"", "a".repeat(SIDE), "b".repeat(SIDE))]
        );
    }
}
