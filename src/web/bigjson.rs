//! Huge strings in a message without holding them twice: a page shows a string's start and
//! links the rest a piece at a time, so neither needs the whole string decoded. `shrink` cuts
//! every long string literal of a message's JSON text before it is parsed (a 100 MB line then
//! parses as a few hundred kilobytes), and `string_at` + `decode` read one piece of one string
//! straight from the JSON text. Memory: the message's text once, plus a piece.

use serde_json::value::RawValue;

/// String literals longer than this (in JSON text bytes) are cut by [`shrink`]; far more than a
/// page shows of one string (`message::MAX_TEXT` characters).
pub const LIMIT: usize = 1 << 20;

/// `raw` with each string literal longer than [`LIMIT`] cut to about that (at a character and
/// escape boundary); `None` when none is that long (parse `raw` itself).
pub fn shrink(raw: &str) -> Option<String> {
    if raw.len() <= LIMIT {
        return None;
    }
    let b = raw.as_bytes();
    let mut out: Option<String> = None;
    let (mut copied, mut i) = (0, 0);
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let end = literal_end(b, i);
        if end - i > LIMIT {
            let o = out.get_or_insert_with(|| String::with_capacity(LIMIT * 2));
            let mut cut = i + 1 + LIMIT;
            // Back to a character boundary outside an escape (`\`, `\uXXXX`).
            while !raw.is_char_boundary(cut) {
                cut -= 1;
            }
            let mut k = cut;
            while k > i + 1 && cut - k < 6 && b[k - 1] != b'\\' {
                k -= 1;
            }
            if k > i + 1 && b[k - 1] == b'\\' && backslashes_before(b, k) % 2 == 1 {
                cut = k - 1;
            }
            o.push_str(&raw[copied..cut]);
            o.push('"');
            copied = end;
        }
        i = end;
    }
    let mut o = out?;
    o.push_str(&raw[copied..]);
    Some(o)
}

/// How many backslashes end at `k` (exclusive) counting back, including `b[k - 1]`.
fn backslashes_before(b: &[u8], k: usize) -> usize {
    b[..k].iter().rev().take_while(|&&c| c == b'\\').count()
}

/// The index after the literal that opens at `start` (a `"`), or the text's end.
fn literal_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The JSON text of the string at `pointer` (RFC 6901) in `raw`, quotes included; `None` when
/// there is nothing there or it is not a string. Nothing is copied on the way.
pub fn string_at<'a>(raw: &'a str, pointer: &str) -> Option<&'a str> {
    let mut at: &'a RawValue = serde_json::from_str(raw).ok()?;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let text = at.get();
        at = if text.starts_with('{') {
            let map: std::collections::HashMap<std::borrow::Cow<'a, str>, &'a RawValue> =
                serde_json::from_str(text).ok()?;
            map.get(token.as_str()).copied()?
        } else if text.starts_with('[') {
            let items: Vec<&'a RawValue> = serde_json::from_str(text).ok()?;
            items.get(token.parse::<usize>().ok()?).copied()?
        } else {
            return None;
        };
    }
    let text = at.get();
    text.starts_with('"').then_some(text)
}

/// Characters `from..` of the JSON string literal `lit` (quotes included), at most `n` of them
/// decoded, and whether more follow.
pub fn decode(lit: &str, from: usize, n: usize) -> (String, bool) {
    let body = lit.strip_prefix('"').unwrap_or(lit);
    let body = body.strip_suffix('"').unwrap_or(body);
    let mut out = String::new();
    let mut chars = body.chars();
    let mut index = 0usize;
    while let Some(c) = next_char(&mut chars) {
        if index >= from {
            if index - from >= n {
                return (out, true);
            }
            out.push(c);
        }
        index += 1;
    }
    (out, false)
}

/// The next decoded character of a literal's body.
fn next_char(chars: &mut std::str::Chars) -> Option<char> {
    let c = chars.next()?;
    if c != '\\' {
        return Some(c);
    }
    Some(match chars.next()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'u' => {
            let hex = |chars: &mut std::str::Chars| -> Option<u32> {
                let s: String = chars.by_ref().take(4).collect();
                u32::from_str_radix(&s, 16).ok()
            };
            let hi = hex(chars)?;
            if (0xd800..0xdc00).contains(&hi) {
                let mut ahead = chars.clone();
                if ahead.next() == Some('\\') && ahead.next() == Some('u') {
                    if let Some(lo) = hex(&mut ahead).filter(|lo| (0xdc00..0xe000).contains(lo)) {
                        *chars = ahead;
                        let code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                        return Some(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                }
            }
            char::from_u32(hi).unwrap_or('\u{fffd}')
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_string_is_cut_and_the_json_stays_valid() {
        let long = "é\\n\\\"x\\u00e9".repeat(LIMIT / 4);
        let raw =
            format!(r#"{{"role":"user","content":[{{"type":"text","text":"{long}"}}],"n":1}}"#);
        let small = shrink(&raw).expect("cut");
        assert!(small.len() < LIMIT + 100, "{}", small.len());
        let v: serde_json::Value = serde_json::from_str(&small).expect("still JSON");
        assert_eq!(v["n"], 1);
        assert!(v["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("é\n\"xé"));
        assert!(shrink(r#"{"a":"short"}"#).is_none());
    }

    #[test]
    fn a_piece_of_a_string_decodes_as_serde_does() {
        let raw = r#"{"content":[{"text":"a\"b\\c\n\u00e9\ud83d\ude00/z"}],"x~y":"w"}"#;
        let lit = string_at(raw, "/content/0/text").unwrap();
        let whole: String = serde_json::from_str(lit).unwrap();
        assert_eq!(decode(lit, 0, 100), (whole.clone(), false));
        let tail: String = whole.chars().skip(3).take(4).collect();
        assert_eq!(decode(lit, 3, 4), (tail, true));
        assert_eq!(string_at(raw, "/x~0y"), Some("\"w\""));
        assert_eq!(string_at(raw, "/content/0"), None, "not a string");
        assert_eq!(string_at(raw, "/content/5/text"), None);
    }
}
