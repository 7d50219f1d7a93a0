//! The tools' arguments, as a model sends them (their JSON Schemas come from schemars).

use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `search_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to find: words (ranked, prefix*, "a phrase", -excluded, OR), or exact text with
    /// `literal`, or a regular expression with `regex`.
    pub query: String,
    /// Only sessions of this project folder (absolute path); every project when absent.
    pub cwd: Option<String>,
    /// Only entries at or after this time: 2026-11-01, 2026-11-01T12:00:00Z, or an age like 12h, 7d, 2w.
    pub since: Option<String>,
    /// Only entries before this time (a plain date includes that whole day).
    pub until: Option<String>,
    /// Only these kinds of text: user, assistant, thinking, tool, bash, custom, summary, name.
    pub kinds: Option<Vec<String>>,
    /// Only sessions that used a model whose id contains this.
    pub model: Option<String>,
    /// Only this session (a file path, a full session id or a unique id prefix).
    pub session: Option<String>,
    /// Only entries on each session's current branch (what pi would send to the model).
    #[serde(default)]
    pub branch_only: bool,
    /// The exact text, case-sensitive, character for character.
    #[serde(default)]
    pub literal: bool,
    /// Rank by meaning only (what the sessions were about, in other words). Without it, when
    /// the index holds embeddings, words and meaning are fused; false with `literal`/`regex`.
    #[serde(default)]
    pub meaning: bool,
    /// `query` is a regular expression.
    #[serde(default)]
    pub regex: bool,
    /// How many of the best hits to return (1-500, default 20); pages of a long answer keep it.
    pub limit: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `list_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// The project folder (absolute path) whose sessions to list; default: the folder the server runs in.
    pub cwd: Option<String>,
    /// Every project instead of one.
    #[serde(default)]
    pub all: bool,
    /// Filter and order as pi's /resume picker does for typed text: words matched fuzzily
    /// against name, id, messages and folder; "phrases"; re:REGEX.
    pub query: Option<String>,
    /// Sessions per page (1-500, default 50).
    pub limit: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `get_session` and `get_tree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `get_tree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// Segments per page (1-2000, default 200).
    pub limit: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// How `get_context` gives each message.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Readable text: tool calls and results marked, long tool output and images elided.
    #[default]
    Text,
    /// pi's message object exactly, as JSON text.
    Json,
}

/// Arguments of `get_context`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// The entry id to build the context at (a branch's last entry); default: the current leaf.
    pub leaf: Option<String>,
    /// Start with the latest messages and page backwards.
    #[serde(default)]
    pub from_end: bool,
    /// `text` (default) or `json` (pi's message objects exactly).
    #[serde(default)]
    pub format: Format,
    /// In text, cut each tool output, thinking block and argument list to about this many
    /// characters (default 2000; 0 keeps everything).
    pub tool_output_chars: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `usage_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsArgs {
    /// Group by day, week, month, project, model, provider, session, tool, agent or channel (over the team server also source); several nest.
    pub by: Option<Vec<String>>,
    /// Only activity at or after this time (2026-11-01, an ISO date-time, or 12h / 7d / 2w ago).
    pub since: Option<String>,
    /// Only activity before this time.
    pub until: Option<String>,
    /// Only this project folder (absolute path).
    pub cwd: Option<String>,
    /// Time zone for day/week/month: local (default), UTC, Europe/Paris, +02:00.
    pub tz: Option<String>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `sql_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlArgs {
    /// One read-only SELECT over the views v_sessions, v_entries, v_messages, v_usage, v_tool_calls, v_file_touches.
    pub query: String,
    /// Rows per page (1-1000, default 100).
    pub max_rows: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}
