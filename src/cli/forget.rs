//! `pidx forget`: take sessions out of the index (and, with `--pg`, off the team server) and
//! keep them out of every later sync and watch, until `--undo`. pi owns the JSONL files:
//! pidx never deletes one, and says so.

use anyhow::{bail, Result};
use clap::Args;

use super::Found;
use crate::app::env::Env;
use crate::ingest::sync::{sync, SyncOptions};
use crate::present::output::Out;
use crate::query::resolve;
use crate::store::forgotten::{self, Forgotten};
use crate::team::pg;
use crate::team::push::default_source;
use crate::term::one_line;

#[derive(Args, Debug)]
pub struct ForgetArgs {
    /// Sessions to forget: a handle, an id (prefix) or a path, as `pidx show` takes.
    #[arg(value_name = "SESSION")]
    pub sessions: Vec<String>,
    /// Every session of this project (its cwd, exactly).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Every session last active before DATE (2026-11-01, an ISO date-time, or 30d / 2w ago);
    /// with --cwd, those of that project only.
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
    /// Print what would be forgotten, and forget nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Bring back the sessions of the latest `pidx forget` (with --all: every forgotten one);
    /// they are indexed again at once (a push sends them to the team server again).
    #[arg(long, conflicts_with_all = ["sessions", "cwd", "before", "list"])]
    pub undo: bool,
    /// With --undo: every forgotten session, not only the latest run's.
    #[arg(long, requires = "undo")]
    pub all: bool,
    /// List the forgotten sessions.
    #[arg(long, conflicts_with_all = ["sessions", "cwd", "before"])]
    pub list: bool,
}

pub fn run(env: &Env, args: &ForgetArgs, out: &mut Out) -> Result<Found> {
    if args.list {
        let store = crate::store::Store::open_read_only(&env.db)?;
        let rows = forgotten::list(&store.conn)?;
        if rows.is_empty() && !env.global.json {
            // Exit 1 is "nothing found"; the line says it was asked and answered.
            crate::term::say("pidx: no session is forgotten (`pidx forget SESSION` forgets one)");
        }
        return print(env, out, &rows);
    }
    if args.undo {
        return undo(env, args, out);
    }
    if args.sessions.is_empty() && args.cwd.is_none() && args.before.is_none() {
        bail!("say what to forget: SESSION..., --cwd DIR or --before DATE (`pidx forget --help`)");
    }
    // Handles and ids resolve against an index that has every session on disk.
    let (_, scope) = env.open_fresh()?;
    let (_lock, mut store) = env.open_for_writing("forget", false)?;
    let mut ids = Vec::new();
    for arg in &args.sessions {
        ids.push(resolve::resolve_session(&store.conn, &scope, arg)?.file_id);
    }
    let cwd = args.cwd.as_ref().map(|d| {
        crate::pi::layout::absolute(d)
            .to_string_lossy()
            .into_owned()
    });
    let now = chrono::Utc::now().timestamp_millis();
    let before = match &args.before {
        Some(d) => Some(crate::app::dates::parse_date(d, now, false)?),
        None => None,
    };
    ids.extend(forgotten::matching(&store.conn, cwd.as_deref(), before)?);
    ids.sort_unstable();
    ids.dedup();
    let tx = store.conn.transaction()?;
    let gone = forgotten::forget(&tx, &ids, now)?;
    if args.dry_run {
        drop(tx);
        crate::term::say(&format!(
            "pidx: --dry-run: {} session{} would be forgotten; nothing was changed",
            gone.len(),
            crate::term::plural(gone.len())
        ));
        return print(env, out, &gone);
    }
    tx.commit()?;
    let on_server = match env.global.pg_url() {
        Some(url) => Some(forget_on_server(env, &url, &gone)?),
        None => None,
    };
    let found = print(env, out, &gone)?;
    if !gone.is_empty() {
        crate::term::say(&format!(
            "pidx: forgot {} session{}{}: out of the index, and kept out of every later sync and watch; their JSONL files are pi's and stay on disk untouched (pidx never deletes a transcript). `pidx forget --undo` brings them back.",
            gone.len(),
            crate::term::plural(gone.len()),
            on_server.map_or(String::new(), |(n, source)| format!(
                " (and {n} from the team server, source {})",
                one_line(&source)
            )),
        ));
    } else {
        crate::term::say("pidx: no session matched; nothing was forgotten");
    }
    Ok(found)
}

/// Removes the forgotten transcripts from this machine's source on the team server; returns
/// how many it held and the source.
fn forget_on_server(env: &Env, url: &str, gone: &[Forgotten]) -> Result<(usize, String)> {
    let source = env.global.source.clone().unwrap_or_else(default_source);
    let mut client = pg::connect(url)?;
    pg::migrate::migrate(&mut client)?;
    pg::rights::check_may_write(&mut client, &source)?;
    pg::lock_source(&mut client, &source, || {
        crate::term::say(&format!(
            "pidx: a push of source {} is running; waiting for it",
            one_line(&source)
        ));
    })?;
    let paths: Vec<String> = gone.iter().map(|f| f.path.clone()).collect();
    let n = pg::writer::remove_paths(&mut client, &source, &paths)?;
    Ok((n, source))
}

fn undo(env: &Env, args: &ForgetArgs, out: &mut Out) -> Result<Found> {
    let (_lock, mut store) = env.open_for_writing("forget", false)?;
    let tx = store.conn.transaction()?;
    let back = forgotten::undo(&tx, args.all)?;
    tx.commit()?;
    if back.is_empty() {
        crate::term::say("pidx: nothing is forgotten; nothing to undo");
        return Ok(false);
    }
    let report = sync(&mut store, &env.roots, SyncOptions::default())?;
    crate::app::env::report_errors(&report);
    crate::app::meaning::embed_in_step(&mut store)?;
    crate::term::say(&format!(
        "pidx: {} session{} back in the index{}",
        back.len(),
        crate::term::plural(back.len()),
        if env.global.pg_url().is_some() {
            "; `pidx push` sends them to the team server again"
        } else {
            ""
        }
    ));
    print(env, out, &back)
}

/// The sessions, one line each (time, project, title, path), or JSON.
fn print(env: &Env, out: &mut Out, rows: &[Forgotten]) -> Result<Found> {
    if env.global.json {
        out.json(rows)?;
        return Ok(!rows.is_empty());
    }
    let lines = rows.iter().map(|f| {
        format!(
            "{}  {}  {}  {}",
            f.modified_ms.map_or("-".into(), |ms| {
                let t = crate::pi::js::iso(ms);
                t.get(..16).unwrap_or(&t).to_string()
            }),
            one_line(f.cwd.as_deref().unwrap_or("-")),
            crate::term::one_line_upto(f.name.as_deref().unwrap_or("-"), 60),
            one_line(&f.path),
        )
    });
    out.lines(lines.collect::<Vec<_>>())?;
    Ok(!rows.is_empty())
}
