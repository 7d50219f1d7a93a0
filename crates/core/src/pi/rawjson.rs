//! Byte-exact access to members of a JSON object line. pi returns stored messages unchanged, and
//! stored text may hold what serde_json cannot represent (lone surrogate escapes), so `context`
//! copies member values from the line itself instead of re-serialising them.

/// The raw text of the top-level member `key` of the JSON object `text` (the last one when a
/// key repeats, as `JSON.parse` keeps the last).
pub fn member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    member_range(text, key).map(|r| &text[r])
}

/// Where [`member`]'s text lies in `text`, as a byte range.
pub fn member_range(text: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found = None;
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            b'}' => return found,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return found,
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        let name = &text[i + 1..key_end - 1];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return found;
        }
        i = skip_ws(b, i + 1);
        let end = skip_value(b, i)?;
        if name == key || (name.contains('\\') && unescaped(&text[key_start..key_end]) == key) {
            found = Some(i..end);
        }
        i = end;
    }
}

/// A quoted key with escapes, decoded as `JSON.parse` would (lone surrogates never equal a
/// key asked for, so failing to decode them is harmless).
fn unescaped(quoted: &str) -> String {
    serde_json::from_str::<String>(quoted).unwrap_or_default()
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// `i` is at a `"`; returns the index just past the closing quote (a string of tens of MB is
/// crossed by `memchr`, not byte by byte).
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        i += memchr::memchr2(b'\\', b'"', b.get(i..)?)?;
        match b[i] {
            b'\\' => i += 2,
            _ => return Some(i + 1),
        }
    }
}

/// Returns the index just past the value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::member;

    #[test]
    fn member_returns_exact_text() {
        let line = r#"{"type":"message","message":{"role":"user","content":"a\"}\ud83d"},"n": 12 ,"x":[1,{"y":"]"}]}"#;
        assert_eq!(
            member(line, "message"),
            Some(r#"{"role":"user","content":"a\"}\ud83d"}"#)
        );
        assert_eq!(member(line, "n"), Some("12"));
        assert_eq!(member(line, "x"), Some(r#"[1,{"y":"]"}]"#));
        assert_eq!(member(line, "missing"), None);
        assert_eq!(member(r#"{"a":1,"a":2}"#, "a"), Some("2"));
        assert_eq!(member(r#"{"r\u006fle":"user"}"#, "role"), Some(r#""user""#));
        assert_eq!(member(r#"{"role":1,"r\u006fle":2}"#, "role"), Some("2"));
    }
}
