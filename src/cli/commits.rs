//! `pidx commits`: the sessions behind each git commit's added lines
//! (`query::files::commits`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::files::when;
use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::query::files::commits::{commits, CommitsOptions};
use crate::term::one_line;

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

pub fn run(env: &Env, args: &CommitsArgs, out: &mut Out) -> Result<Found> {
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
