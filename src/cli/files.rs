//! `pidx files`: which sessions touched a file (`query::files::list`), and the time and
//! session columns `blame` and `commits` print too.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::RangeArgs;
use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::query::files::list::{top_files, touches, FilesOptions};
use crate::query::files::Who;
use crate::term::one_line;

#[derive(Args, Debug)]
pub struct FilesArgs {
    /// A file, a folder (everything under it) or a glob ('src/*.rs'); without it, the files of
    /// this project (--cwd, else the current folder) that sessions changed most.
    pub pattern: Option<String>,
    /// Only these kinds: read, edit, write, list, search, bash (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = ["read", "edit", "write", "list", "search", "bash"])]
    pub kind: Vec<String>,
    /// Only sessions started in this folder or below.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub range: RangeArgs,
    /// At most this many rows.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
}

/// A time as `files`, `blame` and `commits` print it (UTC, to the minute).
pub(super) fn when(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "-".repeat(16),
            |t| t.format("%Y-%m-%d %H:%M").to_string(),
        )
}

/// A line of a file, neutralised (`term::block`) with its indentation kept, unlike
/// `one_line`'s collapsed spaces.
pub(super) fn code_line(s: &str) -> String {
    crate::term::block(s).replace(['\n', '\r'], " ")
}

/// A session's handle and name.
fn session(w: &Who) -> String {
    let name = w
        .name
        .as_deref()
        .map(|n| format!("  {}", one_line(n)))
        .unwrap_or_default();
    format!("{}{name}", one_line(&w.session))
}

pub fn run(env: &Env, args: &FilesArgs, out: &mut Out) -> Result<Found> {
    let (since_ms, until_ms) = args.range.bounds(chrono::Utc::now().timestamp_millis())?;
    let (store, _) = env.open_fresh()?;
    let mut opts = FilesOptions {
        pattern: args.pattern.clone(),
        kinds: args.kind.clone(),
        since_ms,
        until_ms,
        cwd: args.cwd.as_ref().map(|c| c.to_string_lossy().into_owned()),
        limit: args.limit,
        diffs: true,
    };
    if opts.pattern.is_none() {
        opts.cwd.get_or_insert_with(|| ".".into());
        let top = top_files(&store.conn, &opts)?;
        if env.global.json {
            out.json(&top)?;
        } else {
            let lines = top.iter().map(|t| {
                format!(
                    "{:>5} changes  {:>3} sessions  {}  {}",
                    t.changes,
                    t.sessions,
                    when(t.last_ms),
                    one_line(&t.path)
                )
            });
            out.lines(lines)?;
        }
        if top.is_empty() {
            crate::term::say(
                "pidx: no session changed a file here (`pidx files PATH` looks elsewhere)",
            );
        }
        return Ok(!top.is_empty());
    }
    let rows = touches(&store.conn, &opts)?;
    if env.global.json {
        out.json(&rows)?;
    } else {
        let mut lines = Vec::new();
        for r in &rows {
            let status = match r.status.as_deref() {
                Some("error") => "  FAILED",
                None => "  (no result)",
                _ => "",
            };
            let counts = match (r.added, r.removed) {
                (Some(a), Some(d)) => format!("  +{a} -{d}"),
                (Some(a), None) => format!("  +{a}"),
                _ => String::new(),
            };
            lines.push(format!(
                "{}  {:<6} {}  {}{counts}{status}",
                when(r.by.ts_ms),
                r.by.kind,
                one_line(&r.path),
                session(&r.by),
            ));
            lines.extend(r.diff.iter().map(|d| format!("      {}", code_line(d))));
        }
        out.lines(lines)?;
    }
    if rows.is_empty() {
        crate::term::say("pidx: no session touched a matching file");
    }
    Ok(!rows.is_empty())
}
