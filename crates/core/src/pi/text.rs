//! The text of entries, each way for its own use: `extract_text` is pi's `extractTextContent`
//! (listings: first message, allMessagesText, the picker's search text); `texts` is what
//! full-text search indexes, by kind. What a reader is shown of a message is `pi::shown`'s.
//!
//! What full-text search sees of an entry: its text split by kind (what the user typed, what
//! the assistant said or thought, tool calls and results, bash runs, custom messages, summaries,
//! session names). Base64 images and system prompts are never indexed. Used at ingest (to fill
//! the index) and at query time (to check literal matches and cut snippets from the JSONL line).

use serde_json::{Map, Value};

use crate::pi::huge;
use crate::pi::js;
use crate::pi::line::Line;

/// The kinds of indexed text; the discriminant is stored in the low 3 bits of the FTS rowid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TextKind {
    User = 0,
    Assistant = 1,
    Thinking = 2,
    Tool = 3,
    Bash = 4,
    Custom = 5,
    Summary = 6,
    Name = 7,
}

impl TextKind {
    pub const ALL: [TextKind; 8] = [
        TextKind::User,
        TextKind::Assistant,
        TextKind::Thinking,
        TextKind::Tool,
        TextKind::Bash,
        TextKind::Custom,
        TextKind::Summary,
        TextKind::Name,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TextKind::User => "user",
            TextKind::Assistant => "assistant",
            TextKind::Thinking => "thinking",
            TextKind::Tool => "tool",
            TextKind::Bash => "bash",
            TextKind::Custom => "custom",
            TextKind::Summary => "summary",
            TextKind::Name => "name",
        }
    }

    pub fn parse(s: &str) -> Option<TextKind> {
        TextKind::ALL.into_iter().find(|k| k.name() == s)
    }

    pub fn from_bits(bits: i64) -> TextKind {
        TextKind::ALL[(bits & 7) as usize]
    }
}

/// The searchable texts of one entry (a parsed JSONL object), at most one per kind.
pub fn texts(obj: &Map<String, Value>) -> Vec<(TextKind, String)> {
    let mut out = Texts::default();
    match obj.get("type").and_then(Value::as_str) {
        Some("message") => {
            if let Some(Value::Object(m)) = obj.get("message") {
                message_texts(m, &mut out);
            }
        }
        Some("custom_message") => out.content(TextKind::Custom, obj.get("content")),
        Some("compaction" | "branch_summary") => out.string(TextKind::Summary, obj.get("summary")),
        Some("session_info") => out.string(TextKind::Name, obj.get("name")),
        _ => {}
    }
    out.finish()
}

/// The text of one kind of an entry, re-extracted from its JSONL line as ingest extracted it:
/// the same lenient parse (`line::parse_line`, image data skipped), and a huge text split out
/// of the line instead of copied (`pi::huge`).
pub fn text_of(line: Vec<u8>, kind: TextKind) -> Option<String> {
    let (value, huge) = huge::parse_owned(line);
    let Line::Value(Value::Object(obj)) = value else {
        return None;
    };
    let text = texts(&obj).into_iter().find(|(k, _)| *k == kind)?.1;
    drop(obj);
    match huge {
        Some(h) => Some(h.into_expanded(&text)),
        None => Some(text),
    }
}

fn message_texts(m: &Map<String, Value>, out: &mut Texts) {
    match m.get("role").and_then(Value::as_str) {
        Some("user") => out.content(TextKind::User, m.get("content")),
        Some("assistant") => {
            for block in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => out.string(TextKind::Assistant, block.get("text")),
                    Some("thinking") => out.string(TextKind::Thinking, block.get("thinking")),
                    Some("toolCall") => {
                        out.string(TextKind::Tool, block.get("name"));
                        if let Some(args) = block.get("arguments") {
                            match args {
                                Value::String(_) => out.string(TextKind::Tool, Some(args)),
                                other => out.push(TextKind::Tool, &other.to_string()),
                            }
                        }
                    }
                    _ => {}
                }
            }
            out.string(TextKind::Assistant, m.get("errorMessage"));
        }
        Some("toolResult") => {
            out.string(TextKind::Tool, m.get("toolName"));
            out.content(TextKind::Tool, m.get("content"));
        }
        Some("bashExecution") => {
            out.string(TextKind::Bash, m.get("command"));
            out.string(TextKind::Bash, m.get("output"));
        }
        Some("custom" | "hookMessage") => out.content(TextKind::Custom, m.get("content")),
        _ => {}
    }
}

/// Texts gathered per kind, joined by newlines in the order they appear.
#[derive(Default)]
struct Texts {
    parts: Vec<(TextKind, String)>,
}

impl Texts {
    fn push(&mut self, kind: TextKind, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.parts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, t)) => {
                t.push('\n');
                t.push_str(text);
            }
            None => self.parts.push((kind, text.to_string())),
        }
    }

    fn string(&mut self, kind: TextKind, v: Option<&Value>) {
        if let Some(Value::String(s)) = v {
            self.push(kind, s);
        }
    }

    /// A message `content`: a string, or the `text` of its text blocks (images are skipped).
    fn content(&mut self, kind: TextKind, v: Option<&Value>) {
        match v {
            Some(Value::String(s)) => self.push(kind, s),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("text") {
                        self.string(kind, b.get("text"));
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Vec<(TextKind, String)> {
        self.parts.sort_by_key(|(k, _)| *k);
        self.parts
    }
}

/// pi's `extractTextContent`: a string as is, or the `text` of text blocks joined by one space.
/// `Err` where pi throws (content that is neither, or a null block).
pub fn extract_text(content: &Value) -> Result<String, String> {
    match content {
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => {
            let mut parts = Vec::new();
            for block in blocks {
                if block.is_null() {
                    return Err("a content block is null".into());
                }
                if block.get("type").and_then(Value::as_str) == Some("text") {
                    parts.push(block.get("text").map(js::join_string).unwrap_or_default());
                }
            }
            if parts.len() == 1 {
                // One block (nearly always): its text, without a second copy by `join`.
                return Ok(parts.pop().unwrap_or_default());
            }
            Ok(parts.join(" "))
        }
        other => Err(format!("message content is {}", json_kind(other))),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Vec<(TextKind, String)> {
        let Value::Object(obj) = serde_json::from_str(line).unwrap() else {
            panic!("not an object")
        };
        texts(&obj)
    }

    #[test]
    fn assistant_text_thinking_and_tool_calls_are_separate_kinds() {
        let t = of(
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"done"},{"type":"toolCall","id":"1","name":"bash","arguments":{"command":"ls src/main.rs"}}]}}"#,
        );
        assert_eq!(
            t,
            vec![
                (TextKind::Assistant, "done".to_string()),
                (TextKind::Thinking, "hmm".to_string()),
                (
                    TextKind::Tool,
                    "bash\n{\"command\":\"ls src/main.rs\"}".to_string()
                ),
            ]
        );
    }

    #[test]
    fn images_are_never_indexed() {
        let t = of(
            r#"{"type":"message","message":{"role":"user","content":[{"type":"image","data":"iVBORw0KGgoAAAANSUhEUg","mimeType":"image/png"},{"type":"text","text":"look"}]}}"#,
        );
        assert_eq!(t, vec![(TextKind::User, "look".to_string())]);
    }

    #[test]
    fn summaries_names_bash_and_custom() {
        assert_eq!(
            of(r#"{"type":"compaction","summary":"s1"}"#),
            vec![(TextKind::Summary, "s1".into())]
        );
        assert_eq!(
            of(r#"{"type":"session_info","name":"n"}"#),
            vec![(TextKind::Name, "n".into())]
        );
        assert_eq!(
            of(
                r#"{"type":"message","message":{"role":"bashExecution","command":"make","output":"ok","exitCode":0}}"#
            ),
            vec![(TextKind::Bash, "make\nok".into())]
        );
        assert_eq!(
            of(r#"{"type":"custom_message","customType":"x","content":"c"}"#),
            vec![(TextKind::Custom, "c".into())]
        );
    }
}
