//! Byte-exact access to members of a JSON object line. pi returns stored messages unchanged, and
//! stored text may hold what serde_json cannot represent (lone surrogate escapes), so `context`
//! copies member values from the line itself instead of re-serialising them.

/// The raw text of the top-level member `key` of the JSON object `text` (the last one when a
/// key repeats, as `JSON.parse` keeps the last).
pub fn member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
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
        let key_end = skip_string(b, i)?;
        let name = &text[i + 1..key_end - 1];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return found;
        }
        i = skip_ws(b, i + 1);
        let end = skip_value(b, i)?;
        if name == key {
            found = Some(&text[i..end]);
        }
        i = end;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// `i` is at a `"`; returns the index just past the closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
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
    }
}
