//! One context message (pi's JSON, as `query::context` returns it) rendered for a model to
//! read: the text of each block, tool calls with their arguments, tool results, with long tool
//! output, thinking and images elided behind markers that say what was left out.

use serde_json::Value;

use crate::pi::shown::{read, Block, Content, Shown};

/// A message's role and its text for a model; `max` bounds each tool output, thinking block and
/// tool-call argument list (0: nothing is elided).
pub fn render(raw: &str, max: usize) -> (String, String) {
    // Parsed as pi parses it: a lone surrogate (a cut emoji) does not make it unreadable.
    let Ok(v) = crate::pi::line::parse_json(raw) else {
        return ("unknown".into(), elide(raw, max, "message"));
    };
    let role = v.get("role").and_then(Value::as_str).unwrap_or("unknown");
    let text = match read(&v) {
        Shown::Said { content, .. } => blocks(&content, max),
        Shown::ToolResult {
            tool,
            call_id,
            failed,
            content,
        } => format!(
            "[result of {} id={call_id}{}]\n{}",
            tool.unwrap_or("?"),
            if failed { " (error)" } else { "" },
            elide(&blocks(&content, 0), max, "tool output")
        ),
        Shown::Bash {
            command,
            exit,
            output,
        } => format!(
            "[user ran bash, exit code {}]\n$ {command}\n{}",
            exit.map_or("?".into(), Value::to_string),
            elide(output, max, "tool output")
        ),
        Shown::Custom { kind, content } => format!("[{kind}]\n{}", blocks(&content, max)),
        Shown::BranchSummary { from, summary } => {
            format!("[summary of a branch left at {from}]\n{summary}")
        }
        Shown::Compaction {
            tokens_before,
            summary,
        } => format!(
            "[summary of the conversation before a compaction of {} tokens]\n{summary}",
            tokens_before.map_or("?".into(), Value::to_string)
        ),
        Shown::Other(_) => elide(raw, max, "message"),
    };
    (role.to_string(), text)
}

/// A `content` string or array of blocks, one paragraph per block.
fn blocks(content: &Content, max: usize) -> String {
    match content {
        Content::Empty => String::new(),
        Content::Text(s) => (*s).to_string(),
        Content::Blocks(items) => items
            .iter()
            .map(|b| block(b, max))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        Content::Other(other) => other.to_string(),
    }
}

fn block(b: &Block, max: usize) -> String {
    match b {
        Block::Text(t) => (*t).to_string(),
        Block::Thinking("") => String::new(),
        Block::Thinking(t) => format!("[thinking]\n{}", elide(t, max, "thinking")),
        Block::ToolCall { name, id, args } => {
            let args = args.map_or(String::new(), Value::to_string);
            format!(
                "[tool call {name} id={id}] {}",
                elide(&args, max, "argument")
            )
        }
        Block::Image { mime, data } => format!(
            "[image {} elided: {} characters of base64]",
            mime.unwrap_or("of unknown type"),
            data.len()
        ),
        Block::Other(b) => elide(&b.to_string(), max, "block"),
    }
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
