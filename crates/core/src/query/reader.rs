//! Where a query reads: the local SQLite index or the team server (`pidx --pg URL`). Each query
//! module has one entry point over a [`Reader`]; on the local index it runs its own SQL, on the
//! team server it asks [`TeamReads`], which the team crate implements over PostgreSQL (this
//! crate knows no server). The front doors print the answer with the same presentation code
//! whichever it was.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::Result;
use crate::query::context::ContextPlan;
use crate::query::handle::Session;
use crate::query::list::{ProjectCount, SessionInfo};
use crate::query::resolve::Resolved;
use crate::query::search::{Hit, MeaningStats, SearchOptions};
use crate::query::show::SessionDetail;
use crate::query::sql::Table;
use crate::query::stats::{Row, StatsOptions};
use crate::query::tree::Tree;
use crate::store::Scope;

/// The index a query reads.
pub enum Reader<'c> {
    /// The local index, with the roots and filters the query sees.
    Local {
        conn: &'c Connection,
        scope: Scope,
        /// Sorted ids of session files not read into the index yet (a first answer given
        /// before a long first sync finished): handles stay unique among them too.
        unread: Vec<String>,
    },
    /// The team server, in one read-only transaction; every row names its source.
    Server(Box<dyn TeamReads + 'c>),
}

impl Reader<'_> {
    /// Whether this reads the team server.
    pub fn is_server(&self) -> bool {
        matches!(self, Reader::Server(_))
    }

    /// Ends the read (the server's transaction commits: nothing was written).
    ///
    /// # Errors
    /// Server errors.
    pub fn finish(self) -> Result<()> {
        match self {
            Reader::Local { .. } => Ok(()),
            Reader::Server(server) => server.finish(),
        }
    }
}

/// The team server's half of every query, over one read-only transaction restricted to a
/// source when `--source` named one. Each method answers what the local query of the same name
/// answers, in the same types, so one presentation prints both.
pub trait TeamReads {
    /// pi's `list` over the server's sessions (one folder's with `cwd`), filtered and ordered
    /// as pi's picker when `query` is given; with how many there were before the filter.
    fn list(
        &mut self,
        cwd: Option<&str>,
        query: Option<&str>,
        limit: Option<usize>,
        with_text: bool,
    ) -> Result<(Vec<SessionInfo>, usize)>;

    /// Every (source, project) of the listing `list` reads: its sessions and newest
    /// `modified`, counted on the server.
    fn projects(&mut self) -> Result<Vec<(String, ProjectCount)>>;

    /// The session `arg` means (a path, an id, a prefix or a handle).
    fn resolve(&mut self, arg: &str) -> Result<Resolved>;

    /// Everything about one session, with its handle.
    fn show(&mut self, session: &Resolved) -> Result<SessionDetail>;

    /// pi's `getTree` of a session.
    fn tree(&mut self, session: &Resolved) -> Result<Tree>;

    /// pi's context at `leaf` (`None`: the session's leaf), its lines fetched with the path.
    fn context_plan(&mut self, session: &Resolved, leaf: Option<&str>) -> Result<ContextPlan>;

    /// Search hits, ranked as the local search ranks them.
    fn search(&mut self, opts: &SearchOptions, include_silent: bool) -> Result<Vec<Hit>>;

    /// The sources this reader sees whose vectors the server holds (pg 0032), with the model
    /// of each: (source, model).
    fn embedded(&mut self) -> Result<Vec<(String, String)>>;

    /// `search --meaning` over the sources whose vectors are of `model`, for the unit query
    /// vector `q` that model made; grouped by session as the local search by meaning.
    fn search_meaning(
        &mut self,
        opts: &SearchOptions,
        include_silent: bool,
        q: &[f32],
        model: &str,
    ) -> Result<(Vec<Hit>, MeaningStats)>;

    /// Figures grouped as `opts` asks.
    fn stats(&mut self, opts: &StatsOptions) -> Result<Vec<Row>>;

    /// One read-only statement, stopped after `limit`.
    fn sql(&mut self, sql: &str, limit: Duration) -> Result<Table>;

    /// Each session's handle, unique among the server's sessions.
    fn handles(&mut self, sessions: Vec<Session<'_>>) -> Result<HashMap<i64, String>>;

    /// The labels of the sessions at `paths`, by path.
    fn labels_by_path(&mut self, paths: Vec<&str>) -> Result<HashMap<String, String>>;

    /// Commits the read-only transaction.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// A connection to the team server, opened by the team crate (`app::Options::team`): one
/// reader per answer. Long-running servers keep a few between requests (`Send`).
pub trait TeamServer: Send {
    /// The reader of one answer, in one read-only transaction ended by `Reader::finish`, kept
    /// to `source`'s sessions when one is given.
    ///
    /// # Errors
    /// Server errors.
    fn reader(&mut self, source: Option<String>) -> Result<Reader<'_>>;

    /// Stops every later statement after `limit` (a web page's time limit).
    ///
    /// # Errors
    /// Server errors.
    fn time_limit(&mut self, limit: Duration) -> Result<()>;

    /// What stops the statement this connection is running, called from another thread (a
    /// page past its time limit, or one the browser gave up on): best effort, the statement
    /// ends with [`crate::error::Error::Stopped`].
    fn canceller(&self) -> Box<dyn Fn() + Send>;

    /// Whether the server closed the connection (it is not used again).
    fn is_closed(&self) -> bool;

    /// Cancels this connection's running statement once `stop` is set, until [`Watch::end`].
    fn watch(&self, stop: &Arc<AtomicBool>) -> Watch {
        Watch::start(stop, self.canceller())
    }
}

/// Stops an answer's statement on the team server when the answer is told to stop (a page's or
/// an MCP call's time limit, or its client gave up on it), as SQLite's progress handler stops a
/// local one. The server's `statement_timeout` bounds each statement, not the answer, so an
/// answer of several slow statements ran on past its limit (`parse` at a million sessions: HTTP
/// 200 after 21.9 s); the doors keep that timeout, at twice their limit, for a cancel that
/// never arrived.
pub struct Watch {
    done: Arc<AtomicBool>,
    thread: JoinHandle<bool>,
}

/// How often a watch looks at the stop flag: the flag's setters (a timer, a closed request)
/// do not know the watch, so it polls; ending the watch wakes it at once.
const WATCH_EVERY: Duration = Duration::from_millis(20);

impl Watch {
    fn start(stop: &Arc<AtomicBool>, cancel: Box<dyn Fn() + Send>) -> Watch {
        let (stop, done) = (Arc::clone(stop), Arc::new(AtomicBool::new(false)));
        let finished = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            while !finished.load(Ordering::Acquire) {
                if stop.load(Ordering::Relaxed) {
                    cancel();
                    return true;
                }
                std::thread::park_timeout(WATCH_EVERY);
            }
            false
        });
        Watch { done, thread }
    }

    /// Ends the watch (at once: the thread is woken, not waited out); whether it cancelled, in
    /// which case the connection may still receive the cancel and is not to be trusted again.
    pub fn end(self) -> bool {
        self.done.store(true, Ordering::Release);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or(true)
    }
}

/// Connects to the team server at a URL as a reader.
pub type TeamOpener = fn(url: &str) -> anyhow::Result<Box<dyn TeamServer>>;
