//! `pidx list`: pi's session list (listAll or list(cwd)), optionally filtered and ordered as
//! pi's /resume picker does for typed text.

use anyhow::{Context as _, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::GatewayArgs;
use super::output::plural;
use super::output::Out;
use super::{render, Found};
use crate::app::env::{Env, First};
use crate::pi::layout::absolute;
use crate::query::list::server as pg_list;
use crate::query::{handle, list, picker};
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
    let gateway = args.gateway.filter();
    // A gateway filter names chats, not a project folder: it lists every project.
    let all = args.all || (args.cwd.is_none() && !gateway.is_empty());
    let cwd = project(args, all)?;
    check(args)?;
    let opts = list::ListOptions {
        cwd,
        limit: args.limit.filter(|_| args.query.is_none()),
        with_text: args.with_text || args.query.is_some(),
    };
    let scoped = |conn: &rusqlite::Connection| -> rusqlite::Result<Scope> {
        let mut scope = Scope::new(conn, &env.roots)?;
        args.gateway.apply(&mut scope);
        scope.include_silent = args.include_silent;
        Ok(scope)
    };
    // A first page of every project: settled once its last row is newer than every file left.
    let settled = |conn: &rusqlite::Connection, newest_left_ms: i64| -> crate::Result<bool> {
        if list::modified_after_mtime(conn)? {
            return Ok(false);
        }
        let page = list::list_sessions(conn, &scoped(conn)?, &opts)?;
        Ok(opts.limit.is_some_and(|n| n > 0 && page.len() >= n)
            && page.last().is_some_and(|s| s.modified_ms > newest_left_ms))
    };
    let first = match (opts.cwd.as_deref(), opts.limit) {
        (Some(c), _) => env.project_dirs(c).map(First::Dirs),
        // Twice the page's rows first: some files hold no listed session, some are old.
        (None, Some(n)) if n > 0 => Some(First::Newest(n.saturating_mul(2).max(16), &settled)),
        (None, _) => None,
    };
    let (store, _, deferred) = env.open_fresh_first(first)?;
    let unread = deferred.map(|d| d.ids).unwrap_or_default();
    let scope = scoped(&store.conn)?;
    if opts.limit.is_none() {
        crate::store::small_cache(&store.conn)?;
    }
    let mut sessions = list::list_sessions(&store.conn, &scope, &opts)?;
    if env.global.redact {
        // Before `--query` ranks them: a redacted listing is not found by a secret either.
        sessions.iter_mut().for_each(redact_info);
    }
    let before_query = sessions.len();
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
            _ => "pidx: no sessions in the index for these roots (`pidx status` shows them)".into(),
        };
        crate::term::say(&msg);
    } else {
        let handles = handle::handles_among(
            &store.conn,
            sessions.iter().map(|s| handle::Session {
                file_id: s.file_id,
                id: s.id.as_ref().and_then(serde_json::Value::as_str),
                path: &s.path,
            }),
            &unread,
        )?;
        render::session_table(out, &sessions, &handles, all)?;
    }
    Ok(!sessions.is_empty())
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

/// `pidx --pg URL list`: as the local list (this project unless `--all`), every source's
/// sessions, each row naming its source.
/// The session's texts with their secrets redacted (before a table cuts them to width).
fn redact_info(s: &mut list::SessionInfo) {
    fn clean(t: &str) -> String {
        crate::redact::redact(t).into_owned()
    }
    s.first_message = clean(&s.first_message);
    s.name = s.name.as_deref().map(clean);
    s.all_messages_text = s.all_messages_text.as_deref().map(clean);
}

pub fn run_remote(
    env: &Env,
    args: &ListArgs,
    tx: &mut postgres::Transaction,
    out: &mut Out,
) -> Result<Found> {
    super::args::refuse_gateway_remote(&args.gateway, args.include_silent)?;
    check(args)?;
    let source = env.global.source.as_deref();
    let cwd = project(args, args.all)?;
    let rows = match &args.query {
        None => pg_list::list_sessions(tx, source, cwd.as_deref(), args.limit, args.with_text)?,
        Some(q) => {
            let all = pg_list::list_sessions(tx, source, cwd.as_deref(), None, false)?;
            let before = all.len();
            let rows = pg_list::filter_and_sort(tx, all, q, args.limit, args.with_text)?;
            if rows.is_empty() && before > 0 && !env.global.json {
                crate::term::say(&format!(
                    "pidx: none of the {before} session{} on the server match{} {q:?}",
                    plural(before),
                    if before == 1 { "es" } else { "" }
                ));
            }
            rows
        }
    };
    if let (true, Some(dir), false) = (rows.is_empty(), &cwd, env.global.json) {
        if args.query.is_none() {
            crate::term::say(&format!(
                "pidx: no sessions for {} on the server (try --all)",
                crate::term::one_line(dir)
            ));
        }
    }
    if env.global.json {
        out.json(
            &rows
                .iter()
                .map(pg_list::SourcedInfo::to_json)
                .collect::<Vec<_>>(),
        )?;
    } else {
        for r in &rows {
            out.line(&format!(
                "{}  {}  {:>4}  {}",
                crate::term::one_line(&r.source),
                crate::pi::js::iso(r.info.modified_ms),
                r.info.message_count,
                crate::term::one_line(&super::output::truncate(r.info.title(), 80))
            ))?;
        }
    }
    Ok(!rows.is_empty())
}
