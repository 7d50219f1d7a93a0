//! A context message (pi's JSON, as `query::context` returns it) read into what a reader is
//! shown of it: the one reading of pi's message shapes (roles, content blocks, tool calls and
//! results, bash runs, summaries) that the terminal (`present::render`), agents
//! (`mcp::message`) and the browser (`web::message`) each only lay out in their own medium.

use serde_json::Value;

/// What a message says, by its role.
#[derive(Debug)]
pub enum Shown<'a> {
    /// A `user`, `assistant` or `system` message: its content; an assistant's provider and model
    /// and the error it stopped with.
    Said {
        role: &'a str,
        content: Content<'a>,
        model: Option<(&'a str, &'a str)>,
        error: Option<&'a str>,
    },
    /// A tool's result (`failed`: pi's `isError`); `tool` as written (each medium says a
    /// missing name its own way).
    ToolResult {
        tool: Option<&'a str>,
        call_id: &'a str,
        failed: bool,
        content: Content<'a>,
    },
    /// A command the user ran with `!` (its exit code as written, when there is one).
    Bash {
        command: &'a str,
        exit: Option<&'a Value>,
        output: &'a str,
    },
    /// An extension's message.
    Custom { kind: &'a str, content: Content<'a> },
    /// The summary of a branch left at `from`.
    BranchSummary { from: &'a str, summary: &'a str },
    /// The summary of what a compaction left out (`tokens_before` as written).
    Compaction {
        tokens_before: Option<&'a Value>,
        summary: &'a str,
    },
    /// A role pidx does not know, shown as its JSON.
    Other(&'a Value),
}

/// A message's `content`: a string, or blocks (every element of the array, in order, so a
/// block's position is its index in the JSON).
#[derive(Debug)]
pub enum Content<'a> {
    Empty,
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
    /// Neither a string nor an array, shown as its JSON.
    Other(&'a Value),
}

/// One content block.
#[derive(Debug)]
pub enum Block<'a> {
    Text(&'a str),
    Thinking(&'a str),
    /// A tool call; `args` as written (`None`: no `arguments` member).
    ToolCall {
        name: &'a str,
        id: &'a str,
        args: Option<&'a Value>,
    },
    /// An image: its claimed type and its base64 data.
    Image {
        mime: Option<&'a str>,
        data: &'a str,
    },
    /// A block of a type pidx does not know, shown as its JSON.
    Other(&'a Value),
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Reads a context message.
pub fn read(v: &Value) -> Shown<'_> {
    let s = |k: &str| str_of(v, k).unwrap_or_default();
    let content = || Content::of(v.get("content"));
    match s("role") {
        role @ ("user" | "assistant" | "system") => Shown::Said {
            role,
            content: content(),
            model: str_of(v, "model").map(|m| (s("provider"), m)),
            error: str_of(v, "errorMessage"),
        },
        "toolResult" => Shown::ToolResult {
            tool: str_of(v, "toolName"),
            call_id: str_of(v, "toolCallId").unwrap_or("?"),
            failed: v.get("isError").and_then(Value::as_bool) == Some(true),
            content: content(),
        },
        "bashExecution" => Shown::Bash {
            command: s("command"),
            exit: v.get("exitCode"),
            output: s("output"),
        },
        "custom" => Shown::Custom {
            kind: str_of(v, "customType").unwrap_or("custom"),
            content: content(),
        },
        "branchSummary" => Shown::BranchSummary {
            from: str_of(v, "fromId").unwrap_or("?"),
            summary: s("summary"),
        },
        "compactionSummary" => Shown::Compaction {
            tokens_before: v.get("tokensBefore"),
            summary: s("summary"),
        },
        _ => Shown::Other(v),
    }
}

impl<'a> Content<'a> {
    /// Reads a `content` value.
    pub fn of(content: Option<&'a Value>) -> Content<'a> {
        match content {
            None | Some(Value::Null) => Content::Empty,
            Some(Value::String(s)) => Content::Text(s),
            Some(Value::Array(items)) => Content::Blocks(items.iter().map(Block::of).collect()),
            Some(other) => Content::Other(other),
        }
    }

    /// The text of its text blocks, joined as they come (a tool's output).
    pub fn text(&self) -> String {
        match self {
            Content::Text(s) => (*s).to_string(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text(t) => Some(*t),
                    _ => None,
                })
                .collect(),
            Content::Empty | Content::Other(_) => String::new(),
        }
    }
}

impl<'a> Block<'a> {
    fn of(b: &'a Value) -> Block<'a> {
        let s = |k: &str| str_of(b, k).unwrap_or_default();
        match str_of(b, "type") {
            Some("text") => Block::Text(s("text")),
            Some("thinking") => Block::Thinking(s("thinking")),
            Some("toolCall") => Block::ToolCall {
                name: str_of(b, "name").unwrap_or("?"),
                id: str_of(b, "id").unwrap_or("?"),
                args: b.get("arguments"),
            },
            Some("image") => Block::Image {
                mime: str_of(b, "mimeType"),
                data: s("data"),
            },
            _ => Block::Other(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_role_and_block_is_read() {
        let v = json!({"role": "assistant", "provider": "p", "model": "m", "content": [
            {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "a"},
            {"type": "toolCall", "id": "1", "name": "bash", "arguments": {"command": "ls"}},
            {"type": "image", "mimeType": "image/png", "data": "AA=="}, {"type": "new"}]});
        let Shown::Said {
            role,
            content: Content::Blocks(b),
            model,
            error,
        } = read(&v)
        else {
            panic!("not said");
        };
        assert_eq!((role, model, error), ("assistant", Some(("p", "m")), None));
        assert!(matches!(b[0], Block::Thinking("hmm")));
        assert!(matches!(
            b[2],
            Block::ToolCall {
                name: "bash",
                id: "1",
                ..
            }
        ));
        assert!(matches!(
            b[3],
            Block::Image {
                mime: Some("image/png"),
                data: "AA=="
            }
        ));
        assert!(matches!(b[4], Block::Other(_)));
        let r = json!({"role": "toolResult", "toolName": "read", "toolCallId": "1", "isError": true,
            "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]});
        let Shown::ToolResult {
            tool,
            failed,
            content,
            ..
        } = read(&r)
        else {
            panic!("not a result");
        };
        assert_eq!(
            (tool, failed, content.text().as_str()),
            (Some("read"), true, "xy")
        );
        assert!(matches!(read(&json!({"role": "x"})), Shown::Other(_)));
        assert!(matches!(
            read(&json!({"role": "bashExecution", "command": "make", "exitCode": 2})),
            Shown::Bash {
                command: "make",
                exit: Some(_),
                output: ""
            }
        ));
    }
}
