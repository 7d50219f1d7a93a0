//! `file_history` and `blame`: `pidx files` and `pidx blame` for agents, each answer a page
//! of rows within the call's character budget.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::answer::{finish, in_range, sentence, Answer, Call};
use super::page::{budget, fill_rows, row_offset};
use crate::query::files::blame::{blame as blame_file, BlameOptions};
use crate::query::files::list::{touches, FilesOptions};

/// Arguments of `file_history`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileHistoryArgs {
    /// A file, a folder (everything under it) or a glob; absolute, or relative to the folder
    /// this server runs in.
    pub path: String,
    /// Only these kinds: read, edit, write, list, search, bash.
    pub kinds: Option<Vec<String>>,
    /// Only touches at or after this time (2026-11-01, an ISO date-time, or 12h / 7d / 2w ago).
    pub since: Option<String>,
    /// Only touches before this time.
    pub until: Option<String>,
    /// Touches per page (1-500, default 50).
    pub limit: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// Arguments of `blame`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlameArgs {
    /// The file as it is on disk now; absolute, or relative to the folder this server runs in.
    pub path: String,
    /// First line (1-based, default 1).
    pub start: Option<usize>,
    /// Last line (default the end of the file).
    pub end: Option<usize>,
    /// Character budget of the answer (1000-200000, default 20000).
    pub max_chars: Option<usize>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

pub const FILE_HISTORY: &str = "Which pi sessions touched a file (or the files under a folder, or matching a glob), newest first: each row is one tool call with its time, kind (read, edit, write, list, search, bash), tool, status (ok, error, or null while no result was written), the session (handle, id, name) and entry id, and for edits and writes the lines added and removed with a compact diff. Use it to find the conversation behind a change, then get_context with the session and the entryId as leaf.";
pub const BLAME: &str = "For each line of a file as it is on disk now, the pi session whose successful edit or write last produced it (session handle, id, name, entry id, time, edit or write), or null when no session did (a person did, or the line predates the sessions). Lines come in pages (start/end pick a range). Use get_context with the session and entryId as leaf to read why a line was written.";

pub fn file_history(c: &Call, a: FileHistoryArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let limit = in_range("limit", a.limit, 50, 500)?;
    let offset = row_offset(a.cursor.as_deref(), "file_history")?;
    let now = chrono::Utc::now().timestamp_millis();
    let (since_ms, until_ms) =
        crate::app::dates::date_range(a.since.as_deref(), a.until.as_deref(), now)
            .map_err(sentence)?;
    let opts = FilesOptions {
        pattern: Some(a.path.clone()),
        kinds: a.kinds.unwrap_or_default(),
        since_ms,
        until_ms,
        cwd: None,
        limit: offset + limit + 1,
        diffs: true,
    };
    let (conn, _) = c.local("file_history", "the local index's file touches")?;
    let rows = touches(conn, &opts).map_err(sentence)?;
    let more = rows.len() > offset + limit;
    let values = rows
        .iter()
        .skip(offset)
        .take(limit)
        .map(|r| serde_json::to_value(r).unwrap_or(Value::Null));
    let page = fill_rows(values, budget);
    let next = (more || page.left).then(|| format!("file_history:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("path".into(), a.path.into());
    body.insert("touches".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}

pub fn blame(c: &Call, a: BlameArgs) -> Answer {
    let budget = budget(a.max_chars)?;
    let offset = row_offset(a.cursor.as_deref(), "blame")?;
    let (conn, _) = c.local(
        "blame",
        "files on this machine's disk and its index's edits",
    )?;
    let b = blame_file(conn, Path::new(&a.path), &BlameOptions::default()).map_err(sentence)?;
    let start = a.start.unwrap_or(1).max(1);
    let end = a.end.unwrap_or(usize::MAX);
    let lines: Vec<_> = b
        .lines
        .iter()
        .filter(|l| l.line >= start && l.line <= end)
        .collect();
    let values = lines
        .iter()
        .skip(offset)
        .map(|l| serde_json::to_value(l).unwrap_or(Value::Null));
    let page = fill_rows(values, budget);
    let next = page
        .left
        .then(|| format!("blame:{}", offset + page.rows.len()));
    let mut body = Map::new();
    body.insert("path".into(), b.path.into());
    body.insert("steps".into(), b.steps.into());
    body.insert("lineCount".into(), lines.len().into());
    body.insert("lines".into(), page.rows.into());
    Ok(finish(body, next, page.cut_strings))
}
