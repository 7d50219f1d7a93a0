//! One context message (pi's JSON, as `query::context` returns it) rendered for a model to
//! read: the text of each block, tool calls with their arguments, tool results, with long tool
//! output, thinking and images elided behind markers that say what was left out.

use serde_json::Value;

/// A message's role and its text for a model; `max` bounds each tool output, thinking block and
/// tool-call argument list (0: nothing is elided).
pub fn render(raw: &str, max: usize) -> (String, String) {
    // Parsed as pi parses it: a lone surrogate (a cut emoji) does not make it unreadable.
    let Ok(v) = crate::pi::line::parse_json(raw) else {
        return ("unknown".into(), elide(raw, max, "message"));
    };
    let role = str_of(&v, "role").unwrap_or("unknown").to_string();
    let text = match role.as_str() {
        "user" | "assistant" => blocks(v.get("content"), max),
        "toolResult" => tool_result(&v, max),
        "bashExecution" => bash(&v, max),
        "custom" => {
            let kind = str_of(&v, "customType").unwrap_or("custom");
            format!("[{kind}]\n{}", blocks(v.get("content"), max))
        }
        "branchSummary" => format!(
            "[summary of a branch left at {}]\n{}",
            str_of(&v, "fromId").unwrap_or("?"),
            str_of(&v, "summary").unwrap_or_default()
        ),
        "compactionSummary" => format!(
            "[summary of the conversation before a compaction of {} tokens]\n{}",
            v.get("tokensBefore").map_or("?".into(), Value::to_string),
            str_of(&v, "summary").unwrap_or_default()
        ),
        "system" => blocks(v.get("content"), max),
        _ => elide(raw, max, "message"),
    };
    (role, text)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A `content` string or array of blocks, one paragraph per block.
fn blocks(content: Option<&Value>, max: usize) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|b| block(b, max))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        Some(other) => other.to_string(),
    }
}

fn block(b: &Value, max: usize) -> String {
    match str_of(b, "type") {
        Some("text") => str_of(b, "text").unwrap_or_default().to_string(),
        Some("thinking") => {
            let t = str_of(b, "thinking").unwrap_or_default();
            if t.is_empty() {
                String::new()
            } else {
                format!("[thinking]\n{}", elide(t, max, "thinking"))
            }
        }
        Some("toolCall") => {
            let args = b.get("arguments").map_or(String::new(), Value::to_string);
            format!(
                "[tool call {} id={}] {}",
                str_of(b, "name").unwrap_or("?"),
                str_of(b, "id").unwrap_or("?"),
                elide(&args, max, "argument")
            )
        }
        Some("image") => {
            let size = str_of(b, "data").map_or(0, str::len);
            format!(
                "[image {} elided: {size} characters of base64]",
                str_of(b, "mimeType").unwrap_or("of unknown type")
            )
        }
        _ => elide(&b.to_string(), max, "block"),
    }
}

fn tool_result(v: &Value, max: usize) -> String {
    let error = if v.get("isError").and_then(Value::as_bool) == Some(true) {
        " (error)"
    } else {
        ""
    };
    format!(
        "[result of {} id={}{error}]\n{}",
        str_of(v, "toolName").unwrap_or("?"),
        str_of(v, "toolCallId").unwrap_or("?"),
        elide(&blocks(v.get("content"), 0), max, "tool output")
    )
}

fn bash(v: &Value, max: usize) -> String {
    let exit = v.get("exitCode").map_or("?".into(), Value::to_string);
    format!(
        "[user ran bash, exit code {exit}]\n$ {}\n{}",
        str_of(v, "command").unwrap_or_default(),
        elide(str_of(v, "output").unwrap_or_default(), max, "tool output")
    )
}

/// `s` cut to about `max` characters (its head and its tail) with a marker saying how much of
/// what was left out; unchanged when `max` is 0 or it fits.
pub fn elide(s: &str, max: usize, what: &str) -> String {
    let n = s.chars().count();
    if max == 0 || n <= max {
        return s.to_string();
    }
    let head = max * 2 / 3;
    let tail = max - head;
    let head_end = s.char_indices().nth(head).map_or(s.len(), |(i, _)| i);
    let tail_start = s.char_indices().nth(n - tail).map_or(s.len(), |(i, _)| i);
    format!(
        "{}\n[… {} characters of {what} elided; tool_output_chars=0 shows all …]\n{}",
        &s[..head_end],
        n - head - tail,
        &s[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_output_is_elided_with_a_marker_and_images_never_shown() {
        let long = "x".repeat(5000);
        let raw = serde_json::json!({"role": "toolResult", "toolName": "bash", "toolCallId": "c1",
            "content": [{"type": "text", "text": long}, {"type": "image", "mimeType": "image/png", "data": "AAAA"}]})
        .to_string();
        let (role, text) = render(&raw, 300);
        assert_eq!(role, "toolResult");
        assert!(text.starts_with("[result of bash id=c1]\n"));
        assert!(text.contains("characters of tool output elided"));
        assert!(!text.contains("AAAA"));
        assert!(text.chars().count() < 500);
        let (_, whole) = render(&raw, 0);
        assert!(whole.contains(&long));
    }

    #[test]
    fn a_cut_emoji_does_not_make_a_message_unreadable() {
        let raw = r#"{"role":"user","content":[{"type":"text","text":"hi \ud83d there"}]}"#;
        assert_eq!(
            render(raw, 2000),
            ("user".into(), "hi \u{fffd} there".into())
        );
    }

    #[test]
    fn assistant_text_and_tool_calls_are_kept() {
        let raw = r#"{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"a.rs"}}]}"#;
        let (role, text) = render(raw, 2000);
        assert_eq!(role, "assistant");
        assert_eq!(
            text,
            "Let me look.\n\n[tool call read id=t1] {\"path\":\"a.rs\"}"
        );
    }
}
