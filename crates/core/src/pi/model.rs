//! The rows ingest produces and the store persists: one `EntryRow` per session entry and one
//! `SessionState` per file (pi's listing summary plus what incremental ingest must remember).

/// Whether pi's listing would show a file (docs/pi-format.md §5.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Listing {
    /// No JSON value parsed yet: pi drops it (no header), but more lines may come.
    #[default]
    Pending,
    /// A header came first: pi lists it.
    Listed,
    /// pi drops it; the reason says which line made `buildSessionInfo` fail.
    Excluded(String),
}

/// Per-file summary, maintained incrementally as lines arrive in file order.
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    pub listing: Listing,
    /// pi's loader accepts the file: the first value is a header with a string id.
    pub loadable: bool,
    pub version: i64,
    /// The header line as compact JSON.
    pub header: Option<String>,
    pub session_id: Option<String>,
    pub cwd: String,
    pub created_ms: Option<i64>,
    /// `header.timestamp` as a date only when it is a string (pi's `modified` fallback).
    pub header_ts_ms: Option<i64>,
    pub name: Option<String>,
    pub message_count: i64,
    /// Shared, not copied, when the state is handed on with each batch (it can be 100 MB).
    pub first_message: Option<std::sync::Arc<str>>,
    /// The line whose text is the first message when that text is huge (`pi::huge`): then
    /// `first_message` holds only its first `huge::TITLE_CHARS` characters, and the whole
    /// text is that line's entry text in the index.
    pub first_message_line: Option<i64>,
    pub last_activity_ms: Option<i64>,
    /// JSON values parsed so far, the header being value 0 (v1 `firstKeptEntryIndex` counts these).
    pub parsed_values: i64,
    pub entry_count: i64,
    pub leaf_seq: Option<i64>,
    pub leaf_id: Option<String>,
    /// Path facts are unreliable for this file (see `ingest::paths`): walk whole paths.
    pub tangled: bool,
    /// Record no file touches (set by ingest for the benchmark's baseline run only; never
    /// saved).
    pub no_touches: bool,
}

/// One session entry (any line after the header that pi's loader keeps).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryRow {
    pub seq: i64,
    pub line: i64,
    pub offset: i64,
    pub len: i64,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: Option<String>,
    pub role: Option<String>,
    pub ts: Option<String>,
    pub ts_ms: Option<i64>,
    pub first_kept: Option<String>,
    pub target_id: Option<String>,
    pub label: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub response_model: Option<String>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    pub tool_calls: Option<i64>,
    pub is_error: Option<bool>,
    pub text: Option<String>,
    /// A `message` entry whose `message` is missing or null (pi throws building its context).
    pub no_message: bool,
    /// What full-text search indexes of it, by kind.
    pub texts: Vec<(crate::pi::text::TextKind, String)>,
    /// toolResult: the tool's name.
    pub tool_name: Option<String>,
    /// bashExecution: the exit code.
    pub exit_code: Option<i64>,
    /// Assistant: the name of each toolCall block.
    pub tool_uses: Vec<String>,
    /// Assistant: the files its tool calls touched (`pi::touches`).
    pub touches: Vec<crate::pi::touches::Touch>,
    /// toolResult: the `toolCallId` it answers.
    pub call_id: Option<String>,
    /// toolResult of an edit: `details.firstChangedLine`.
    pub first_changed: Option<i64>,
    /// The huge text that `text` and `texts` hold as a token (`pi::huge`).
    pub huge: Option<std::sync::Arc<crate::pi::huge::Huge>>,
}

/// Token and cost figures of one usage object (docs/pi-format.md §2.5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub cost: f64,
}
