//! `pidx files`, `pidx blame` and `pidx commits`: file history from the sessions' tool calls
//! (`query::files`), as lines for a terminal or JSON.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::RangeArgs;
use super::env::Env;
use super::output::Out;
use super::Found;
use crate::query::files::blame::{blame, BlameOptions};
use crate::query::files::commits::{commits, CommitsOptions};
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

#[derive(Args, Debug)]
pub struct BlameArgs {
    /// The file, as it is on disk now.
    pub file: PathBuf,
    /// Only lines START to END (1-based, inclusive), as `git blame -L`.
    #[arg(short = 'L', value_name = "START,END", value_parser = parse_range)]
    pub lines: Option<(usize, usize)>,
    /// Also the git commit that last changed each line.
    #[arg(long)]
    pub git: bool,
}

#[derive(Args, Debug)]
pub struct CommitsArgs {
    /// Commits A..B, or a revision and its ancestors (default HEAD).
    #[arg(default_value = "HEAD")]
    pub range: String,
    /// A folder inside the repository (default the current folder).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// At most this many commits, newest first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?}: give START,END (1-based line numbers, START <= END)");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if a == 0 || b < a {
        return Err(bad());
    }
    Ok((a, b))
}

fn when(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "-".repeat(16),
            |t| t.format("%Y-%m-%d %H:%M").to_string(),
        )
}

fn session(w: &Who) -> String {
    let name = w
        .name
        .as_deref()
        .map(|n| format!("  {}", one_line(n)))
        .unwrap_or_default();
    format!("{}{name}", one_line(&w.session))
}

pub fn run_files(env: &Env, args: &FilesArgs, out: &mut Out) -> Result<Found> {
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
            lines.extend(r.diff.iter().map(|d| format!("      {}", one_line(d))));
        }
        out.lines(lines)?;
    }
    if rows.is_empty() {
        crate::term::say("pidx: no session touched a matching file");
    }
    Ok(!rows.is_empty())
}

pub fn run_blame(env: &Env, args: &BlameArgs, out: &mut Out) -> Result<Found> {
    let (store, _) = env.open_fresh()?;
    let opts = BlameOptions {
        range: args.lines,
        git: args.git,
    };
    let b = blame(&store.conn, &args.file, &opts)?;
    let found = b.lines.iter().any(|l| l.by.is_some());
    if env.global.json {
        out.json(&b)?;
        return Ok(found);
    }
    let width = b.lines.last().map_or(1, |l| l.line.to_string().len());
    let handle = b
        .lines
        .iter()
        .filter_map(|l| l.by.as_ref().map(|w| w.session.len()))
        .max()
        .unwrap_or(8);
    let lines = b.lines.iter().map(|l| {
        let (who, t) = match &l.by {
            Some(w) => (one_line(&w.session), when(w.ts_ms)),
            None => ("-".into(), " ".repeat(16)),
        };
        let commit = match (&l.commit, args.git) {
            (Some(c), true) => format!("{} ", &c[..c.len().min(8)]),
            (None, true) => "-------- ".into(),
            _ => String::new(),
        };
        format!(
            "{commit}{who:<handle$} {t} {:>width$}) {}",
            l.line,
            one_line(&l.text)
        )
    });
    out.lines(lines)?;
    if b.steps == 0 {
        crate::term::say(&format!(
            "pidx: no session's successful edit or write of {} is indexed",
            b.path
        ));
    }
    Ok(found)
}

pub fn run_commits(env: &Env, args: &CommitsArgs, out: &mut Out) -> Result<Found> {
    let (store, _) = env.open_fresh()?;
    let opts = CommitsOptions {
        repo: args.repo.clone(),
        range: args.range.clone(),
        limit: args.limit,
    };
    let rows = commits(&store.conn, &opts)?;
    let found = rows.iter().any(|r| !r.sessions.is_empty());
    if env.global.json {
        out.json(&rows)?;
        return Ok(found);
    }
    let mut lines = Vec::new();
    for r in &rows {
        lines.push(format!(
            "{} {}  +{}  {}",
            &r.commit[..r.commit.len().min(10)],
            when(Some(r.time_ms)),
            r.added,
            one_line(&r.summary)
        ));
        for p in &r.sessions {
            let name = p
                .name
                .as_deref()
                .map(|n| format!("  {}", one_line(n)))
                .unwrap_or_default();
            lines.push(format!(
                "    {:>5.1}%  {:>4} lines  {}{name}",
                p.share * 100.0,
                p.lines,
                one_line(&p.session)
            ));
        }
    }
    out.lines(lines)?;
    Ok(found)
}
