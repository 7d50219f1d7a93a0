//! The resolved global options and how commands open the index: fresh (a cheap sync first,
//! unless a watcher keeps it fresh or `--no-sync`), as it is (read-only), or for writing (the
//! writer lock first). Every command reaches the index through here.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;

use crate::ingest::behind::{catch_up, Behind, Caught};
use crate::ingest::discover;
use crate::ingest::sync::{Deferred, SyncOptions, SyncReport};
use crate::pi::layout::{absolute, Root};

use crate::store::Scope;
use crate::store::{default_db_path, Store, WriterLock};
use crate::term::{plural, thousands};

/// The options every command shares (the command line's global flags, without clap).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Roots named on the command line (`--root`); empty: the config file's, else pi's.
    pub roots: Vec<PathBuf>,
    /// The index file (`--db`); `None`: `PIDX_DB`, else the default path.
    pub db: Option<PathBuf>,
    /// Answer from the index as it is, without first picking up changed files.
    pub no_sync: bool,
    /// Answer at once while another pidx is still indexing (exit 3 when behind).
    pub no_wait: bool,
    /// Machine-readable output.
    pub json: bool,
    /// The team server's URL (`--pg`).
    pub pg: Option<String>,
    /// With a team server: only this source's sessions.
    pub source: Option<String>,
    /// Redact secrets in what is printed.
    pub redact: bool,
    /// How `--pg` connects: the team crate's opener, given by the binary (the core crate
    /// knows no PostgreSQL).
    pub team: Option<crate::query::TeamOpener>,
}

impl Options {
    /// The team server's URL: `--pg`, else `PIDX_PG`.
    pub fn pg_url(&self) -> Option<String> {
        self.pg
            .clone()
            .or_else(|| std::env::var("PIDX_PG").ok().filter(|v| !v.is_empty()))
    }

    /// The team server `--pg` (or `PIDX_PG`) names and how to open it; `None` without one.
    ///
    /// # Errors
    /// A URL was given to a build without the team crate's opener.
    pub fn pg_team(&self) -> Result<Option<(String, crate::query::TeamOpener)>> {
        let Some(url) = self.pg_url() else {
            return Ok(None);
        };
        let open = self
            .team
            .ok_or_else(|| anyhow::anyhow!("--pg: this build of pidx has no team tier"))?;
        Ok(Some((url, open)))
    }
}

/// How long a query that needs no particular file waits for another writer (a sync that is
/// not a caught-up watcher) before it answers from what is committed: long enough for a
/// small incremental sync to finish, short enough that a picker or an agent never stalls.
pub const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// A command's JSON answer, as [`Env::answer`] shapes it.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub enum Answer<'a, T: serde::Serialize + ?Sized> {
    Plain(&'a T),
    #[serde(rename_all = "camelCase")]
    Wrapped {
        complete: bool,
        files_left: usize,
        results: &'a T,
    },
}

/// Resolved global options.
pub struct Env {
    pub global: Options,
    pub roots: Vec<Root>,
    /// Which of `roots` the user named (`--root`, `PIDX_ROOTS`, the config file); the others
    /// are pi's defaults.
    named: Vec<bool>,
    pub db: PathBuf,
    /// Files the index was behind on when the answer was read (`--no-wait`, or a watcher that
    /// stopped catching up): the answer is from an incomplete index (exit 3). `usize::MAX`
    /// while it was not.
    left: std::sync::atomic::AtomicUsize,
}

impl Env {
    pub fn new(global: &Options) -> Result<Env> {
        let roots = if global.roots.is_empty() {
            super::config::roots()?
        } else {
            global
                .roots
                .iter()
                .map(|p| super::config::user_root(p))
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
        let defaults = super::config::default_roots();
        let named = roots.iter().map(|r| !defaults.contains(r)).collect();
        Ok(Env {
            global: global.clone(),
            roots,
            named,
            db: absolute(&db),
            left: std::sync::atomic::AtomicUsize::new(usize::MAX),
        })
    }

    /// Says what is wrong with the roots: a named root that does not exist or is not a folder
    /// is an error for every command (an answer from it would pass for an empty one); one that
    /// looks like one project's folder is an error when `strict` (`sync`, `watch`) and a warning
    /// otherwise; when no root exists at all, where pi keeps sessions and how to point pidx
    /// elsewhere.
    ///
    /// # Errors
    /// A named root that is missing or not a folder; one that looks like a project's, when
    /// `strict`.
    pub fn check_roots(&self, strict: bool) -> Result<()> {
        for (root, named) in self.roots.iter().zip(&self.named) {
            let Some((problem, fatal)) = discover::root_problem(root).filter(|_| *named) else {
                continue;
            };
            let msg = format!(
                "--root {} {problem}; a root is pi's sessions folder (one --<cwd>-- folder per project, like ~/.pi/agent/sessions) or an agent gateway's folder",
                root.path.display()
            );
            if strict || fatal {
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
                super::config::config_path().display()
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
        let whole = first.is_none();
        let (store, deferred) = match self.open_synced(None, first, whole) {
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
    /// events said changed); `None` checks every file. Another writer is waited for up to 2 s
    /// (`pidx mcp` bounds its own wait and says when an answer is from the index as it was).
    pub fn open_synced_in(&self, dirs: Option<&HashSet<PathBuf>>) -> crate::Result<Store> {
        Ok(self.open_synced(dirs, None, false)?.0)
    }

    /// Opens the index and, unless `--no-sync` or another process keeps it, syncs the files
    /// of `only` (all when `None`), those `first` needs before the rest when it is far behind;
    /// for an answer over the `whole` corpus, see [`Env::writer_lock_for_freshness`].
    fn open_synced(
        &self,
        only: Option<&HashSet<PathBuf>>,
        first: Option<First>,
        whole: bool,
    ) -> crate::Result<(Store, Option<Deferred>)> {
        let mut store = Store::open(&self.db)?;
        if self.global.no_sync {
            return Ok((store, None));
        }
        let Some(lock) = self.writer_lock_for_freshness(&store, whole, first.as_ref())? else {
            return Ok((store, None));
        };
        let mut plan = crate::ingest::sync::plan(&mut store, &self.roots, only)?;
        let first =
            first.filter(|_| plan.pending_bytes() >= super::background::first_answer_bytes());
        let deferred = match first {
            Some(First::Newest(batch, settled)) => {
                newest_first(&mut store, &mut plan, batch, settled)?
            }
            other => other
                .and_then(|first| match first {
                    First::Dirs(dirs) => Some(dirs),
                    First::Session(arg) => {
                        let dirs = plan.dirs_where(|f| names_session(f, arg));
                        if dirs.is_none() {
                            crate::term::say(&format!(
                                "pidx: no new file's name carries {arg:?}: reading all {} MB of new and changed session files before answering",
                                thousands((plan.pending_bytes() / 1_000_000) as i128)
                            ));
                        }
                        dirs
                    }
                    First::Newest(..) => None,
                })
                .map(|dirs| plan.keep_only(&dirs))
                .filter(|d| d.files > 0),
        };
        // With files left for the background sync, the full text of these is left for it to
        // build with the rest (`store::aside`): an answer from the first files needs none.
        let opts = SyncOptions {
            hand_over: deferred.is_some(),
            ..SyncOptions::with_progress()
        };
        report_errors(&plan.ingest(&mut store, opts)?);
        if deferred.is_none() {
            crate::ingest::sync::settle_full_text(&mut store)?;
        }
        drop(lock);
        if let Some(d) = &deferred {
            super::background::sync_rest(&self.db, &self.global.roots, d);
        }
        Ok((store, deferred))
    }

    /// The writer lock for a query's own freshness sync, or `None` when another process keeps
    /// the index: a watcher that has caught up (it keeps the index within a fraction of a
    /// second: trusted, at no cost), or one still in its first reconcile, or a sync (the
    /// background sync of a first answer), once it holds what this answer needs: every file
    /// for an answer over the `whole` corpus (waited for as long as it takes), the files
    /// `first` names for one about a project, a session or a first page (at once when they
    /// are indexed). With `--no-wait` nothing is waited for, and the files the index is behind
    /// on are kept for the answer to say (exit 3). `pidx mcp` (neither) waits up to 2 s for
    /// the lock, then reads.
    fn writer_lock_for_freshness(
        &self,
        store: &Store,
        whole: bool,
        first: Option<&First>,
    ) -> crate::Result<Option<WriterLock>> {
        let no_wait = self.global.no_wait && (whole || first.is_some());
        let patience = match (whole && !no_wait, first.is_some() || no_wait) {
            (true, _) => None,
            (false, true) => Some(std::time::Duration::ZERO),
            (false, false) => Some(LOCK_PATIENCE),
        };
        let waiting = |h: &crate::store::LockHolder| {
            crate::term::say(&format!(
                "pidx: waiting for {} to finish writing the index (--no-wait answers at once from what it has committed)",
                h.0
            ));
        };
        let holder = match WriterLock::acquire(&self.db, "sync", patience, waiting)? {
            Ok(lock) => return Ok(Some(lock)),
            Err(holder) => holder,
        };
        if holder.is_caught_up() {
            return Ok(None);
        }
        if !whole && first.is_none() {
            if !holder.is_watcher() {
                crate::term::say(&format!(
                    "pidx: another pidx process ({}) is updating the index; answering from what it has committed so far",
                    holder.0
                ));
            }
            return Ok(None);
        }
        let wanted = |path: &std::path::Path| match first {
            Some(First::Dirs(dirs)) => path.parent().is_some_and(|d| dirs.contains(d)),
            Some(First::Session(arg)) => names_file(path, arg),
            Some(First::Newest(..)) | None => true,
        };
        let behind = Behind::measure(&store.conn, &self.roots, &wanted)?;
        // A first page is settled once no file left can be newer than its last row.
        let enough = |b: &Behind| -> crate::Result<bool> {
            let Some(First::Newest(_, settled)) = first else {
                return Ok(false);
            };
            match b.newest_left_ms() {
                (_, true) => Ok(false),
                (None, false) => Ok(true),
                (Some(ms), false) => settled(&store.conn, ms),
            }
        };
        let waiting = |left: usize| {
            crate::term::say(&format!(
                "pidx: waiting for {} to index the {} changed file{} this answer needs (--no-wait answers at once)",
                holder.0,
                thousands(left as i128),
                plural(left)
            ));
        };
        match catch_up(&store.conn, &self.db, behind, !no_wait, enough, waiting)? {
            Caught::Up => Ok(None),
            Caught::Lock(lock) => Ok(Some(lock)),
            Caught::Left(left) => {
                crate::term::say(&format!(
                    "pidx: answering from an incomplete index: {} file{} this answer needs not indexed yet by {}{} (exit 3)",
                    thousands(left as i128),
                    plural(left),
                    holder.0,
                    if no_wait { "" } else { ", which wrote nothing for 10 s" }
                ));
                self.left.store(left, std::sync::atomic::Ordering::Relaxed);
                Ok(None)
            }
        }
    }

    /// How many files the index was behind on when an answer was read from it, when it was
    /// (see [`Env::writer_lock_for_freshness`]).
    pub fn files_left(&self) -> Option<usize> {
        Some(self.left.load(std::sync::atomic::Ordering::Relaxed)).filter(|&n| n != usize::MAX)
    }

    /// How a command that found `found` ended: incomplete (exit 3) when its answer was read
    /// from an index still behind the files.
    pub fn outcome(&self, found: super::outcome::Found) -> super::Outcome {
        match self.files_left() {
            Some(_) => super::Outcome::Incomplete,
            None => super::Outcome::of(found),
        }
    }

    /// The folders `list(cwd)` reads, when every root keeps one folder per project (a flat or
    /// gateway root filters by the cwd in the headers, so it needs every file read).
    pub fn project_dirs(&self, cwd: &str) -> Option<HashSet<PathBuf>> {
        let cwd = absolute(std::path::Path::new(cwd));
        self.roots
            .iter()
            .map(|root| {
                (root.layout == crate::pi::layout::Layout::Tree).then(|| {
                    root.path
                        .join(crate::pi::layout::encode_cwd(&cwd.to_string_lossy()))
                })
            })
            .collect()
    }

    /// An answer as the JSON a command prints: with `--no-wait`, inside `{"complete",
    /// "filesLeft", "results"}`, so a script that chose not to wait can tell a complete answer
    /// from one read while the index was behind (the shape depends on the flag, never on the
    /// moment).
    pub fn answer<'a, T: serde::Serialize + ?Sized>(&self, results: &'a T) -> Answer<'a, T> {
        if !self.global.no_wait {
            return Answer::Plain(results);
        }
        Answer::Wrapped {
            complete: self.files_left().is_none(),
            files_left: self.files_left().unwrap_or(0),
            results,
        }
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
        let lock = match self.lock_for_writing(command)? {
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

    /// What `pidx sync` (without `--rebuild`) opens: the index with the writer lock, or, while
    /// a watcher holds it, the index once the watcher holds every change on disk at the start
    /// (a sync would add nothing), so `pidx sync && ...` works on a machine that runs one.
    ///
    /// # Errors
    /// As [`Env::open_for_writing`]; also a watcher that writes nothing for
    /// [`crate::ingest::behind::STALL`] while changed files are not indexed.
    pub fn open_for_sync(&self) -> Result<ForSync> {
        let holder = match self.lock_for_writing("sync")? {
            Ok(lock) => {
                let store = Store::open(&self.db).map_err(|e| e.for_writing(&self.db))?;
                return Ok(ForSync::Writing(lock, store));
            }
            Err(holder) => holder,
        };
        let store = Store::open(&self.db).map_err(|e| e.for_writing(&self.db))?;
        let behind = Behind::measure(&store.conn, &self.roots, &|_| true)?;
        let waiting = |left: usize| {
            crate::term::say(&format!(
                "pidx: a watcher keeps this index ({}); waiting for it to index {} changed file{}",
                holder.0,
                thousands(left as i128),
                plural(left)
            ));
        };
        Ok(
            match catch_up(&store.conn, &self.db, behind, true, |_: &Behind| Ok(false), waiting)? {
                Caught::Up => ForSync::Watched(holder.0.clone(), store),
                Caught::Lock(lock) => ForSync::Writing(lock, store),
                Caught::Left(left) => anyhow::bail!(
                    "a watcher keeps this index ({}) but has written nothing for {} s while {} changed file{} are not indexed; its messages say why (or stop it and run `pidx sync`)",
                    holder.0,
                    crate::ingest::behind::STALL.as_secs(),
                    thousands(left as i128),
                    plural(left)
                ),
            },
        )
    }

    /// The writer lock, waiting while a short-lived writer (a query's own sync) holds it, and
    /// saying so after half a second; a watcher's hold comes back at once.
    fn lock_for_writing(
        &self,
        command: &str,
    ) -> Result<std::result::Result<WriterLock, crate::store::LockHolder>> {
        let waiting = |h: &crate::store::LockHolder| {
            crate::term::say(&format!(
                "pidx: waiting for {} to finish writing the index",
                h.0
            ));
        };
        Ok(WriterLock::acquire(&self.db, command, None, waiting)
            .map_err(|e| e.for_writing(&self.db))?)
    }
}

/// What `pidx sync` opened (see [`Env::open_for_sync`]).
pub enum ForSync {
    /// The writer lock is this process's: sync.
    Writing(WriterLock, Store),
    /// A watcher (its lock note) holds the lock and every change on disk: nothing to do.
    Watched(String, Store),
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
    mut batch: usize,
    settled: &Settled<'_>,
) -> crate::Result<Option<Deferred>> {
    let pending = plan.pending_bytes();
    let mut rounds = 0;
    loop {
        // Each round's full text waits aside for the last round or the background sync.
        let opts = SyncOptions {
            hand_over: true,
            ..SyncOptions::with_progress()
        };
        report_errors(&plan.take_newest(batch).ingest(store, opts)?);
        rounds += 1;
        let Some(next) = plan.newest_left_ms() else {
            // Read to the end without the first page settling: the files' times did not
            // tell which sessions are newest. Never silent (a copy without its times kept
            // makes every file look new).
            if rounds > 1 {
                crate::term::say(&format!(
                    "pidx: the files' modification times did not tell which sessions are newest (files copied or restored without their times?), so all {} MB of new session files were read before this first page",
                    thousands((pending / 1_000_000) as i128)
                ));
            }
            return Ok(None);
        };
        if settled(&store.conn, next)? {
            return Ok(Some(plan.keep_only(&HashSet::new())).filter(|d| d.files > 0));
        }
        batch = batch.saturating_mul(2).max(1);
    }
}

fn names_session(f: &discover::Found, arg: &str) -> bool {
    names_file(&f.path, arg)
}

/// Whether the session file at `path` is one a SESSION argument names, as `resolve` would
/// find it: by path, by file name, or by an id prefix of the id in its name.
fn names_file(path: &std::path::Path, arg: &str) -> bool {
    if arg.contains('/') {
        return path == absolute(std::path::Path::new(arg));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if arg.ends_with(".jsonl") {
        return name == arg;
    }
    // `resolve` matches a prefix with SQLite's LIKE: ASCII letters in either case.
    crate::ingest::sync::id_of_name(&name).is_some_and(|id| {
        id.get(..arg.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(arg))
    })
}

pub fn report_errors(report: &SyncReport) {
    for e in &report.errors {
        crate::term::say(&format!("pidx: skipped {e}"));
    }
    for w in &report.warnings {
        crate::term::say(&format!("pidx: warning: {w}"));
    }
}
