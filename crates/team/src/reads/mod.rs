//! The team server's answers: each query's server half (one file per query, named as the local
//! query module it mirrors), over one read-only transaction. [`PgReads`] is what
//! `query::Reader::Server` holds: the local entry points call it through `query::TeamReads`,
//! so `--pg` only changes which reader a command opens.

use std::collections::HashMap;
use std::time::Duration;

use postgres::Transaction;

use crate::pg::server_err;
use pidx_core::error::Result;
use pidx_core::query::context::ContextPlan;
use pidx_core::query::handle::Session;
use pidx_core::query::list::{ProjectCount, SessionInfo};
use pidx_core::query::resolve::Resolved;
use pidx_core::query::search::{Hit, MeaningStats, Query, SearchOptions};
use pidx_core::query::show::SessionDetail;
use pidx_core::query::sql::Table;
use pidx_core::query::stats::{Row, StatsOptions};
use pidx_core::query::tree::Tree;
use pidx_core::query::{Reader, TeamReads, TeamServer};

mod bounded;
pub mod context;
mod expression;
pub mod handle;
mod heads;
pub mod list;
mod matching;
mod meaning;
pub mod on;
mod postings;
pub mod ranked;
pub mod resolve;
pub mod search;
mod several;
pub mod show;
pub mod sql;
pub mod stats;
pub mod tree;
mod unlisted;

/// One read of the team server: a `READ ONLY` transaction and the `--source` it is kept to.
pub struct PgReads<'c> {
    tx: Transaction<'c>,
    source: Option<String>,
}

/// A reader of the team server through `client` (`pg::connect_reader`), kept to
/// `source`'s sessions when one is given.
///
/// # Errors
/// Server errors.
pub fn reader(client: &mut postgres::Client, source: Option<String>) -> Result<Reader<'_>> {
    Ok(Reader::Server(Box::new(PgReads {
        tx: crate::pg::read_only(client)?,
        source,
    })))
}

/// The team server at `url`, for `app::Env::open_reader` (`app::Options::team`).
///
/// # Errors
/// Connection errors, or a server whose schema this pidx cannot read.
pub fn open(url: &str) -> anyhow::Result<Box<dyn TeamServer>> {
    Ok(Box::new(Server {
        client: crate::pg::connect_reader(url)?,
    }))
}

/// A connection to the team server that opens a [`PgReads`] per answer.
struct Server {
    client: postgres::Client,
}

impl TeamServer for Server {
    fn reader(&mut self, source: Option<String>) -> Result<Reader<'_>> {
        reader(&mut self.client, source)
    }

    fn time_limit(&mut self, limit: Duration) -> Result<()> {
        self.client
            .batch_execute(&format!("SET statement_timeout = {}", limit.as_millis()))
            .map_err(server_err)
    }

    fn canceller(&self) -> Box<dyn Fn() + Send> {
        let token = self.client.cancel_token();
        // A cancel that fails (the server gone) leaves the statement to its time limit.
        Box::new(move || drop(crate::pg::cancel(&token)))
    }

    fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

impl TeamReads for PgReads<'_> {
    fn list(
        &mut self,
        cwd: Option<&str>,
        query: Option<&str>,
        limit: Option<usize>,
        with_text: bool,
    ) -> Result<(Vec<SessionInfo>, usize)> {
        let (tx, source) = (&mut self.tx, self.source.as_deref());
        Ok(match query {
            None => {
                let rows = list::list_sessions(tx, source, cwd, limit, with_text)?;
                let n = rows.len();
                (rows, n)
            }
            Some(q) => {
                let every = list::list_sessions(tx, source, cwd, None, false)?;
                let before = every.len();
                (
                    list::filter_and_sort(tx, every, q, limit, with_text)?,
                    before,
                )
            }
        })
    }

    fn projects(&mut self) -> Result<Vec<(String, ProjectCount)>> {
        list::projects(&mut self.tx, self.source.as_deref())
    }

    fn resolve(&mut self, arg: &str) -> Result<Resolved> {
        resolve::resolve(&mut self.tx, self.source.as_deref(), arg)
    }

    fn show(&mut self, session: &Resolved) -> Result<SessionDetail> {
        let handle = handle::handle_of(&mut self.tx, self.source.as_deref(), session)?;
        show::show(&mut self.tx, session, handle)
    }

    fn tree(&mut self, session: &Resolved) -> Result<Tree> {
        tree::tree(&mut self.tx, session)
    }

    fn context_plan(&mut self, session: &Resolved, leaf: Option<&str>) -> Result<ContextPlan> {
        context::plan(&mut self.tx, session, leaf)
    }

    fn search(&mut self, opts: &SearchOptions, include_silent: bool) -> Result<Vec<Hit>> {
        let on = search::On {
            source: self.source.as_deref(),
            include_silent,
        };
        // Words rank as locally (`ranked.rs`); literals and regexes come newest first.
        match &opts.query {
            Query::Words { fts, terms } => heads::search(&mut self.tx, &on, opts, fts, terms),
            _ => search::search(&mut self.tx, &on, opts),
        }
    }

    fn embedded(&mut self) -> Result<Vec<(String, String)>> {
        if !crate::pg::meaning_held() {
            return Ok(Vec::new());
        }
        meaning::embedded(&mut self.tx, self.source.as_deref())
    }

    fn search_meaning(
        &mut self,
        opts: &SearchOptions,
        include_silent: bool,
        q: &[f32],
        model: &str,
    ) -> Result<(Vec<Hit>, MeaningStats)> {
        let on = search::On {
            source: self.source.as_deref(),
            include_silent,
        };
        meaning::search(&mut self.tx, &on, opts, q, model)
    }

    fn stats(&mut self, opts: &StatsOptions) -> Result<Vec<Row>> {
        stats::stats(&mut self.tx, self.source.as_deref(), opts)
    }

    fn sql(&mut self, sql: &str, limit: Duration) -> Result<Table> {
        sql::run(&mut self.tx, sql, limit)
    }

    fn handles(&mut self, sessions: Vec<Session<'_>>) -> Result<HashMap<i64, String>> {
        handle::handles(&mut self.tx, self.source.as_deref(), sessions)
    }

    fn labels_by_path(&mut self, paths: Vec<&str>) -> Result<HashMap<String, String>> {
        handle::labels_by_path(&mut self.tx, self.source.as_deref(), paths)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.tx.commit().map_err(server_err)
    }
}
