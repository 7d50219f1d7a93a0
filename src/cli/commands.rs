//! One function per command. Each opens the index, brings it up to date unless told not to (or
//! unless a watcher holds the writer lock and keeps it fresh), runs its query and renders it.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use super::output::{one_line, Out};
use super::render;
use super::{Cli, Command, ContextArgs, Global, ListArgs, SessionArg, SyncArgs};
use crate::ingest::discover::{absolute, Root};
use crate::ingest::sync::{sync, SyncOptions, SyncReport};
use crate::query::{context, list, picker, resolve, show, tree, Scope};
use crate::store::{default_db_path, Store, WriterLock};

/// What a command found: exit code 0 (results) or 1 (nothing found).
pub type Found = bool;

/// Runs one command.
///
/// # Errors
/// Anything that should end the program with exit code 2 (or 1 for `pidx::Error::NotFound`).
pub fn run(cli: Cli) -> Result<Found> {
    let env = Env::new(&cli.global)?;
    let mut out = Out::new();
    let found = match &cli.command {
        Command::Sync(args) => cmd_sync(&env, args, &mut out),
        Command::List(args) => cmd_list(&env, args, &mut out),
        Command::Show(args) => cmd_show(&env, args, &mut out),
        Command::Context(args) => cmd_context(&env, args, &mut out),
        Command::Tree(args) => cmd_tree(&env, args, &mut out),
        Command::Status => cmd_status(&env, &mut out),
        Command::Search(args) => super::search::cmd_search(&env, args, &mut out),
        Command::Watch(args) => cmd_watch(&env, args),
        Command::Stats(args) => super::stats::cmd_stats(&env, args, &mut out),
        Command::Sql(args) => super::sql::cmd_sql(&env, args, &mut out),
        Command::Report(args) => super::report::cmd_report(&env, args, &mut out),
    }?;
    out.flush()?;
    Ok(found)
}

/// Resolved global options.
pub struct Env {
    pub global: Global,
    pub roots: Vec<Root>,
    pub db: PathBuf,
}

impl Env {
    fn new(global: &Global) -> Result<Env> {
        let roots = if global.roots.is_empty() {
            crate::config::roots()?
        } else {
            global
                .roots
                .iter()
                .map(|p| crate::config::user_root(p))
                .collect()
        };
        let db = global
            .db
            .clone()
            .or_else(|| {
                std::env::var_os("PIDX_DB")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(default_db_path);
        Ok(Env {
            global: global.clone(),
            roots,
            db: absolute(&db),
        })
    }

    /// Opens the index and brings it up to date, unless `--no-sync` or another process holds
    /// the writer lock (a watcher: it keeps the index fresh itself). An index that cannot be
    /// written (a read-only mount, no write permission) is read as it is, with a note.
    pub(super) fn open_fresh(&self) -> Result<(Store, Scope)> {
        let store = match self.open_synced() {
            Ok(store) => store,
            Err(e) => {
                let store = self.read_as_it_is(e)?;
                if !self.global.no_sync {
                    eprintln!(
                        "pidx: index {} cannot be written; answering from it as it is, without syncing",
                        self.db.display()
                    );
                }
                store
            }
        };
        let scope = Scope::new(&store.conn, &self.roots)?;
        Ok((store, scope))
    }

    fn open_synced(&self) -> crate::Result<Store> {
        let mut store = Store::open(&self.db)?;
        if !self.global.no_sync {
            if let Some(lock) = writer_lock_for_freshness(&self.db)? {
                let report = sync(&mut store, &self.roots, SyncOptions { progress: true })?;
                report_errors(&report);
                drop(lock);
            }
        }
        Ok(store)
    }

    /// The index opened read-only when `e` (met opening it for writing) says it cannot be
    /// written; otherwise `e`.
    fn read_as_it_is(&self, e: crate::Error) -> Result<Store> {
        if !e.is_unwritable(&self.db) {
            return Err(e.into());
        }
        Store::open_read_only(&self.db).map_err(|_| e.for_writing(&self.db).into())
    }

    /// The writer lock and the index opened for writing (`sync`, `watch`), emptied first when
    /// `rebuild`, or an error that says another process is writing it, or that it cannot be
    /// written.
    fn open_for_writing(&self, command: &str, rebuild: bool) -> Result<(WriterLock, Store)> {
        let waiting = |h: &crate::store::LockHolder| {
            eprintln!("pidx: waiting for {} to finish writing the index", h.0);
        };
        let lock = match WriterLock::acquire(&self.db, command, None, waiting)
            .map_err(|e| e.for_writing(&self.db))?
        {
            Ok(lock) => lock,
            Err(holder) => anyhow::bail!(
                "a watcher is writing this index ({}); {}",
                holder.0,
                if command == "watch" {
                    "one watcher per index"
                } else {
                    "it keeps the index fresh, so there is nothing to do"
                }
            ),
        };
        if rebuild {
            Store::destroy(&self.db).map_err(|e| e.for_writing(&self.db))?;
        }
        let store = Store::open(&self.db).map_err(|e| e.for_writing(&self.db))?;
        Ok((lock, store))
    }
}

/// The writer lock for a query's own freshness sync, or `None` when another process keeps the
/// index: a watcher (its commits are read as they are), or a sync that is still running after
/// a short wait (then the answer is what it has committed so far, and a note says so).
fn writer_lock_for_freshness(db: &std::path::Path) -> crate::Result<Option<WriterLock>> {
    let patience = Some(std::time::Duration::from_secs(2));
    Ok(match WriterLock::acquire(db, "sync", patience, |_| {})? {
        Ok(lock) => Some(lock),
        Err(holder) if holder.is_watcher() => None,
        Err(holder) => {
            eprintln!(
                "pidx: another pidx process ({}) is updating the index; answering from what it has committed so far",
                holder.0
            );
            None
        }
    })
}

fn report_errors(report: &SyncReport) {
    for e in &report.errors {
        eprintln!("pidx: skipped unreadable {e}");
    }
    for w in &report.warnings {
        eprintln!("pidx: warning: {w}");
    }
}

fn cmd_sync(env: &Env, args: &SyncArgs, out: &mut Out) -> Result<Found> {
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

fn cmd_list(env: &Env, args: &ListArgs, out: &mut Out) -> Result<Found> {
    let (store, mut scope) = env.open_fresh()?;
    scope.gateway = args.gateway.filter();
    scope.include_silent = args.include_silent;
    // A gateway filter names chats, not a project folder: it lists every project.
    let all = args.all || (args.cwd.is_none() && !scope.gateway.is_empty());
    let cwd = if all {
        None
    } else {
        let dir = match &args.cwd {
            Some(d) => absolute(d),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        Some(dir.to_string_lossy().into_owned())
    };
    let opts = list::ListOptions {
        cwd,
        limit: args.limit.filter(|_| args.query.is_none()),
        with_text: args.with_text || args.query.is_some(),
    };
    let mut sessions = list::list_sessions(&store.conn, &scope, &opts)?;
    if let Some(q) = &args.query {
        sessions = picker::filter_and_sort(sessions, q);
        if let Some(n) = args.limit {
            sessions.truncate(n);
        }
        if !args.with_text {
            sessions.iter_mut().for_each(|s| s.all_messages_text = None);
        }
    }
    if env.global.json {
        out.json(&sessions)?;
    } else if sessions.is_empty() {
        let where_ = opts
            .cwd
            .as_deref()
            .map_or("any project".to_string(), |c| format!("{c} (try --all)"));
        eprintln!("pidx: no sessions for {where_}");
    } else {
        render::session_table(out, &sessions, all)?;
    }
    Ok(!sessions.is_empty())
}

pub(super) fn resolve_arg(env: &Env, session: &str) -> Result<(Store, resolve::Resolved)> {
    let (store, scope) = env.open_fresh()?;
    let resolved = resolve::resolve_session(&store.conn, &scope, session)?;
    Ok((store, resolved))
}

fn cmd_show(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let (store, session) = resolve_arg(env, &args.session)?;
    let detail = show::show_session(&store.conn, &session)?;
    if env.global.json {
        out.line(&serde_json::to_string(&detail)?)?;
    } else {
        render::session_detail(out, &detail)?;
    }
    Ok(true)
}

fn cmd_context(env: &Env, args: &ContextArgs, out: &mut Out) -> Result<Found> {
    let (store, session) = resolve_arg(env, &args.session)?;
    let ctx = context::build_context(&store.conn, &session, args.leaf.as_deref())?;
    if ctx.cycle {
        eprintln!(
            "pidx: the entries above this leaf form a cycle; the walk stopped where it repeated (pi itself would never return)"
        );
    }
    if env.global.json {
        out.line(&ctx.to_json())?;
    } else {
        render::context(out, &ctx)?;
    }
    Ok(true)
}

fn cmd_tree(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let (store, session) = resolve_arg(env, &args.session)?;
    let t = tree::build_tree(&store.conn, &session)?;
    if t.unopenable {
        eprintln!("pidx: pi cannot open {} (its first JSON line is not a session header with an id), so it has no tree; `pidx show` says more", session.path);
    }
    if env.global.json {
        out.line(&t.to_json())?;
    } else {
        render::tree(out, &t)?;
    }
    Ok(!t.roots.is_empty())
}

fn cmd_status(env: &Env, out: &mut Out) -> Result<Found> {
    let store = match Store::open(&env.db) {
        Ok(store) => store,
        Err(e) => env.read_as_it_is(e)?,
    };
    let status = crate::query::status::status(&store, &env.roots)?;
    if env.global.json {
        out.line(&serde_json::to_string(&status)?)?;
    } else {
        for line in render::status_lines(&status) {
            out.line(&one_line(&line))?;
        }
    }
    Ok(true)
}

fn cmd_watch(env: &Env, args: &super::WatchArgs) -> Result<Found> {
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
        ..WatchOptions::default()
    };
    let (_lock, mut store) = env.open_for_writing("watch", false)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C / SIGTERM handler")?;
    let roots: Vec<String> = env
        .roots
        .iter()
        .map(|r| r.path.display().to_string())
        .collect();
    eprintln!(
        "pidx: watching {} (index {}); Ctrl-C stops",
        roots.join(", "),
        env.db.display()
    );
    let ended = watch(&mut store, &env.roots, &opts, &stop, |n| match n {
        Notice::Synced(r) => {
            eprintln!("pidx: {}", r.summary());
            report_errors(r);
        }
        Notice::Failed(e, retry) => {
            eprintln!("pidx: sync failed: {e}; retrying in {}s", retry.as_secs())
        }
        Notice::Info(m) => eprintln!("pidx: {m}"),
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
    eprintln!("pidx: watcher stopped");
    Ok(true)
}
