//! The tokenizer of FTS5's `unicode61 remove_diacritics 2`, as pidx's `fts` table uses it
//! (migrations/0003_search.sql), written out so the other engines index the same words:
//! runs of letters and digits, lower-cased, accents removed (`jalapeño` is `jalapeno`,
//! `parse_line` is `parse` and `line`). Differences from FTS5: letters and digits are Rust's
//! `char::is_alphanumeric` (FTS5: the categories L*, N* and Co), and every combining mark
//! left by canonical decomposition is dropped (FTS5 folds Latin letters only).

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Calls `f(position, token, byte_from, byte_to)` for every token of `text`.
pub fn tokens(text: &str, mut f: impl FnMut(u32, &str, usize, usize)) {
    let bytes = text.as_bytes();
    let mut buf = String::new();
    let mut pos = 0u32;
    let mut i = 0;
    while i < bytes.len() {
        // Skip separators.
        let start = loop {
            if i >= bytes.len() {
                return;
            }
            let b = bytes[i];
            if b < 128 {
                if b.is_ascii_alphanumeric() {
                    break i;
                }
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                if c.is_alphanumeric() {
                    break i;
                }
                i += c.len_utf8();
            }
        };
        let mut ascii = true;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 128 {
                if !b.is_ascii_alphanumeric() {
                    break;
                }
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                if !c.is_alphanumeric() && !is_combining_mark(c) {
                    break;
                }
                ascii = false;
                i += c.len_utf8();
            }
        }
        let word = &text[start..i];
        buf.clear();
        if ascii {
            buf.push_str(word);
            buf.make_ascii_lowercase();
        } else {
            for c in word.nfd().filter(|c| !is_combining_mark(*c)) {
                buf.extend(c.to_lowercase());
            }
        }
        if !buf.is_empty() {
            f(pos, &buf, start, i);
            pos += 1;
        }
    }
}

/// The tokens of `text`, as strings (queries).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokens(text, |_, t, _, _| out.push(t.to_string()));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn like_unicode61() {
        assert_eq!(
            super::words("Jalapeño parse_line src/main.rs:42 ÉTÉ"),
            ["jalapeno", "parse", "line", "src", "main", "rs", "42", "ete"]
        );
    }
}
