//! `pidx sync`: bring the index up to date (or rebuild it) and say what changed.

use anyhow::Result;
use clap::Args;

use super::env::{report_errors, Env};
use super::output::Out;
use super::Found;
use crate::ingest::sync::{sync, SyncOptions};

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// Delete the index and build it again from the session files.
    #[arg(long)]
    pub rebuild: bool,
    /// List every skipped line as `path:line: reason`.
    #[arg(long, short)]
    pub verbose: bool,
}

pub fn run(env: &Env, args: &SyncArgs, out: &mut Out) -> Result<Found> {
    let (lock, mut store) = env.open_for_writing("sync", args.rebuild)?;
    let report = sync(&mut store, &env.roots, SyncOptions { progress: true })
        .map_err(|e| e.for_writing(&env.db))?;
    drop(lock);
    if args.verbose {
        for b in &report.bad {
            eprintln!("{}:{}: {}", b.path.display(), b.line, b.reason);
        }
    }
    report_errors(&report);
    if env.global.json {
        let j = serde_json::json!({
            "new": report.new, "changed": report.changed, "removed": report.removed,
            "unchanged": report.unchanged, "entries": report.entries, "bytes": report.bytes,
            "badLines": report.bad.len(), "errors": report.errors, "warnings": report.warnings,
            "seconds": report.elapsed.as_secs_f64(),
        });
        out.line(&j.to_string())?;
    } else {
        let hint = if !report.bad.is_empty() && !args.verbose {
            " (--verbose lists them)"
        } else {
            ""
        };
        out.line(&format!("{}{hint}", report.summary()))?;
    }
    Ok(true)
}
