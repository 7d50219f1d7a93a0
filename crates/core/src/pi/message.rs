//! Messages as pi's `buildSessionContext` returns them, from raw entry lines: a stored message
//! with its v2 role migrated and missing content normalised (docs/pi-format.md §3, §6 step 5),
//! synthesised messages built field by field from raw JSON values (so numbers and strings keep
//! their exact text), and a `context_edit` applied (§6). Pure: lines in, JSON text out.

use serde_json::Value;

use crate::pi::entry::migrated_role;
use crate::pi::js;
use crate::pi::line::parse_json;
use crate::pi::rawjson::member;

/// A JSON string's value, or the raw text when it is not a string.
pub fn unquote(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())
}

pub fn push_raw<'a>(fields: &mut Vec<(&'a str, &'a str)>, key: &'a str, raw: Option<&'a str>) {
    if let Some(raw) = raw {
        fields.push((key, raw));
    }
}

pub fn object(fields: &[(&str, &str)]) -> String {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", body.join(","))
}

pub fn raw_truthy(raw: &str) -> bool {
    parse_lenient(raw).is_some_and(|v| js::truthy(&v))
}

fn parse_lenient(raw: &str) -> Option<Value> {
    parse_json(raw).ok()
}

/// A stored message as pi returns it: unchanged, except a v2 `hookMessage` role becomes `custom`
/// (docs/pi-format.md §3) and a missing or null `content` is normalised (docs/pi-format.md §6 step 5).
pub fn stored_message(raw: &str, version: i64) -> String {
    changed_message(raw, version).unwrap_or_else(|| raw.to_string())
}

/// [`stored_message`] when it differs from `raw`, else `None`. Whether it differs is read from
/// the raw `role` and `content` members, so an unchanged message (nearly all) is never parsed:
/// one with a 100 MB text costs no copy here.
pub fn changed_message(raw: &str, version: i64) -> Option<String> {
    let role = member(raw, "role").and_then(|r| serde_json::from_str::<String>(r).ok());
    let role = role.as_deref().unwrap_or_default();
    let content_missing = member(raw, "content").is_none_or(|c| c == "null");
    let normalised =
        content_missing && matches!(role, "system" | "user" | "assistant" | "toolResult");
    if !normalised && migrated_role(role, version) == role {
        return None;
    }
    Some(rewritten_message(raw, version))
}

/// The message parsed, its role migrated and missing content normalised, serialised again.
fn rewritten_message(raw: &str, version: i64) -> String {
    let Some(Value::Object(mut m)) = parse_lenient(raw) else {
        return raw.to_string();
    };
    let mut changed = false;
    if let Some(role) = m.get("role").and_then(Value::as_str) {
        let migrated = migrated_role(role, version);
        if migrated != role {
            m.insert("role".into(), migrated.into());
            changed = true;
        }
    }
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let content_missing = m.get("content").is_none_or(Value::is_null);
    if content_missing {
        match role.as_str() {
            "system" => {
                m.insert("content".into(), "".into());
                changed = true;
            }
            "user" | "assistant" | "toolResult" => {
                m.insert("content".into(), Value::Array(Vec::new()));
                changed = true;
            }
            _ => {}
        }
    }
    if changed {
        Value::Object(m).to_string()
    } else {
        raw.to_string()
    }
}

/// pi's `projectContextEntry` with an edit: `replacement: null` drops the messages; otherwise
/// the content of user/assistant/toolResult/custom messages is replaced.
pub fn apply_edit(messages: Vec<String>, edit_line: &str) -> Vec<String> {
    let replacement = member(edit_line, "replacement").and_then(parse_lenient);
    let Some(replacement) = replacement.filter(|r| !r.is_null()) else {
        return Vec::new();
    };
    let content = replacement.get("content").cloned();
    messages
        .into_iter()
        .map(|raw| {
            let Some(Value::Object(mut m)) = parse_lenient(&raw) else {
                return raw;
            };
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if !matches!(
                role.as_str(),
                "user" | "assistant" | "toolResult" | "custom"
            ) {
                return raw;
            }
            let new = match &content {
                Some(Value::String(s)) if role == "assistant" || role == "toolResult" => {
                    Some(serde_json::json!([{"type": "text", "text": s}]))
                }
                other => other.clone(),
            };
            match new {
                Some(v) => {
                    m.insert("content".into(), v);
                }
                None => {
                    m.shift_remove("content");
                }
            }
            Value::Object(m).to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_messages_pi_changes_are_rewritten() {
        let same = [
            r#"{"role":"user","content":"a\ud83d","timestamp":1}"#,
            r#"{"role":"hookMessage","content":"x"}"#,
            r#"{"role":"custom"}"#,
            r#""not an object""#,
        ];
        for raw in same {
            assert_eq!(changed_message(raw, 3), None, "{raw}");
            assert_eq!(stored_message(raw, 3), raw);
        }
        assert_eq!(
            changed_message(r#"{"role":"hookMessage","content":"x"}"#, 2).as_deref(),
            Some(r#"{"role":"custom","content":"x"}"#)
        );
        assert_eq!(
            changed_message(r#"{"role":"user","content":null}"#, 3).as_deref(),
            Some(r#"{"role":"user","content":[]}"#)
        );
        assert_eq!(
            changed_message(r#"{"role":"system"}"#, 3).as_deref(),
            Some(r#"{"role":"system","content":""}"#)
        );
        // An escaped key is the same key to JSON.parse.
        assert_eq!(
            changed_message(r#"{"r\u006fle":"assistant"}"#, 3).as_deref(),
            Some(r#"{"role":"assistant","content":[]}"#)
        );
    }
}
