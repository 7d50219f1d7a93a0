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
    let bytes = s.as_bytes();
    let limit = stop.unwrap_or(usize::MAX);
    let mut out = String::with_capacity(bytes.len().min(limit.saturating_mul(4)));
    let mut shown = 0usize;
    let mut last_space = false;
    let mut at = 0;
    while at < bytes.len() && shown < limit {
        let blank = if bytes[at].is_ascii() {
            let b = bytes[at];
            if b > b' ' && b != 0x7f {
                // A run of printable ASCII, a column a byte: copied whole, not decoded and
                // measured a character at a time (a `stats --by session` table collapses
                // 10,000 titles).
                let run = bytes[at..]
                    .iter()
                    .position(|b| !(b'!'..=b'~').contains(b))
                    .unwrap_or(bytes.len() - at);
                let take = run.min(limit - shown);
                out.push_str(&s[at..at + take]);
                shown += take;
                at += run;
                last_space = false;
                continue;
            }
            at += 1;
            true
        } else {
            let c = s[at..].chars().next().unwrap_or(' ');
            at += c.len_utf8();
            if is_unsafe(c) || c.is_whitespace() {
                true
            } else {
                out.push(c);
                shown += c.width().unwrap_or(0);
                last_space = false;
                false
            }
        };
        if blank {
            if !last_space {
                out.push(' ');
                shown += 1;
            }
            last_space = true;
        }
    }
    let trimmed = out.trim();
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_string()
    }
}

/// [`collapse`] a character at a time: what it must equal.
#[cfg(test)]
fn collapse_chars(s: &str, stop: Option<usize>) -> String {
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
    // The digits from the right, into a buffer on the stack (a `stats --by session` table
    // writes 140,000 figures).
    let mut digits = [0u8; 39];
    let mut len = 0;
    let mut wide = n.unsigned_abs();
    while wide > u128::from(u64::MAX) {
        digits[digits.len() - 1 - len] = b'0' + (wide % 10) as u8;
        len += 1;
        wide /= 10;
    }
    // What is left fits 64 bits, whose division is an instruction (128-bit is a call).
    let mut v = u64::try_from(wide).unwrap_or_default();
    loop {
        digits[digits.len() - 1 - len] = b'0' + (v % 10) as u8;
        len += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut out = String::with_capacity(len + len / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, &d) in digits[digits.len() - len..].iter().enumerate() {
        if i > 0 && (len - i) % 3 == 0 {
            out.push(',');
        }
        out.push(char::from(d));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_collapse_as_a_character_at_a_time() {
        let every_byte: String = (0u8..128).map(char::from).collect();
        let samples = [
            every_byte.clone(),
            format!("  {every_byte}  x"),
            "plain words, one space each".to_string(),
            "\ttabs\t\tand\r\nbreaks  \x1b[31mred\x7f end ".to_string(),
            " ".repeat(7),
            String::new(),
            "x".repeat(50),
            "日本語  テキスト\u{2028}and\u{a0} ascii\u{202e}runs é\u{85}x".to_string(),
            format!("wide 日本 {every_byte} ſ\u{3000}end"),
        ];
        for s in &samples {
            for stop in [
                None,
                Some(0),
                Some(1),
                Some(3),
                Some(10),
                Some(40),
                Some(200),
            ] {
                assert_eq!(collapse(s, stop), collapse_chars(s, stop), "{s:?} {stop:?}");
            }
        }
    }

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
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
        assert_eq!(
            thousands(i128::MIN),
            "-170,141,183,460,469,231,731,687,303,715,884,105,728"
        );
        assert_eq!(thousands(100_000), "100,000");
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
