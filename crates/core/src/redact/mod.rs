//! Secrets in transcript text: where they are (`find`, each finding naming its rule) and the
//! text without them (`redact`, each secret replaced by `[redacted: RULE]`). Pure: no I/O, no
//! knowledge of pi's files or of the doors that call it (`push`, `mcp`, `report --html`, the
//! reading commands' `--redact`). The rules are in `rules`; a finding of a loose rule must also
//! look random enough (`entropy`) so hashes, ids and prose are left alone.

mod entropy;
mod rules;

use std::borrow::Cow;

use serde_json::Value;

pub use rules::RULES;

/// One secret in a text: the rule that found it and its byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Every secret in `text`, in order, none overlapping (where two rules claim the same bytes
/// the one starting first wins, then the longer, then the earlier rule).
pub fn find(text: &str) -> Vec<Finding> {
    let set = rules::set();
    let matched = set.matches(text);
    if !matched.matched_any() {
        return Vec::new();
    }
    let mut all: Vec<(Finding, usize)> = Vec::new();
    for i in matched.iter() {
        rules::findings(i, text, &mut |f| all.push((f, i)));
    }
    all.sort_by_key(|(f, i)| (f.start, std::cmp::Reverse(f.end), *i));
    let mut out: Vec<Finding> = Vec::with_capacity(all.len());
    for (f, _) in all {
        if out.last().is_none_or(|last| f.start >= last.end) {
            out.push(f);
        }
    }
    out
}

/// Whether the raw JSON line `raw` may hold a secret inside a string value: `false` means no
/// string of it holds one. One pass of the rules' combined automaton, over the line with its
/// escapes read (`\n`, `\"`, ...) when it has any: a token at the start of a line follows a
/// `\n` escape whose `n` would hide the word boundary.
pub fn may_hold(raw: &str) -> bool {
    if raw.contains('\\') {
        rules::set().is_match(&unescaped(raw))
    } else {
        rules::set().is_match(raw)
    }
}

/// `raw` with JSON's character escapes read (a `\uXXXX` is left as it is).
fn unescaped(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(e @ ('"' | '\\' | '/')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The marker that stands where a secret of `rule` was.
pub fn marker(rule: &str) -> String {
    format!("{MARKER_OPEN}{rule}]")
}

const MARKER_OPEN: &str = "[redacted: ";

/// The byte ranges of the markers in a redacted `text` (each `[redacted: RULE]` with RULE one
/// of [`RULES`]), in order.
pub fn markers(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(off) = text[from..].find(MARKER_OPEN) {
        let start = from + off;
        let name_at = start + MARKER_OPEN.len();
        let rest = &text[name_at..];
        match rest.find(']') {
            Some(close) if RULES.contains(&&rest[..close]) => {
                let end = name_at + close + 1;
                out.push((start, end));
                from = end;
            }
            _ => from = name_at,
        }
    }
    out
}

/// `text` with every secret replaced by its rule's marker (borrowed when there is none).
pub fn redact(text: &str) -> Cow<'_, str> {
    let found = find(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replaced(text, &found))
}

/// `text` with each of `found` (as [`find`] gives them: in order, none overlapping) replaced by
/// its rule's marker; for a caller that needs the findings too.
pub fn replaced(text: &str, found: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(&text[at..f.start]);
        out.push_str(&marker(f.rule));
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Redacts every string inside `v` (object keys are names, not values, and are kept); returns
/// how many strings changed. The value stays the same JSON shape.
pub fn redact_value(v: &mut Value) -> usize {
    match v {
        Value::String(s) => match redact(s) {
            Cow::Borrowed(_) => 0,
            Cow::Owned(r) => {
                *s = r;
                1
            }
        },
        Value::Array(items) => items.iter_mut().map(redact_value).sum(),
        Value::Object(m) => m.values_mut().map(redact_value).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
