//! `pidx mcp`: a read-only Model Context Protocol server over stdio (rmcp). The async runtime
//! lives only here, one thread; each tool call runs the same synchronous `query` functions as
//! the CLI on a blocking thread with its own read-only connection, freshened first (`fresh`).
//! A cancelled call (or one past the time limit) is interrupted inside SQLite and between
//! messages, and the server carries on. stdout carries the protocol only; notes go to stderr.
//! With `--pg URL` the tools read the team server through the same `query::Reader` entry
//! points as `pidx --pg URL` on the command line (one connection kept between calls, each call
//! one read-only transaction whose statement is cancelled at the time limit); the tools
//! that read only this machine (`file_history`, `blame`, `sql_query`) say so in one sentence.
//! Answers hold no secret: rows are redacted as they are paged (`page`), context messages as
//! they are rendered, searches match the redacted text, `sql_query` reads transcript text as
//! NULL, and every string of the finished answer is redacted once more here.

mod answer;
mod args;
mod context;
mod files;
mod message;
mod page;
mod schema;
mod segments;
mod tools;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

use crate::app::env::Env;
use crate::app::fresh::Fresh;
use crate::app::outcome::Found;
use crate::query::{Reader, TeamOpener, TeamServer};
use crate::store::Scope;
use crate::store::Store;

/// The longest one call may run before it is stopped.
pub(super) const TIME_LIMIT: Duration = Duration::from_secs(10);

const INSTRUCTIONS: &str = "pidx indexes the pi coding agent's past sessions on this machine. Use search_sessions to find where something was discussed or done, list_sessions for recent sessions, get_context to read a conversation (from_end=true for the latest part), get_tree for its branches, get_session and usage_stats for facts and figures, file_history and blame for which session touched a file or wrote a line, sql_query for anything else. Every answer is bounded; continue with nextCursor.";

/// Serves MCP on stdin/stdout until the client closes the connection.
///
/// # Errors
/// When the runtime cannot start or the connection fails before it is set up.
pub fn run(env: Env) -> Result<Found> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's runtime")?;
    let env = Arc::new(env);
    let team = env.global.pg_team()?.map(|(url, open)| {
        Arc::new(Team {
            url,
            open,
            source: env.global.source.clone(),
            idle: Mutex::new(None),
        })
    });
    // Dropped after the runtime: a kept connection's client ends its own runtime, which
    // cannot be done inside this one (the server is dropped in it).
    let team_after = team.clone();
    let server = Server {
        // The team server is pushed to by other machines: no local files to follow.
        fresh: team
            .is_none()
            .then(|| Arc::new(Fresh::new(Arc::clone(&env)))),
        team,
        env,
    };
    let result = runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("setting up the MCP connection on stdin/stdout")?;
        running.waiting().await.context("serving MCP")?;
        anyhow::Ok(())
    });
    // A call still running on a blocking thread is not waited for past its own limit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(team_after);
    result.map(|()| true)
}

#[derive(Clone)]
struct Server {
    env: Arc<Env>,
    /// The local index's freshness (none on the team server).
    fresh: Option<Arc<Fresh>>,
    team: Option<Arc<Team>>,
}

/// The team server the tools read (`pidx --pg URL mcp`).
struct Team {
    url: String,
    open: TeamOpener,
    /// `--source`: every answer kept to one machine's sessions.
    source: Option<String>,
    /// The connection kept between calls (a call that finds it taken opens another).
    idle: Mutex<Option<Box<dyn TeamServer>>>,
}

impl Team {
    /// Runs one tool in one read-only transaction on a kept connection or a new one, its
    /// statement cancelled on the server once `stop` is set (the time limit or the client's
    /// cancellation: a `query::Watch`); the server's own statement limit, twice the call's, is
    /// for a cancel that never arrived. A connection the server closed, or one told to cancel
    /// (the cancel may still be on its way), is not kept; one whose call failed otherwise is
    /// (dropping the unfinished transaction rolled it back).
    fn answer(
        &self,
        name: &str,
        args: Map<String, Value>,
        stop: &Arc<AtomicBool>,
    ) -> answer::Answer {
        let kept = self.idle.lock().ok().and_then(|mut k| k.take());
        let mut client = match kept {
            Some(c) if !c.is_closed() => c,
            _ => {
                let mut c = (self.open)(&self.url).map_err(|e| format!("{e:#}"))?;
                c.time_limit(TIME_LIMIT * 2)
                    .map_err(|e| format!("the team server: {e}"))?;
                c
            }
        };
        let watch = client.watch(stop);
        let result = client
            .reader(self.source.clone())
            .map_err(|e| format!("the team server: {e}"))
            .and_then(|reader| {
                let call = answer::Call::new(reader, stop);
                let v = dispatch(&call, name, args, stop)?;
                call.finish()?;
                Ok(v)
            });
        let cancelled = watch.end();
        if !client.is_closed() && !cancelled {
            if let Ok(mut k) = self.idle.lock() {
                *k = Some(client);
            }
        }
        result
    }
}

impl Server {
    /// Runs one tool synchronously: freshness, a read-only connection that stops when
    /// `stop` is set (the client cancelled, or the time limit passed: see `call_tool`), the
    /// tool. Long loops outside SQLite check `stop` too. `begun` is when the call's time limit
    /// started counting, so a stop at the limit is told apart from a cancellation.
    fn answer(
        &self,
        name: &str,
        args: Map<String, Value>,
        stop: &Arc<AtomicBool>,
        begun: Instant,
    ) -> answer::Answer {
        let (note, result) = match (&self.team, &self.fresh) {
            (Some(team), _) => (None, team.answer(name, args, stop)),
            (None, fresh) => (
                fresh.as_ref().and_then(|f| f.freshen()),
                self.answer_locally(name, args, stop),
            ),
        };
        let result = result.map_err(|e| {
            if begun.elapsed() >= TIME_LIMIT {
                format!("the call took longer than {} s and was stopped; narrow it (a shorter range, a more specific query, a smaller max_rows)", TIME_LIMIT.as_secs())
            } else if stop.load(Ordering::Relaxed) {
                "the call was cancelled".to_string()
            } else {
                e
            }
        });
        result.map(|mut v| {
            if let (Some(n), Some(Value::Array(notes))) = (note, v.get_mut("notes")) {
                notes.insert(0, n.into());
            }
            crate::redact::redact_value(&mut v);
            v
        })
    }
}

impl Server {
    /// Runs one tool on a read-only connection to the local index.
    fn answer_locally(
        &self,
        name: &str,
        args: Map<String, Value>,
        stop: &Arc<AtomicBool>,
    ) -> answer::Answer {
        let store = Store::open_read_only(&self.env.db).map_err(answer::sentence)?;
        let flag = Arc::clone(stop);
        store
            .conn
            .progress_handler(10_000, Some(move || flag.load(Ordering::Relaxed)))
            .map_err(answer::sentence)?;
        let scope = Scope::new(&store.conn, &self.env.roots).map_err(answer::sentence)?;
        let reader = Reader::Local {
            conn: &store.conn,
            scope,
            unread: Vec::new(),
        };
        let call = answer::Call::new(reader, stop);
        dispatch(&call, name, args, stop)
    }
}

fn dispatch(
    c: &answer::Call,
    name: &str,
    args: Map<String, Value>,
    cancel: &Arc<AtomicBool>,
) -> answer::Answer {
    use tools::parse;
    match name {
        "search_sessions" => answer::search_sessions(c, parse(name, args)?),
        "list_sessions" => answer::list_sessions(c, parse(name, args)?),
        "get_session" => answer::get_session(c, parse(name, args)?),
        "get_context" => context::get_context(c, parse(name, args)?, cancel),
        "get_tree" => answer::get_tree(c, parse(name, args)?),
        "usage_stats" => answer::usage_stats(c, parse(name, args)?),
        "sql_query" => answer::sql_query(c, parse(name, args)?, cancel),
        "file_history" => files::file_history(c, parse(name, args)?),
        "blame" => files::blame(c, parse(name, args)?),
        other => Err(format!(
            "there is no tool {other:?}; the tools are search_sessions, list_sessions, get_session, get_context, get_tree, usage_stats, sql_query, file_history and blame"
        )),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new(
                "pidx",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cancel = Arc::new(AtomicBool::new(false));
        let (server, flag) = (self.clone(), Arc::clone(&cancel));
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let tool = name.clone();
        // The watchdog below sleeps from after this instant, so when it stops the call,
        // `begun.elapsed()` has reached the limit.
        let begun = Instant::now();
        let job = tokio::task::spawn_blocking(move || server.answer(&name, args, &flag, begun));
        // The time limit sets the same flag as a cancellation, so whatever the call is doing
        // (a query inside SQLite, reading lines back, paging messages) stops at its next check.
        let watchdog = {
            let flag = Arc::clone(&cancel);
            tokio::spawn(async move {
                tokio::time::sleep(TIME_LIMIT).await;
                flag.store(true, Ordering::Relaxed);
            })
        };
        let result = tokio::select! {
            joined = job => joined.unwrap_or_else(|e| Err(format!("the call failed inside pidx ({e})"))),
            () = context.ct.cancelled() => {
                cancel.store(true, Ordering::Relaxed);
                eprintln!("pidx mcp: a {tool} call was cancelled by the client; stopping it");
                Err("the call was cancelled".to_string())
            }
        };
        watchdog.abort();
        Ok(match result {
            Ok(value) => CallToolResult::structured(value),
            // Errors quote arguments, names and titles from transcripts: neutralised as the
            // CLI's are, since a client may show them on a terminal.
            Err(sentence) => {
                CallToolResult::error(vec![ContentBlock::text(crate::term::one_line(&sentence))])
            }
        }
        .into())
    }
}
