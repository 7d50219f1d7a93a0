//! The resolved global options and how commands open the index: fresh (a cheap sync first,
//! unless a watcher keeps it fresh or `--no-sync`), as it is (read-only), or for writing (the
//! writer lock first). Every command reaches the index through here.

use std::path::PathBuf;

use anyhow::Result;

use super::args::Global;
use crate::ingest::sync::{sync, SyncOptions, SyncReport};
use crate::pi::layout::{absolute, Root};
use crate::query::{resolve, Scope};
use crate::store::{default_db_path, Store, WriterLock};

/// Resolved global options.
pub struct Env {
    pub global: Global,
    pub roots: Vec<Root>,
    pub db: PathBuf,
}

impl Env {
    pub fn new(global: &Global) -> Result<Env> {
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
    pub fn open_fresh(&self) -> Result<(Store, Scope)> {
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
    pub fn read_as_it_is(&self, e: crate::Error) -> Result<Store> {
        if !e.is_unwritable(&self.db) {
            return Err(e.into());
        }
        Store::open_read_only(&self.db).map_err(|_| e.for_writing(&self.db).into())
    }

    /// The writer lock and the index opened for writing (`sync`, `watch`), emptied first when
    /// `rebuild`, or an error that says another process is writing it, or that it cannot be
    /// written.
    pub fn open_for_writing(&self, command: &str, rebuild: bool) -> Result<(WriterLock, Store)> {
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

pub fn report_errors(report: &SyncReport) {
    for e in &report.errors {
        eprintln!("pidx: skipped unreadable {e}");
    }
    for w in &report.warnings {
        eprintln!("pidx: warning: {w}");
    }
}

/// Opens the index fresh and finds the session a SESSION argument means.
///
/// # Errors
/// Index errors; `NotFound` or `Ambiguous` for the argument.
pub fn resolve_arg(env: &Env, session: &str) -> Result<(Store, resolve::Resolved)> {
    let (store, scope) = env.open_fresh()?;
    let resolved = resolve::resolve_session(&store.conn, &scope, session)?;
    Ok((store, resolved))
}
