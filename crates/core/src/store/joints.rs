//! The `joints` index (`migrations/0016_joints.sql`): for literal search of identifiers made of
//! common words (`parse_line`, `SUM_ONLY_MESSAGE`). The words index splits them at `_`, so
//! their candidates were every text with the words in a row, `"parse line"*`: thousands of
//! texts, each read back from its JSONL line. Here every `_` of a text is indexed with the
//! ASCII letters and digits on each side of it, as one token: `parse_line(x)` gives
//! `parse_line`, `a__b` gives `a_` and `_b`. A needle's joints are rare even when its words
//! are not. A `_` with letters or digits on both sides gives its right side alone too
//! (`parse_line` also gives `_line`), for needles that start with the `_` (migration 0017).
//!
//! Each side keeps at most [`SIDE`] bytes next to the `_` (a joint's size is bounded whatever
//! the text). A text's joints are indexed once each, without positions (`detail = none`). A
//! text of [`HUGE_TEXT`] or more, or whose joints would pass [`MAX_BODY`], is listed in
//! `joints_unknown` instead, and a literal search that uses joints reads it back as a
//! candidate. An index from before this table marks it stale (`joints_stale`) until it is
//! rebuilt; searches then do without it.

use rusqlite::Connection;

use crate::pi::huge::HUGE_TEXT;

/// Bytes of letters and digits kept on each side of a `_`.
pub const SIDE: usize = 32;

/// More joints than this (bytes of the indexed body) and the text is listed as unknown.
pub const MAX_BODY: usize = 4 << 20;

/// What the joints index holds for one text.
#[derive(Debug, PartialEq)]
pub enum Joints {
    /// No `_` next to a letter or digit.
    None,
    /// The text's joints, lowercased, each once, separated by spaces.
    Body(String),
    /// Too big to index: searches read the text back instead.
    Unknown,
}

/// The joints of `text`.
pub fn of(text: &str) -> Joints {
    if text.len() >= HUGE_TEXT {
        return Joints::Unknown;
    }
    let b = text.as_bytes();
    let mut found: Vec<&[u8]> = Vec::new();
    for at in memchr::memchr_iter(b'_', b) {
        let mut start = at;
        while start > 0 && at - start < SIDE && b[start - 1].is_ascii_alphanumeric() {
            start -= 1;
        }
        let mut end = at + 1;
        while end < b.len() && end - at - 1 < SIDE && b[end].is_ascii_alphanumeric() {
            end += 1;
        }
        if end - start > 1 {
            found.push(&b[start..end]);
        }
        // The right side alone too, for needles that start with the `_` (`_line`).
        if start < at && end > at + 1 {
            found.push(&b[at..end]);
        }
    }
    if found.is_empty() {
        return Joints::None;
    }
    // Once each, case aside (the index folds case).
    found.sort_unstable_by(|x, y| {
        x.iter()
            .map(u8::to_ascii_lowercase)
            .cmp(y.iter().map(u8::to_ascii_lowercase))
    });
    found.dedup_by(|x, y| x.eq_ignore_ascii_case(y));
    let mut body = String::new();
    for joint in found {
        if body.len() + joint.len() >= MAX_BODY {
            return Joints::Unknown;
        }
        if !body.is_empty() {
            body.push(' ');
        }
        body.extend(joint.iter().map(|c| char::from(c.to_ascii_lowercase())));
    }
    Joints::Body(body)
}

/// Whether the index may lack the right sides alone (`_line` of `parse_line`) of indexed texts
/// (they were indexed before migration 0017).
///
/// # Errors
/// SQLite errors.
pub fn lacks_rights(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM joint_rights_stale")?
        .exists([])
}

/// Whether the index may lack joints of indexed texts (it was built before the table).
///
/// # Errors
/// SQLite errors.
pub fn is_stale(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM joints_stale")?
        .exists([])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> String {
        match of(text) {
            Joints::Body(b) => b,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_underscore_gives_its_neighbours_once() {
        assert_eq!(
            body("call parse_line(x), then Parse_Line; a__b _c d_ _"),
            "_b _c _line a_ d_ parse_line"
        );
        assert_eq!(of("no joints here, _ alone"), Joints::None);
        // Non-ASCII letters end a side, as punctuation does.
        assert_eq!(body("caf\u{e9}_au x\u{e9}_"), "_au");
    }

    #[test]
    fn each_side_keeps_at_most_side_bytes() {
        let long = "a".repeat(40);
        let text = format!("{long}_{long}");
        let side = "a".repeat(SIDE);
        assert_eq!(body(&text), format!("_{side} {side}_{side}"));
    }

    #[test]
    fn too_many_joints_and_huge_texts_are_unknown() {
        let many: String = (0..MAX_BODY / 8).map(|i| format!("w{i}_x ")).collect();
        assert_eq!(of(&many), Joints::Unknown);
        assert_eq!(of(&"a".repeat(HUGE_TEXT)), Joints::Unknown);
    }
}
