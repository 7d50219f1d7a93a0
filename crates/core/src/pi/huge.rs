//! Lines with one huge text, parsed without copying it. A pasted log or a tool's output can make
//! one `text` of 100 MB; parsed the usual way, the line, serde's scratch and the parsed string
//! hold it three times. Here the largest `"text"` (or `"content"`) string of such a line is
//! unescaped in the line's own buffer, which then becomes that string, and the rest of the line
//! is parsed with a short token in its place. Whatever copies the text (the listing's first message, the
//! indexed texts, `entries.text`) copies the token; the writer streams the real text wherever a
//! token is (`Huge::pieces`) and never holds a second copy of it.
//!
//! Nothing is changed unless every check passes first: the line is JSON, the string's bytes are
//! UTF-8 with valid escapes, and in the parsed value the token is a `content` string or the
//! `text` of a text block of a `content` array (the places pi's text extraction reads whole).
//! Otherwise the buffer is handed back untouched and the line is parsed as any other.

use std::sync::OnceLock;

use serde_json::Value;

use crate::pi::js::hex4;
use crate::pi::line::{parse_line, Line};

/// Lines at least this long are looked at (and only their strings this long are taken out).
pub const HUGE_TEXT: usize = 16 << 20;

/// What the session row keeps of a huge first message: enough for every title (`substr(...,
/// 1, 1000)`); the whole text is read from its entry when asked for.
pub const TITLE_CHARS: usize = 1000;

/// A text taken out of its line; [`token`] stands for it in the parsed value.
#[derive(Clone, PartialEq)]
pub struct Huge {
    pub text: String,
}

impl std::fmt::Debug for Huge {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Huge({} bytes)", self.text.len())
    }
}

/// The token of this process: private-use characters around a random name, so no transcript
/// holds it and JSON serialization leaves it as it is.
pub fn token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        format!(
            "\u{E000}pidx-huge-{}\u{E001}",
            uuid::Uuid::new_v4().simple()
        )
    })
}

/// Whether `s` holds the token (it was made from a huge text's place).
pub fn holds_token(s: &str) -> bool {
    s.contains(token())
}

impl Huge {
    /// `s` with the token replaced by the text, as consecutive pieces; `None` when `s` has no
    /// token.
    pub fn pieces<'a>(&'a self, s: &'a str) -> Option<Vec<&'a str>> {
        if !holds_token(s) {
            return None;
        }
        let mut out = Vec::new();
        for (i, part) in s.split(token()).enumerate() {
            if i > 0 {
                out.push(self.text.as_str());
            }
            if !part.is_empty() {
                out.push(part);
            }
        }
        Some(out)
    }

    /// `s` with the token replaced by the text, as one string (a copy; for rare shapes only).
    pub fn expand(&self, s: &str) -> String {
        s.replace(token(), &self.text)
    }

    /// `s` with the token replaced by the text, built in the text's own buffer when the token
    /// is there once (what surrounds it is moved in around the text: no second copy).
    pub fn into_expanded(self, s: &str) -> String {
        match s.split_once(token()) {
            Some((before, after)) if !after.contains(token()) => {
                let mut text = self.text;
                text.reserve(before.len() + after.len());
                text.insert_str(0, before);
                text.push_str(after);
                text
            }
            _ => self.expand(s),
        }
    }

    /// The first `chars` characters of `s` expanded, without expanding the rest.
    pub fn prefix(&self, s: &str, chars: usize) -> String {
        let mut out = String::new();
        let mut left = chars;
        for piece in self.pieces(s).unwrap_or_else(|| vec![s]) {
            let end = piece
                .char_indices()
                .nth(left)
                .map_or(piece.len(), |(i, _)| i);
            out.push_str(&piece[..end]);
            left -= piece[..end].chars().count();
            if left == 0 {
                break;
            }
        }
        out
    }
}

/// A line parsed as `line::parse_line` parses it; one of [`HUGE_TEXT`] or more with its huge text
/// split out when every check passes ([`split_line`]).
pub fn parse_owned(line: Vec<u8>) -> (Line, Option<Huge>) {
    if line.len() < HUGE_TEXT {
        return (parse_line(&line), None);
    }
    match split_line(line, HUGE_TEXT) {
        Ok((v, h)) => (Line::Value(v), Some(h)),
        Err(line) => (parse_line(&line), None),
    }
}

/// Parses a line of at least `min` bytes whose largest `text` string is at least `min` bytes
/// long with that string taken out (see the module). `Err` gives the buffer back untouched.
pub fn split_line(mut buf: Vec<u8>, min: usize) -> Result<(Value, Huge), Vec<u8>> {
    let Some((start, end)) = largest_text(&buf, min) else {
        return Err(buf);
    };
    // The string's bytes, between its quotes.
    let raw = &buf[start + 1..end];
    if std::str::from_utf8(raw).is_err() || !escapes_valid(raw) {
        return Err(buf);
    }
    if serde_json::from_slice::<serde::de::IgnoredAny>(&buf).is_err() {
        return Err(buf);
    }
    let mut skeleton = Vec::with_capacity(buf.len() - (end - start) + token().len() + 2);
    skeleton.extend_from_slice(&buf[..start]);
    skeleton.push(b'"');
    skeleton.extend_from_slice(token().as_bytes());
    skeleton.extend_from_slice(&buf[end..]);
    let value = match parse_line(&skeleton) {
        Line::Value(v) if token_in_text_block(&v) => v,
        _ => return Err(buf),
    };
    drop(skeleton);
    let len = unescape_in_place(&mut buf[start + 1..end]);
    buf.truncate(start + 1 + len);
    buf.drain(..start + 1);
    buf.shrink_to_fit();
    // Checked above: UTF-8 in, and unescaping keeps it so.
    let text = String::from_utf8(buf).map_err(|e| e.into_bytes())?;
    Ok((value, Huge { text }))
}

/// The largest string of at least `min` bytes that is the value of a `"text"` or `"content"`
/// key: the offsets of its opening and closing quotes.
fn largest_text(buf: &[u8], min: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < buf.len() {
        if buf[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < buf.len() && buf[i] != b'"' {
            i += if buf[i] == b'\\' { 2 } else { 1 };
        }
        let end = i.min(buf.len());
        i += 1;
        if end - start > min
            && best.is_none_or(|(s, e)| end - start > e - s)
            && after_text_key(&buf[..start])
        {
            best = Some((start, end));
        }
    }
    best.filter(|&(_, end)| end < buf.len())
}

/// Whether `before` ends with the key `"text"` or `"content"` and a colon (spaces allowed).
fn after_text_key(before: &[u8]) -> bool {
    let trimmed = before.trim_ascii_end();
    let Some(rest) = trimmed.strip_suffix(b":") else {
        return false;
    };
    let key = rest.trim_ascii_end();
    key.ends_with(b"\"text\"") || key.ends_with(b"\"content\"")
}

/// Whether the token is, whole, a `content` string or the `text` of a `{"type": "text"}` block
/// in a `content` array, and nowhere else.
fn token_in_text_block(v: &Value) -> bool {
    let mut found = 0;
    let mut misplaced = false;
    visit(v, false, &mut |s, place| {
        if holds_token(s) {
            found += 1;
            misplaced |= !place || s != token();
        }
    });
    found == 1 && !misplaced
}

/// Calls `f` on every string of `v` with whether it is a `content` string or a text block's
/// `text` inside a `content` array (`in_content`: `v` is an element of one).
fn visit(v: &Value, in_content: bool, f: &mut impl FnMut(&str, bool)) {
    match v {
        Value::String(s) => f(s, false),
        Value::Array(items) => items.iter().for_each(|x| visit(x, false, f)),
        Value::Object(map) => {
            let text_block = in_content && map.get("type").and_then(Value::as_str) == Some("text");
            for (k, x) in map {
                f(k, false);
                match (k.as_str(), x) {
                    ("text", Value::String(s)) if text_block => f(s, true),
                    ("content", Value::String(s)) => f(s, true),
                    ("content", Value::Array(items)) => {
                        items.iter().for_each(|x| visit(x, true, f))
                    }
                    _ => visit(x, false, f),
                }
            }
        }
        _ => {}
    }
}

/// Whether `raw` (a JSON string's bytes) has no raw control character and only good escapes.
fn escapes_valid(raw: &[u8]) -> bool {
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\\' => match escape(raw, i) {
                Some((read, _)) => i += read,
                None => return false,
            },
            c if c < 0x20 => return false,
            _ => i += 1,
        }
    }
    true
}

/// Unescapes `raw` (checked by `escapes_valid`) into its own start; returns the new length.
fn unescape_in_place(raw: &mut [u8]) -> usize {
    let (mut r, mut w) = (0, 0);
    while r < raw.len() {
        if raw[r] == b'\\' {
            let Some((read, c)) = escape(raw, r) else {
                break;
            };
            // An escape is never shorter than the UTF-8 it stands for: `w` stays behind `r`.
            let mut bytes = [0; 4];
            let encoded = c.encode_utf8(&mut bytes).as_bytes();
            raw[w..w + encoded.len()].copy_from_slice(encoded);
            r += read;
            w += encoded.len();
        } else {
            let run = raw[r..]
                .iter()
                .position(|&b| b == b'\\')
                .unwrap_or(raw.len() - r);
            raw.copy_within(r..r + run, w);
            r += run;
            w += run;
        }
    }
    w
}

/// The escape at `raw[i]` (a backslash): the bytes it takes and the character it stands for.
/// Lone surrogates become U+FFFD, as `line::parse_line` makes them.
fn escape(raw: &[u8], i: usize) -> Option<(usize, char)> {
    let c = match *raw.get(i + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(raw, i),
        _ => return None,
    };
    Some((2, c))
}

fn unicode_escape(raw: &[u8], i: usize) -> Option<(usize, char)> {
    let unit = hex4(raw, i + 2)?;
    match unit {
        0xD800..=0xDBFF => {
            let low = (raw.get(i + 6) == Some(&b'\\') && raw.get(i + 7) == Some(&b'u'))
                .then(|| hex4(raw, i + 8))
                .flatten();
            match low {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    Some((12, char::from_u32(c)?))
                }
                _ => Some((6, '\u{FFFD}')),
            }
        }
        0xDC00..=0xDFFF => Some((6, '\u{FFFD}')),
        _ => Some((6, char::from_u32(unit)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `v` with the token put back to the text.
    fn expanded(v: &Value, huge: &Huge) -> Value {
        match v {
            Value::String(s) => Value::String(huge.expand(s)),
            Value::Array(items) => Value::Array(items.iter().map(|x| expanded(x, huge)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, x)| (k.clone(), expanded(x, huge)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn message(text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"a1","message":{{"role":"user","content":[{{"type":"text","text":"short"}},{{"type":"text", "text" : "{text}"}}]}}}}"#
        )
    }

    /// Split with a small bar: the value, token put back, is what `parse_line` gives.
    fn same_as_parse_line(line: &str) -> Huge {
        let Line::Value(whole) = parse_line(line.as_bytes()) else {
            panic!("not a value: {line}")
        };
        let (v, huge) = split_line(line.as_bytes().to_vec(), 8).expect("split");
        assert_eq!(expanded(&v, &huge), whole, "{line}");
        let skeleton = v.to_string();
        assert!(skeleton.contains(token()) && !skeleton.contains(&huge.text));
        huge
    }

    #[test]
    fn the_text_taken_out_is_the_parsed_string() {
        for text in [
            r#"a long text with \"quotes\", \\ back\/slashes\n\t\r\b\f and more"#,
            r#"a long text \u00e9\u4e2d and a pair \ud83d\ude00 and é raw"#,
            r#"a long text with lone surrogates \ud800 x \udc00 y \ud800\u0041 z"#,
            r#"a long text with \u0000 nul and a last escape \u0041"#,
        ] {
            let huge = same_as_parse_line(&message(text));
            assert!(huge.text.starts_with("a long text"));
        }
        let content =
            r#"{"type":"message","message":{"role":"user","content":"a long text as a string"}}"#;
        assert_eq!(same_as_parse_line(content).text, "a long text as a string");
    }

    #[test]
    fn the_largest_text_is_taken() {
        let line = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a long text"},{"type":"text","text":"a longer long text"}]}}"#;
        assert_eq!(same_as_parse_line(line).text, "a longer long text");
    }

    #[test]
    fn anything_unusual_gives_the_buffer_back_untouched() {
        let cases = [
            // A `text` key that is not a text block's (tool call arguments are serialized).
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"text":"a long text here"}}]}}"#.to_string(),
            // A text block outside `content`.
            r#"{"type":"custom","details":[{"type":"text","text":"a long text here"}]}"#.to_string(),
            // Not JSON, a bad escape, a raw control character.
            message("a long text").trim_end_matches('}').to_string(),
            message(r#"a long text \x bad"#),
            message("a long text \u{1} raw"),
            // Too short.
            message("short2"),
        ];
        for line in cases {
            let back = split_line(line.as_bytes().to_vec(), 8).expect_err(&line);
            assert_eq!(back, line.as_bytes());
        }
        let mut bad_utf8 = message("a long text XX").into_bytes();
        let at = bad_utf8.len() - 10;
        bad_utf8[at] = 0xff;
        assert_eq!(split_line(bad_utf8.clone(), 8).unwrap_err(), bad_utf8);
    }

    #[test]
    fn pieces_and_prefix_put_the_text_back() {
        let huge = Huge {
            text: "héllo world".into(),
        };
        let s = format!("bash\n{}", token());
        assert_eq!(huge.pieces(&s).unwrap(), ["bash\n", "héllo world"]);
        assert_eq!(huge.pieces("no token"), None);
        assert_eq!(huge.prefix(&s, 7), "bash\nhé");
        assert_eq!(huge.prefix(token(), 100), "héllo world");
        assert_eq!(huge.expand(&s), "bash\nhéllo world");
        assert_eq!(huge.clone().into_expanded(&s), "bash\nhéllo world");
        let twice = format!("{}-{s}.", token());
        assert_eq!(
            huge.clone().into_expanded(&twice),
            "héllo world-bash\nhéllo world."
        );
        assert_eq!(huge.into_expanded("none"), "none");
    }
}
