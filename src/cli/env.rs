//! The resolved global options and how commands open the index: fresh (a cheap sync first,
//! unless a watcher keeps it fresh or `--no-sync`), as it is (read-only), or for writing (the
//! writer lock first). Every command reaches the index through here.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use super::args::Global;
use crate::ingest::discover;
use crate::ingest::sync::{Deferred, SyncOptions, SyncReport};
use crate::pi::layout::{absolute, Root};
use crate::query::{resolve, Scope};
use crate::store::{default_db_path, Store, WriterLock};

/// Resolved global options.
pub struct Env {
    pub global: Global,
    pub roots: Vec<Root>,
    /// Which of `roots` the user named (`--root`, `PIDX_ROOTS`, the config file); the others
    /// are pi's defaults.
    named: Vec<bool>,
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
        let defaults = crate::config::default_roots();
        let named = roots.iter().map(|r| !defaults.contains(r)).collect();
        Ok(Env {
            global: global.clone(),
            roots,
            named,
            db: absolute(&db),
        })
    }

    /// Says what is wrong with the roots: a named root that does not exist, is a file or is one
    /// project's folder is an error when `strict` (`sync`, `watch`) and a warning otherwise;
    /// when no root exists at all, where pi keeps sessions and how to point pidx elsewhere.
    ///
    /// # Errors
    /// A bad named root, when `strict`.
    pub fn check_roots(&self, strict: bool) -> Result<()> {
        for (root, named) in self.roots.iter().zip(&self.named) {
            let Some(problem) = discover::root_problem(root).filter(|_| *named) else {
                continue;
            };
            let msg = format!(
                "--root {} {problem}; a root is pi's sessions folder (one --<cwd>-- folder per project, like ~/.pi/agent/sessions) or an agent gateway's folder",
                root.path.display()
            );
            if strict {
                anyhow::bail!(msg);
            }
            crate::term::say(&format!("pidx: warning: {msg}"));
        }
        if !self.roots.iter().any(|r| r.path.is_dir()) {
            let paths: Vec<String> = self
                .roots
                .iter()
                .map(|r| r.path.display().to_string())
                .collect();
            crate::term::say(&format!(
                "pidx: no sessions folder found ({}); pi keeps sessions in $PI_CODING_AGENT_DIR/sessions (default ~/.pi/agent/sessions); point pidx elsewhere with --root DIR, PIDX_ROOTS or roots = [...] in {}",
                paths.join(", "),
                crate::config::config_path().display()
            ));
        }
        Ok(())
    }

    /// Opens the index and brings it up to date, unless `--no-sync` or another process holds
    /// the writer lock (a watcher: it keeps the index fresh itself). An index that cannot be
    /// written (a read-only mount, no write permission) is read as it is, with a note.
    pub fn open_fresh(&self) -> Result<(Store, Scope)> {
        let (store, scope, _) = self.open_fresh_first(None)?;
        Ok((store, scope))
    }

    /// [`Env::open_fresh`] for an answer that needs only the project folders `first`: when the
    /// index is far behind (the first sync of a large store), only those folders are read
    /// before answering, the rest by a `pidx sync` started in the background; what was left
    /// for it comes back.
    pub fn open_fresh_first(
        &self,
        first: Option<First>,
    ) -> Result<(Store, Scope, Option<Deferred>)> {
        let (store, deferred) = match self.open_synced(None, first) {
            Ok(done) => done,
            Err(e) => {
                let store = self.read_as_it_is(e)?;
                if !self.global.no_sync {
                    crate::term::say(&format!(
                        "pidx: index {} cannot be written; answering from it as it is, without syncing",
                        self.db.display()
                    ));
                }
                (store, None)
            }
        };
        let scope = Scope::new(&store.conn, &self.roots)?;
        if self.global.no_sync && scope.never_synced() {
            crate::term::say(&format!(
                "pidx: the index {} has never been synced for these roots, so it has nothing to answer from; run `pidx sync` or leave out --no-sync",
                self.db.display()
            ));
        }
        Ok((store, scope, deferred))
    }

    /// Opens the index and syncs it, only the project folders `dirs` when given (what file
    /// events said changed); `None` checks every file.
    pub fn open_synced_in(&self, dirs: Option<&HashSet<PathBuf>>) -> crate::Result<Store> {
        Ok(self.open_synced(dirs, None)?.0)
    }

    /// Opens the index and, unless `--no-sync` or another process keeps it, syncs the files
    /// of `only` (all when `None`), those `first` needs before the rest when it is far behind.
    fn open_synced(
        &self,
        only: Option<&HashSet<PathBuf>>,
        first: Option<First>,
    ) -> crate::Result<(Store, Option<Deferred>)> {
        let mut store = Store::open(&self.db)?;
        if self.global.no_sync {
            return Ok((store, None));
        }
        let Some(lock) = writer_lock_for_freshness(&self.db)? else {
            return Ok((store, None));
        };
        let mut plan = crate::ingest::sync::plan(&mut store, &self.roots, only)?;
        let first =
            first.filter(|_| plan.pending_bytes() >= super::background::first_answer_bytes());
        let deferred = match first {
            Some(First::Newest(batch, settled)) => {
                newest_first(&mut store, &mut plan, (batch, settled))?
            }
            other => other
                .and_then(|first| match first {
                    First::Dirs(dirs) => Some(dirs),
                    First::Session(arg) => plan.dirs_where(|f| names_session(f, arg)),
                    First::Newest(..) => None,
                })
                .and_then(|dirs| plan.keep_only(&dirs))
                .filter(|d| d.files > 0),
        };
        report_errors(&plan.ingest(&mut store, SyncOptions::with_progress())?);
        drop(lock);
        if let Some(d) = &deferred {
            super::background::sync_rest(self, d);
        }
        Ok((store, deferred))
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
            crate::term::say(&format!(
                "pidx: waiting for {} to finish writing the index",
                h.0
            ));
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
                } else if rebuild {
                    "stop the watcher first, then rebuild (start it again after)"
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

/// Whether a first page is settled, told the newest mtime (ms) of the files left unread.
pub type Settled<'a> = dyn Fn(&rusqlite::Connection, i64) -> crate::Result<bool> + 'a;

/// What an answer needs read first, when the index is far behind (see
/// [`Env::open_fresh_first`]).
pub enum First<'a> {
    /// Project folders (`list` of one project).
    Dirs(HashSet<PathBuf>),
    /// The session a SESSION argument names (`show`, `context`, `tree`): the folders of the
    /// files whose path, name or named id (`<time>_<id>.jsonl`) it matches as `resolve` would.
    /// Several matches are all read, so an ambiguous prefix stays ambiguous; a file whose name
    /// does not carry its header's id is found once the background sync has read it.
    Session(&'a str),
    /// A first page of every project (`list --all --limit N`): files are read newest mtime
    /// first, this many then twice as many each time, until the test says no file left can
    /// change the page, told the newest mtime (ms) left. A message is written before its
    /// file's mtime, so a file's `modified` is at most its mtime; the test also says no when a
    /// file read so far breaks that (then everything is read before answering).
    Newest(usize, &'a Settled<'a>),
}

/// Reads `plan`'s files newest first until `settled` (see [`First::Newest`]); leaves the rest
/// for later, unless a new file left does not carry its session id in its name (then `plan`
/// keeps everything and it is all read now).
fn newest_first(
    store: &mut Store,
    plan: &mut crate::ingest::sync::Plan,
    (mut batch, settled): (usize, &Settled<'_>),
) -> crate::Result<Option<Deferred>> {
    loop {
        report_errors(
            &plan
                .take_newest(batch)
                .ingest(store, SyncOptions::with_progress())?,
        );
        let Some(next) = plan.newest_left_ms() else {
            return Ok(None);
        };
        if settled(&store.conn, next)? {
            return Ok(plan.keep_only(&HashSet::new()).filter(|d| d.files > 0));
        }
        batch = batch.saturating_mul(2).max(1);
    }
}

fn names_session(f: &discover::Found, arg: &str) -> bool {
    if arg.contains('/') {
        return f.path == absolute(std::path::Path::new(arg));
    }
    if arg.ends_with(".jsonl") {
        return f.name == arg;
    }
    // `resolve` matches a prefix with SQLite's LIKE: ASCII letters in either case.
    crate::ingest::sync::id_of_name(&f.name).is_some_and(|id| {
        id.get(..arg.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(arg))
    })
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
            crate::term::say(&format!(
                "pidx: another pidx process ({}) is updating the index; answering from what it has committed so far",
                holder.0
            ));
            None
        }
    })
}

pub fn report_errors(report: &SyncReport) {
    for e in &report.errors {
        crate::term::say(&format!("pidx: skipped unreadable {e}"));
    }
    for w in &report.warnings {
        crate::term::say(&format!("pidx: warning: {w}"));
    }
}

/// Opens the index fresh and finds the session a SESSION argument means.
///
/// # Errors
/// Index errors; `NotFound` or `Ambiguous` for the argument.
/// Also the ids of session files not read into the index yet (see [`Env::open_fresh_first`]),
/// for handles that stay unique once they are.
pub fn resolve_arg(env: &Env, session: &str) -> Result<(Store, resolve::Resolved, Vec<String>)> {
    let (store, scope, deferred) = env.open_fresh_first(Some(First::Session(session)))?;
    let resolved = resolve::resolve_session(&store.conn, &scope, session)?;
    Ok((store, resolved, deferred.map(|d| d.ids).unwrap_or_default()))
}
