//! One physical line in, one parsed value (or the reason it was skipped) out. Pure: no I/O, no
//! SQL. Mirrors pi's `parseSessionEntryLine` (docs/pi-format.md §4.1): blank lines are skipped silently,
//! malformed JSON is skipped with a reason, falsy values are skipped, invalid UTF-8 becomes
//! U+FFFD and lone surrogate escapes are accepted as `JSON.parse` accepts them.

use serde_json::Value;

use crate::pi::js;

mod lean;

/// What one line holds.
#[derive(Debug)]
pub enum Line {
    /// Empty or whitespace only: pi skips it without comment.
    Blank,
    /// Not JSON, or JSON pi ignores; the reason is for `path:line: reason` reports.
    Bad(String),
    /// A JSON value pi would keep.
    Value(Value),
}

/// Parses one line (without its `\n`) for ingest: as [`parse_json`], except that the `data` of
/// an image block (an object whose `type` is `"image"` before its `data`, as pi writes them) is
/// skipped unread and left as an empty string. Nothing ingest keeps reads image data, and a
/// screenshot line can be tens of MB: parsing it into the value would double its memory.
pub fn parse_line(bytes: &[u8]) -> Line {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Line::Blank;
    }
    let lean = |t: &str| serde_json::from_str::<lean::LeanValue>(t).map(|v| v.0);
    let parsed = lean(&text).or_else(|e| match js::replace_lone_surrogates(&text) {
        Some(fixed) => lean(&fixed),
        None => Err(e),
    });
    match parsed {
        Ok(v) if !js::truthy(&v) => Line::Bad(format!("{v} value is ignored")),
        Ok(v) => Line::Value(v),
        Err(e) => Line::Bad(json_reason(&e)),
    }
}

/// `JSON.parse` as pi calls it: serde_json, retried with lone surrogate escapes (which
/// `JSON.parse` accepts and serde_json refuses) replaced by U+FFFD escapes.
///
/// # Errors
/// The first parse's error when the text is not JSON even so.
pub fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Value>(text).or_else(|e| match js::replace_lone_surrogates(text) {
        Some(fixed) => serde_json::from_str::<Value>(&fixed),
        None => Err(e),
    })
}

fn json_reason(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Eof => "truncated JSON",
        _ => "invalid JSON",
    };
    // serde_json appends "at line L column C"; the line is always 1 here.
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
    format!("{what} ({msg} at column {})", e.column())
}

/// pi's readline (used for listings) also ends lines at a lone `\r`; the loader does not.
/// Returns the extra segments a listing would see, or `None` when the line has no inner `\r`.
pub fn listing_segments(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let body = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if !body.contains(&b'\r') {
        return None;
    }
    Some(body.split(|&b| b == b'\r').collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_line_cases() {
        assert!(matches!(parse_line(b""), Line::Blank));
        assert!(matches!(parse_line(b"  \r"), Line::Blank));
        assert!(matches!(parse_line(b"null"), Line::Bad(_)));
        assert!(matches!(parse_line(b"0"), Line::Bad(_)));
        assert!(matches!(parse_line(b"{\"a\":"), Line::Bad(r) if r.starts_with("truncated")));
        assert!(matches!(parse_line(b"{\"a\":1}\r"), Line::Value(_)));
        assert!(matches!(parse_line(b"\xef\xbb\xbf{\"a\":1}"), Line::Bad(_)));
        let Line::Value(v) = parse_line(b"{\"t\":\"x\\ud83d\",\"b\":\"\xff\"}") else {
            panic!("lone surrogate and invalid utf-8 must parse")
        };
        assert_eq!(v["t"], "x\u{fffd}");
        assert_eq!(v["b"], "\u{fffd}");
    }

    #[test]
    fn listing_splits_on_lone_cr_only() {
        assert!(listing_segments(b"{}\r").is_none());
        assert_eq!(listing_segments(b"{}\r{}").unwrap().len(), 2);
    }
}
