//! `pidx watch`: keep the index fresh as pi writes, until Ctrl-C or SIGTERM.

use anyhow::{Context as _, Result};
use clap::Args;

use super::Found;
use crate::app::env::{report_errors, Env};

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Poll every SECS seconds (2 when SECS is left out) instead of using file events
    /// (network mounts, WSL drives).
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "2")]
    pub poll: Option<f64>,
    /// A full stat-only reconcile every SECS seconds, whatever the events say.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    pub reconcile_every: f64,
    /// Also push to this team server (PostgreSQL) after each change, in the background
    /// (batched; retried with back-off while the server is unreachable). `--source` names
    /// this machine there.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
    /// Also embed new texts for search by meaning (the config file's `embed = true` does too).
    #[arg(long)]
    pub embed: bool,
}

pub fn run(env: &Env, args: &WatchArgs) -> Result<Found> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use crate::ingest::watch::{watch, Ended, Notice, WatchOptions};

    let secs = |s: f64, what: &str| -> Result<Duration> {
        if s.is_finite() && s > 0.0 {
            Ok(Duration::from_secs_f64(s))
        } else {
            anyhow::bail!("{what} must be a positive number of seconds")
        }
    };
    let opts = WatchOptions {
        poll: args.poll.map(|p| secs(p, "--poll")).transpose()?,
        reconcile_every: secs(args.reconcile_every, "--reconcile-every")?,
        embed: crate::app::meaning::model_for_watch(args.embed)?,
        ..WatchOptions::default()
    };
    // The handler goes in before the lock is taken: once `status` shows the watcher, a SIGTERM
    // must stop it cleanly, not kill it between the lock and the handler.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C / SIGTERM handler")?;
    let (mut lock, mut store) = env.open_for_writing("watch", false)?;
    let roots: Vec<String> = env
        .roots
        .iter()
        .map(|r| r.path.display().to_string())
        .collect();
    crate::term::say(&format!(
        "pidx: watching {} (index {}); Ctrl-C stops",
        roots.join(", "),
        env.db.display()
    ));
    let pusher = args.push.as_ref().map(|url| pusher(env, url));
    let mut caught_up = false;
    let ended = watch(&mut store, &env.roots, &opts, &stop, |n| match n {
        Notice::Synced(r) => {
            // The first is the reconcile at start: from then on queries trust the index.
            if !caught_up {
                lock.caught_up();
                caught_up = true;
            }
            crate::term::say(&format!("pidx: {}", r.summary()));
            report_errors(r);
            if let Some(p) = &pusher {
                p.poke();
            }
        }
        Notice::Failed(e, retry) => crate::term::say(&format!(
            "pidx: sync failed: {e}; retrying in {}s",
            retry.as_secs()
        )),
        Notice::Info(m) => crate::term::say(&format!("pidx: {m}")),
    })?;
    if ended == Ended::IndexReplaced {
        // Its write-ahead log is emptied into the orphaned file, so a new index made at the
        // path does not take its pages; the connection is never closed: closing would let
        // SQLite delete `-wal`/`-shm` by name, and they may belong to a new index by now.
        let _ = store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        std::mem::forget(store);
        anyhow::bail!(
            "the index {} was deleted or replaced while watching; stopping (start `pidx watch` again to build it anew)",
            env.db.display()
        );
    }
    crate::term::say("pidx: watcher stopped");
    Ok(true)
}

/// The background pusher of `watch --push`, reporting on stderr.
fn pusher(env: &Env, url: &str) -> crate::team::push::worker::Pusher {
    use crate::team::push::worker::{PushNotice, Pusher};
    let opts = crate::team::push::PushOptions {
        source: env
            .global
            .source
            .clone()
            .unwrap_or_else(crate::team::push::default_source),
        images: false,
        redact: true,
    };
    crate::term::say(&format!(
        "pidx: pushing to {} as {}",
        crate::team::pg::redact_url(url),
        crate::term::one_line(&opts.source)
    ));
    Pusher::spawn(
        env.db.clone(),
        env.roots.clone(),
        url.to_string(),
        opts,
        move |n| match n {
            PushNotice::Pushed(r, took) => {
                crate::term::say(&format!("pidx: {}", super::push::summary(r, took)));
            }
            PushNotice::Failed(e, retry) => crate::term::say(&format!(
                "pidx: push failed: {e}; retrying in {}s (the local index goes on)",
                retry.as_secs()
            )),
            PushNotice::Recovered => {
                crate::term::say("pidx: the server answers again; catching up")
            }
        },
    )
}
