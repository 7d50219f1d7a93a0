//! The shapes of the tools' answers, declared as each tool's `outputSchema` (their JSON
//! Schemas come from schemars, as the arguments' do). The answers themselves are built in
//! `answer` and `context`; tests/mcp/client_check.py validates every answer it gets against
//! these. Rows that are another command's `--json` row (a session, a hit, a stats group, an
//! SQL row) are declared as objects: their fields are that command's.

#![allow(dead_code)] // Only their schemas are used.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// An object whose fields are another command's `--json` row.
type Row = Map<String, Value>;

/// The end of every paged answer.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Paging {
    /// True when this is not everything: more pages follow, or long fields were cut.
    truncated: bool,
    /// Pass it as `cursor` to get the next page; null on the last one.
    next_cursor: Option<String>,
    /// What was cut or left out and how to get it; a note on freshness comes first.
    notes: Vec<String>,
}

/// `search_sessions`: hits grouped by session, best first.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchOut {
    hit_count: usize,
    total_hits: usize,
    sessions: Vec<HitGroup>,
    #[serde(flatten)]
    paging: Paging,
}

/// One session's hits.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HitGroup {
    path: String,
    /// The header's id (any JSON value pi wrote).
    session_id: Value,
    cwd: Value,
    session_name: Option<String>,
    /// `pidx search --json` rows without the four fields above: entryId, kind, role, time,
    /// snippet, score, and `by`: how the hit was found ("words", "meaning": none of the
    /// query's words, similar in meaning above the floor, with its `similarity`; or "both").
    hits: Vec<Row>,
}

/// `list_sessions`: pi's SessionInfo rows, as `pidx list --json`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListOut {
    /// The project folder listed; null for every project.
    project: Option<String>,
    sessions: Vec<Row>,
    #[serde(flatten)]
    paging: Paging,
}

/// `get_session`: `pidx show --json`'s object, with the two fields below added.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOut {
    path: String,
    truncated: bool,
    notes: Vec<String>,
}

/// `get_context`: a page of the messages pi would send to the model.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextOut {
    path: String,
    /// The leaf entry the context was built at.
    leaf: Option<String>,
    /// `{provider, modelId}` in effect there.
    model: Option<Row>,
    thinking_level: Option<String>,
    messages: Vec<Message>,
    #[serde(flatten)]
    paging: Paging,
}

/// One message, or a piece of one longer than a page.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    entry_id: Option<String>,
    role: String,
    /// Readable text, or pi's message object as JSON text (`format: json`).
    text: String,
    /// For a piece: the characters it holds (`from`..`to` of `total`).
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<usize>,
}

/// `get_tree`: a page of the tree's segments.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeOut {
    path: String,
    /// Entries in the session.
    entries: usize,
    /// The current leaf's entry id.
    leaf: Option<String>,
    segment_count: usize,
    segments: Vec<Segment>,
    #[serde(flatten)]
    paging: Paging,
}

/// A run of entries without a fork.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    depth: usize,
    first_id: Option<String>,
    last_id: Option<String>,
    entries: usize,
    preview: Option<String>,
    /// `{id, label}` of each labelled entry.
    labels: Vec<Row>,
    forks: usize,
    current: bool,
}

/// `usage_stats`: `pidx stats --json` rows.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatsOut {
    groups: usize,
    rows: Vec<Row>,
    #[serde(flatten)]
    paging: Paging,
}

/// `sql_query`: rows as objects keyed by column.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SqlOut {
    columns: Vec<String>,
    rows: Vec<Row>,
    #[serde(flatten)]
    paging: Paging,
}

/// `file_history`: `pidx files --json` rows, newest first.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileHistoryOut {
    path: String,
    touches: Vec<Row>,
    #[serde(flatten)]
    paging: Paging,
}

/// `blame`: `pidx blame --json` lines (`by` null when no session produced the line).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlameOut {
    path: String,
    /// Successful edits and writes of the file the index holds.
    steps: usize,
    line_count: usize,
    lines: Vec<Row>,
    #[serde(flatten)]
    paging: Paging,
}
