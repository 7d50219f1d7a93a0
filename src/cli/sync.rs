//! `pidx sync`: bring the index up to date (or rebuild it) and say what changed.

use anyhow::Result;
use clap::Args;

use super::Found;
use crate::app::env::{report_errors, Env, ForSync};
use crate::ingest::sync::{sync, SyncOptions, SyncReport};
use crate::present::output::Out;

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// Delete the index and build it again from the session files.
    #[arg(long)]
    pub rebuild: bool,
    /// List every line the index skipped, in every file, as `path:line: reason`.
    #[arg(long, short)]
    pub verbose: bool,
    /// Then read the whole index to check it is sound (SQLite's quick_check: about 3 s per GB).
    #[arg(long)]
    pub check: bool,
    /// Also embed new texts for search by meaning (the config file's `embed = true` does it
    /// at every sync); the model is --embed-model, $PIDX_MODEL, the config's `model`, or
    /// pidx's default (`pidx model distill` / `pidx model fetch`).
    #[arg(long)]
    pub embed: bool,
    /// The static embedding model's folder (a Model2Vec folder).
    #[arg(long, value_name = "DIR")]
    pub embed_model: Option<std::path::PathBuf>,
}

pub fn run(env: &Env, args: &SyncArgs, out: &mut Out) -> Result<Found> {
    let opened = if args.rebuild {
        let (lock, store) = env.open_for_writing("sync", true)?;
        ForSync::Writing(lock, store)
    } else {
        env.open_for_sync()?
    };
    let (report, store, watcher) = match opened {
        ForSync::Writing(lock, mut store) => {
            let report = sync(
                &mut store,
                &env.roots,
                SyncOptions {
                    progress: true,
                    ..SyncOptions::default()
                },
            )
            .map_err(|e| e.for_writing(&env.db))?;
            crate::app::meaning::embed_after_sync(
                &mut store,
                args.embed,
                args.embed_model.as_deref(),
            )?;
            drop(lock);
            (report, store, None)
        }
        ForSync::Watched(holder, store) => (SyncReport::default(), store, Some(holder)),
    };
    if args.verbose {
        let scope = crate::store::Scope::new(&store.conn, &env.roots)?;
        for (path, line, reason) in crate::query::show::bad_lines_in(&store.conn, &scope)? {
            crate::term::say(&format!("{path}:{line}: {reason}"));
        }
    }
    if args.check {
        if let Some(why) = store.quick_check()? {
            anyhow::bail!(
                "index {} is damaged ({why}); run `pidx sync --rebuild` to rebuild it from the session files",
                env.db.display()
            );
        }
        crate::term::say(&format!("pidx: index {} is sound", env.db.display()));
    }
    report_errors(&report);
    if env.global.json {
        let j = serde_json::json!({
            "new": report.new, "changed": report.changed, "removed": report.removed,
            "unchanged": report.unchanged, "entries": report.entries, "bytes": report.bytes,
            "badLines": report.bad.len(), "errors": report.errors, "warnings": report.warnings,
            "seconds": report.elapsed.as_secs_f64(), "watcher": watcher,
            "fullTextAside": report.full_text_aside,
        });
        out.line(&j.to_string())?;
    } else if let Some(holder) = watcher {
        out.line(&format!(
            "a watcher keeps this index fresh ({holder}) and it holds every change on disk; nothing to do"
        ))?;
    } else {
        let hint = if !report.bad.is_empty() && !args.verbose {
            " (`pidx sync --verbose` lists every skipped line, `pidx show SESSION` one file's)"
        } else {
            ""
        };
        out.line(&format!("{}{hint}", report.summary()))?;
    }
    Ok(true)
}
