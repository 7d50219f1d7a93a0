//! The one neutralising function set for everything pidx prints to a terminal: transcript text,
//! file and folder names, cwds, labels and error messages alike. No escape sequence (CSI, OSC,
//! DCS), C0 or C1 control character or bidirectional override survives; nothing is dropped
//! silently either (a block shows a visible U+FFFD where one stood).

/// Text for one line (a table cell, a file name): every control character, line break and
/// bidirectional override becomes a space, and runs of spaces collapse.
pub fn one_line(s: &str) -> String {
    collapse(s, None)
}

/// [`one_line`] of `s` as far as a cell `width` columns wide can show it: the line stops once
/// it is wider than that by enough that a table still marks the cut (the rest of a long text is
/// never read).
pub fn one_line_upto(s: &str, width: usize) -> String {
    // Trimming takes at most one space from each end (spaces are collapsed).
    collapse(s, Some(width.saturating_add(3)))
}

/// [`one_line`], stopping once the line is `stop` display columns wide (`None`: never; then
/// widths are not measured).
fn collapse(s: &str, stop: Option<usize>) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::with_capacity(stop.map_or(s.len(), |n| s.len().min(n.saturating_mul(4))));
    let mut shown = 0usize;
    let mut last_space = false;
    for c in s.chars() {
        if stop.is_some_and(|n| shown >= n) {
            break;
        }
        let c = if is_unsafe(c) || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if !last_space {
                out.push(' ');
                shown += 1;
            }
            last_space = true;
        } else {
            out.push(c);
            if stop.is_some() {
                shown += c.width().unwrap_or(0);
            }
            last_space = false;
        }
    }
    out.trim().to_string()
}

/// Text shown as a block (a message, an error): newlines and tabs stay, every other control character
/// (ESC included, so no escape sequence survives) becomes a visible `�`.
pub fn block(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' || c == '\t' {
                c
            } else if is_unsafe(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A diagnostic for stderr, neutralised, each line kept.
pub fn say(msg: &str) {
    eprintln!("{}", block(msg));
}

/// `"s"` unless `n` is one, for "1 file" / "2 files".
pub fn plural(n: impl TryInto<i64>) -> &'static str {
    if n.try_into().is_ok_and(|n| n == 1) {
        ""
    } else {
        "s"
    }
}

/// An integer with thousands separators, for people (never in JSON or CSV): `1,234,567`.
pub fn thousands(n: impl Into<i128>) -> String {
    let n = n.into();
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_upto_stops_past_the_width_and_keeps_what_collapsing_shortens() {
        let long = format!("title{}", " word".repeat(400));
        let cut = one_line_upto(&long, 20);
        assert!(one_line(&long).starts_with(&cut));
        assert!(
            cut.chars().count() > 20 && cut.chars().count() <= 23,
            "{cut:?}"
        );
        // Whitespace that collapses does not count: both words are still there.
        assert_eq!(one_line_upto(&format!("x{}y", " ".repeat(200)), 10), "x y");
        assert_eq!(one_line_upto("a\u{1b}[31mb", 10), one_line("a\u{1b}[31mb"));
        assert_eq!(one_line_upto("short", 80), "short");
    }

    use super::*;

    #[test]
    fn escapes_never_reach_the_terminal() {
        assert_eq!(one_line("a\x1b[31mred\x07\nb\u{202e}c"), "a [31mred b c");
        assert_eq!(
            block("x\x1b]0;title\x07\ny"),
            "x\u{fffd}]0;title\u{fffd}\ny"
        );
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(-1000), "-1,000");
        assert_eq!((plural(1), plural(0), plural(2)), ("", "s", "s"));
    }

    #[test]
    fn c1_osc_and_hyperlinks_are_inert() {
        // C1 CSI (U+009B), an OSC 52 clipboard write, an OSC 8 hyperlink.
        let hostile = "a\u{9b}2Jb\x1b]52;c;aGk=\x07c\x1b]8;;http://x\x1b\\d";
        for s in [one_line(hostile), block(hostile)] {
            assert!(
                !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{s:?}"
            );
        }
    }
}
