//! `pidx list`: pi's session list (listAll or list(cwd)), optionally filtered and ordered as
//! pi's /resume picker does for typed text.

use anyhow::{Context as _, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::GatewayArgs;
use super::Found;
use crate::app::env::{Env, First};
use crate::pi::layout::absolute;
use crate::present::output::plural;
use crate::present::output::Out;
use crate::present::render;
use crate::query::{handle, list, picker, Reader};
use crate::store::Scope;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Every project (pi's listAll), not just the current one.
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project to list (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Show at most N sessions.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Include allMessagesText (all user and assistant text) in --json output.
    #[arg(long)]
    pub with_text: bool,
    /// Filter and order as pi's /resume picker does for typed text: words (fuzzy on name,
    /// id, messages and cwd), "phrases", re:REGEX.
    #[arg(long, short, value_name = "Q", allow_hyphen_values = true)]
    pub query: Option<String>,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    /// Gateways: let silent NO_REPLY turns count as a session's first message.
    #[arg(long)]
    pub include_silent: bool,
}

pub fn run(env: &Env, args: &ListArgs, out: &mut Out) -> Result<Found> {
    if env.reads_server() {
        super::args::refuse_gateway_remote(&args.gateway, args.include_silent)?;
    }
    let gateway = args.gateway.filter();
    // A gateway filter names chats, not a project folder: it lists every project.
    let all = args.all || (args.cwd.is_none() && !gateway.is_empty());
    let cwd = project(args, all)?;
    check(args)?;
    let opts = list::ListOptions {
        cwd,
        limit: args.limit,
        with_text: args.with_text,
    };
    let scoped = |conn: &rusqlite::Connection| -> rusqlite::Result<Scope> {
        let mut scope = Scope::new(conn, &env.roots)?;
        narrow(args, &mut scope);
        Ok(scope)
    };
    // What a first page of every project reads before it answers (without `--query`).
    let page = list::ListOptions {
        limit: opts.limit.filter(|_| args.query.is_none()),
        with_text: opts.with_text || args.query.is_some(),
        ..opts.clone()
    };
    // A first page of every project: settled once its last row is newer than every file left.
    let said = std::cell::Cell::new(false);
    let settled = |conn: &rusqlite::Connection, newest_left_ms: i64| -> crate::Result<bool> {
        if list::modified_after_mtime(conn)? {
            if !said.replace(true) {
                crate::term::say(
                    "pidx: a session file holds messages newer than its modification time (copied with its time kept?), so no file's time bounds its messages: reading every session file before this first page",
                );
            }
            return Ok(false);
        }
        let rows = list::list_sessions(conn, &scoped(conn)?, &page)?;
        Ok(page.limit.is_some_and(|n| n > 0 && rows.len() >= n)
            && rows.last().is_some_and(|s| s.modified_ms > newest_left_ms))
    };
    let first = match (page.cwd.as_deref(), page.limit) {
        (Some(c), _) => env.project_dirs(c).map(First::Dirs),
        // Twice the page's rows first: some files hold no listed session, some are old.
        (None, Some(n)) if n > 0 => Some(First::Newest(n.saturating_mul(2).max(16), &settled)),
        (None, _) => None,
    };
    let mut opened = env.open_reader(first)?;
    if let Some(store) = opened.local() {
        if page.limit.is_none() {
            crate::store::small_cache(&store.conn)?;
        }
    }
    let mut reader = opened.reader()?;
    if let Reader::Local { scope, .. } = &mut reader {
        narrow(args, scope);
    }
    let query = args.query.as_deref();
    let (sessions, before_query) = list::listing(&mut reader, &opts, query, env.global.redact)?;
    if env.global.json {
        out.json(&env.answer(&sessions))?;
    } else if sessions.is_empty() {
        let where_ = opts
            .cwd
            .as_deref()
            .map_or("any project".to_string(), |c| c.to_string());
        let msg = match &args.query {
            Some(q) if before_query > 0 => format!(
                "pidx: none of the {before_query} session{} of {where_} match{} {q:?}",
                plural(before_query),
                if before_query == 1 { "es" } else { "" }
            ),
            _ if opts.cwd.is_some() => format!("pidx: no sessions for {where_} (try --all)"),
            _ if reader.is_server() => "pidx: no sessions on the team server".into(),
            _ => "pidx: no sessions in the index for these roots (`pidx status` shows them)".into(),
        };
        crate::term::say(&msg);
    } else {
        let handles = handle::handles_in(
            &mut reader,
            sessions.iter().map(|s| handle::Session {
                file_id: s.file_id,
                id: s.id.as_ref().and_then(serde_json::Value::as_str),
                path: &s.path,
            }),
        )?;
        render::session_table(out, &sessions, &handles, all)?;
    }
    reader.finish()?;
    Ok(!sessions.is_empty())
}

/// The gateway filters and silent turns of `args` on a local scope.
fn narrow(args: &ListArgs, scope: &mut Scope) {
    args.gateway.apply(scope);
    scope.include_silent = args.include_silent;
}

/// The mistakes said before anything is read (as pi's picker says them for `--query`).
fn check(args: &ListArgs) -> Result<()> {
    if let Some(why) = args.query.as_deref().and_then(picker::query_problem) {
        anyhow::bail!(
            "--query {:?}: {why}",
            args.query.as_deref().unwrap_or_default()
        );
    }
    if args.limit == Some(0) {
        anyhow::bail!("--limit must be at least 1");
    }
    Ok(())
}

/// The project folder listed: `--cwd`, else the current directory; none with `all`.
fn project(args: &ListArgs, all: bool) -> Result<Option<String>> {
    if all {
        return Ok(None);
    }
    let dir = match &args.cwd {
        Some(d) => absolute(d),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    Ok(Some(dir.to_string_lossy().into_owned()))
}
