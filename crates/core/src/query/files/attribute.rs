//! Line attribution, pure: given a file's text now and the successful edits and writes sessions
//! made to it (oldest first), which step last produced each line. The steps are undone from
//! the newest back, on a view of the file that starts as the text now: a step's new text is
//! found in the view, its lines that are not kept from its old text are its own (unless a
//! later step already claimed them), and the view goes back to the old text. A write ends the
//! walk: it produced the whole file, so nothing older shows through. Lines are compared in
//! pi's fuzzy form (`normalizeForFuzzyMatch`: trailing whitespace, quotes, dashes, spaces),
//! so an edit pi applied with that normalisation is still found; docs/files.md states the
//! rule and its limits.

use std::collections::HashMap;

use similar::{capture_diff_slices, Algorithm, DiffOp};

use crate::pi::touches::{lines, Change};

/// How many places a new text may be found before the choice gives up on old-text uniqueness.
const CANDIDATES: usize = 16;

/// Shortest line (trimmed, in bytes) a moved-line fallback may claim: short lines (`}`, `end`)
/// repeat everywhere.
const MOVED_MIN: usize = 8;

/// One line of the view: its text (fuzzy form) and the line of the file now it stands for.
#[derive(Clone)]
struct Line {
    text: String,
    now: Option<usize>,
}

/// One step to undo: its replacements (or a write's content), and pi's `firstChangedLine`
/// (1-based, in the file the step left) when its result said.
#[derive(Clone, Copy)]
pub struct Replay<'a> {
    pub changes: &'a [Change],
    pub line: Option<usize>,
}

/// For each line of `now`, the index in `steps` of the step that last produced it.
pub fn attribute(now: &str, steps: &[Replay]) -> Vec<Option<usize>> {
    attribute_lines(now, steps, None)
}

/// [`attribute`], finished once each of the `wanted` lines (0-based; all when `None`) is
/// claimed: a claim is final (older steps only fill lines still unclaimed), and a commit
/// asks only about the lines it added, which recent steps usually explain.
pub fn attribute_lines(
    now: &str,
    steps: &[Replay],
    wanted: Option<&[usize]>,
) -> Vec<Option<usize>> {
    let mut view: Vec<Line> = lines(now)
        .into_iter()
        .enumerate()
        .map(|(i, l)| Line {
            text: fuzzy(l),
            now: Some(i),
        })
        .collect();
    let mut who = vec![None; view.len()];
    let done = |who: &[Option<usize>]| match wanted {
        Some(w) => w.iter().all(|&n| who.get(n).is_none_or(Option::is_some)),
        None => who.iter().all(Option::is_some),
    };
    for (step, r) in steps.iter().enumerate().rev() {
        if done(&who) {
            break;
        }
        if let [Change { old: None, new }] = r.changes {
            let after: Vec<String> = lines(new).into_iter().map(fuzzy).collect();
            claim_kept(&view, &after, step, &mut who);
            break;
        }
        // The line pi reported is the first change of the call, only sure for a single one.
        let hint = r.line.filter(|_| r.changes.len() == 1);
        for c in r.changes {
            undo(&mut view, c, step, hint, &mut who);
        }
    }
    who
}

/// A write: the view's lines that its content holds (in order) are its own.
fn claim_kept(view: &[Line], written: &[String], step: usize, who: &mut [Option<usize>]) {
    let texts: Vec<&str> = view.iter().map(|l| l.text.as_str()).collect();
    let written: Vec<&str> = written.iter().map(String::as_str).collect();
    let mut left: HashMap<&str, usize> = HashMap::new();
    let mut unmatched = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &texts, &written) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for l in &view[old_index..old_index + len] {
                    claim(who, l.now, step);
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => unmatched.extend(old_index..old_index + old_len),
            DiffOp::Insert {
                new_index, new_len, ..
            } => count(&mut left, &written[new_index..new_index + new_len]),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                unmatched.extend(old_index..old_index + old_len);
                count(&mut left, &written[new_index..new_index + new_len]);
            }
        }
    }
    // Lines moved since the write: a long enough line the order missed, found once in the
    // write and once in the file (a line repeated in either could be anyone's copy).
    let mut in_view: HashMap<&str, usize> = HashMap::new();
    count(&mut in_view, &texts);
    let mut in_write: HashMap<&str, usize> = HashMap::new();
    count(&mut in_write, &written);
    for i in unmatched {
        let text = view[i].text.as_str();
        let once = |m: &HashMap<&str, usize>| m.get(text) == Some(&1);
        if text.trim().len() >= MOVED_MIN
            && once(&in_view)
            && once(&in_write)
            && left.contains_key(text)
        {
            claim(who, view[i].now, step);
        }
    }
}

fn count<'a>(left: &mut HashMap<&'a str, usize>, lines: &[&'a str]) {
    for l in lines {
        *left.entry(l).or_default() += 1;
    }
}

fn claim(who: &mut [Option<usize>], now: Option<usize>, step: usize) {
    if let Some(n) = now {
        who[n].get_or_insert(step);
    }
}

/// Undoes one replacement on the view, claiming the lines it produced.
fn undo(
    view: &mut Vec<Line>,
    c: &Change,
    step: usize,
    hint: Option<usize>,
    who: &mut [Option<usize>],
) {
    let new = fuzzy_text(&c.new);
    let old = fuzzy_text(c.old.as_deref().unwrap_or(""));
    if new.is_empty() {
        undo_deletion(view, &old, hint);
        return;
    }
    // A blank new text is found everywhere: only where pi said it went.
    if new.trim().is_empty() && hint.is_none() {
        return;
    }
    let joined = join(view);
    // A blank new text is a blank line, not the end of any line.
    let blank = new.trim().is_empty();
    let found: Vec<usize> = joined
        .match_indices(new.as_str())
        .map(|(i, _)| i)
        .filter(|&i| !blank || i == 0 || joined.as_bytes()[i - 1] == b'\n')
        .take(CANDIDATES)
        .collect();
    let Some(&at) = choose(&joined, &found, &new, &old, hint) else {
        claim_moved(view, &old, &new, step, who);
        return;
    };
    // The whole lines the match lies on, and those lines with the old text in its place.
    let first = joined[..at].matches('\n').count();
    let line_start = joined[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = at + new.len();
    let last = first + new[..new.len() - 1].matches('\n').count();
    let line_end = joined[end.max(1) - 1..]
        .find('\n')
        .map_or(joined.len(), |i| i + end.max(1) - 1);
    let (prefix, suffix) = (
        &joined[line_start..at],
        &joined[end.min(line_end)..line_end],
    );
    let before_text = format!("{prefix}{old}{suffix}");
    let before: Vec<&str> = if before_text.is_empty() {
        Vec::new()
    } else {
        before_text
            .strip_suffix('\n')
            .unwrap_or(&before_text)
            .split('\n')
            .collect()
    };
    let after: Vec<&str> = view[first..=last].iter().map(|l| l.text.as_str()).collect();
    let mut replaced: Vec<Line> = before
        .iter()
        .map(|t| Line {
            text: t.to_string(),
            now: None,
        })
        .collect();
    for op in capture_diff_slices(Algorithm::Myers, &before, &after) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    replaced[old_index + k].now = view[first + new_index + k].now;
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for l in &view[first + new_index..first + new_index + new_len] {
                    claim(who, l.now, step);
                }
            }
            DiffOp::Delete { .. } => {}
        }
    }
    view.splice(first..=last, replaced);
}

/// A deletion of whole lines, put back where pi said the change was: the view then holds
/// the old lines again for older steps to find (they stand for no line of the file now).
fn undo_deletion(view: &mut Vec<Line>, old: &str, hint: Option<usize>) {
    let Some(line) = hint else { return };
    if !old.ends_with('\n') || line == 0 || line > view.len() + 1 {
        return;
    }
    let back = old
        .strip_suffix('\n')
        .unwrap_or(old)
        .split('\n')
        .map(|t| Line {
            text: t.to_string(),
            now: None,
        });
    view.splice(line - 1..line - 1, back);
}

/// Of the places `new` was found, the nearest to the line pi reported (the view is the file as
/// the step left it, give or take what people changed since), else the first where undoing it
/// leaves `old` once in the file (pi refuses an edit whose old text is not unique), else the
/// first.
fn choose<'a>(
    joined: &str,
    found: &'a [usize],
    new: &str,
    old: &str,
    hint: Option<usize>,
) -> Option<&'a usize> {
    if found.len() < 2 {
        return found.first();
    }
    if let Some(line) = hint {
        let want = line.saturating_sub(1);
        return found.iter().min_by_key(|&&at| {
            let first = joined[..at].matches('\n').count();
            let last = first + new.trim_end_matches('\n').matches('\n').count();
            if want < first {
                first - want
            } else {
                want.saturating_sub(last)
            }
        });
    }
    if old.is_empty() {
        return found.first();
    }
    found
        .iter()
        .find(|&&at| {
            let before = format!("{}{old}{}", &joined[..at], &joined[at + new.len()..]);
            before.matches(old).nth(1).is_none()
        })
        .or(found.first())
}

/// A new text no longer found whole (someone moved or split it later): each line it produced
/// that is long enough and found exactly once among the lines nobody claimed is its own.
fn claim_moved(view: &[Line], old: &str, new: &str, step: usize, who: &mut [Option<usize>]) {
    let old_lines: Vec<&str> = old.lines().collect();
    for line in new.lines() {
        if line.trim().len() < MOVED_MIN || old_lines.contains(&line) {
            continue;
        }
        let mut hits = view.iter().filter(|l| l.text == line);
        if let (Some(hit), None) = (hits.next(), hits.next()) {
            if hit.now.is_some_and(|n| who[n].is_none()) {
                claim(who, hit.now, step);
            }
        }
    }
}

/// The view as text, each line ended by `\n`.
fn join(view: &[Line]) -> String {
    let mut s = String::with_capacity(view.iter().map(|l| l.text.len() + 1).sum());
    for l in view {
        s.push_str(&l.text);
        s.push('\n');
    }
    s
}

/// pi's `normalizeForFuzzyMatch` on a text (line by line, so lines stay lines), CRLF as LF.
fn fuzzy_text(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out: String = text.split('\n').map(fuzzy).collect::<Vec<_>>().join("\n");
    if out.ends_with('\n') || !text.ends_with('\n') {
        return out;
    }
    out.push('\n');
    out
}

/// One line in pi's fuzzy form (without NFKC, which needs Unicode tables pidx does not carry).
pub fn fuzzy(line: &str) -> String {
    line.trim_end()
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Vec<Change> {
        vec![Change {
            old: Some(old.into()),
            new: new.into(),
        }]
    }

    fn write(content: &str) -> Vec<Change> {
        vec![Change {
            old: None,
            new: content.into(),
        }]
    }

    fn attribute(now: &str, steps: &[Vec<Change>]) -> Vec<Option<usize>> {
        let replays: Vec<Replay> = steps
            .iter()
            .map(|c| Replay {
                changes: c,
                line: None,
            })
            .collect();
        super::attribute(now, &replays)
    }

    #[test]
    fn the_line_pi_reported_picks_among_identical_new_texts() {
        let steps = [write("a\nx\nb\nx\n"), edit("b\nx\n", "b\ny\n}\n")];
        let now = "a\nx\n}\nb\ny\n}\n";
        let with = |line| {
            let replays = [
                Replay {
                    changes: &steps[0],
                    line: None,
                },
                Replay {
                    changes: &steps[1],
                    line,
                },
            ];
            super::attribute(now, &replays)
        };
        // Whole "b\ny\n}" is found once; a "}" alone is where the hint says.
        assert_eq!(
            with(Some(5)),
            [Some(0), Some(0), None, Some(0), Some(1), Some(1)]
        );
    }

    #[test]
    fn later_edits_win_and_untouched_lines_stay_unclaimed() {
        let steps = [write("a\nb\nc\n"), edit("b\n", "B\nB2\n"), edit("c", "C")];
        let now = "human\na\nB\nB2\nC\n";
        assert_eq!(
            attribute(now, &steps),
            [None, Some(0), Some(1), Some(1), Some(2)]
        );
    }

    #[test]
    fn identical_lines_elsewhere_go_to_the_place_the_old_text_was_unique() {
        let steps = [write("x {\n}\ny {\n}\n"), edit("y {\n}", "y {\n  z\n}")];
        // Undone at its first match, "x {\n  z\n}" would leave "y {\n}" twice in the view.
        let now = "x {\n}\ny {\n  z\n}\n";
        assert_eq!(
            attribute(now, &steps),
            [Some(0), Some(0), Some(0), Some(1), Some(0)]
        );
    }

    #[test]
    fn whitespace_normalised_edits_are_still_found() {
        // pi matched "b" against "b  " and wrote its fuzzy form.
        let steps = [write("a\nb  \nc\n"), edit("b\nc", "b\nc2")];
        assert_eq!(attribute("a\nb\nc2\n", &steps), [Some(0), Some(0), Some(1)]);
    }

    #[test]
    fn a_moved_block_is_still_found_and_a_split_one_by_its_long_lines() {
        let steps = [
            edit("", "fn long_name_here() {}\n"),
            edit("x\n", "let another_line = 1;\nshort\n"),
        ];
        let now = "short\nlet another_line = 1;\nfn long_name_here() {}\n";
        assert_eq!(attribute(now, &steps), [None, Some(1), Some(0)]);
    }
}
