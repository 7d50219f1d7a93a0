//! The command line: clap definitions, the freshness step every query runs first, and dispatch
//! to one function per command. Rendering of human output lives in `render`.

mod commands;
pub mod output;
mod render;
mod report;
mod search;
mod sql;
mod stats;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use commands::run;

/// pidx: pi's sessions, indexed in SQLite. Lists, shows, rebuilds context and draws trees
/// exactly as pi does, in milliseconds, without ever writing a session file.
#[derive(Parser, Debug)]
#[command(name = "pidx", version, about, long_about = None)]
#[command(after_help = "Exit codes: 0 results, 1 nothing found, 2 error.\n\
Sessions root: $PI_CODING_AGENT_DIR/sessions (default ~/.pi/agent/sessions), plus the flat folder \
$PI_CODING_AGENT_SESSION_DIR when set. Index: $PIDX_DB (default ~/.local/share/pidx/index.db).")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub struct Global {
    /// A pi sessions folder to index (holding one `--<cwd>--` folder per project); repeatable.
    /// Replaces the default roots.
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// The index file [env: PIDX_DB] [default: ~/.local/share/pidx/index.db]
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Answer from the index as it is, without first picking up changed files.
    #[arg(long, global = true)]
    pub no_sync: bool,
    /// Machine-readable output on stdout (diagnostics stay on stderr).
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Bring the index up to date with the session files (incremental: only new bytes are read).
    Sync(SyncArgs),
    /// List sessions like pi's /resume: the current project by default, newest first.
    List(ListArgs),
    /// Everything about one session: header, counts, labels, leaf, pi's /session figures.
    Show(SessionArg),
    /// The messages pi would send to the model at a leaf (pi's buildSessionContext).
    Context(ContextArgs),
    /// The session's entry tree (pi's getTree), with labels, branch points and the current leaf.
    Tree(SessionArg),
    /// Where the index is, what it holds, and whether a watcher is keeping it fresh.
    Status,
    /// Keep the index fresh as pi writes (until Ctrl-C / SIGTERM). One watcher per index; while
    /// it runs, other commands read what it committed instead of syncing themselves.
    Watch(WatchArgs),
    /// Search every session: ranked words, "phrases", prefix*, -excluded, OR; exact literal
    /// text (--literal, or automatically for queries without words); re:REGEX.
    #[command(
        after_help = "Examples:\n  pidx search 'flaky test' --since 7d\n  pidx search --literal 'src/main.rs:42'\n  pidx search 're:TODO\\(\\w+\\)' --in assistant,tool\n  pidx search RESTAURANT_SIGNALS --cwd ~/code/app --json\n\nDATE: 2026-11-01, 2026-11-01T12:00:00Z, or relative: 12h, 7d, 2w.\nKINDS: user, assistant, thinking, tool, bash, custom, summary, name."
    )]
    Search(SearchArgs),
    /// Tokens, cost, messages, tool calls and errors, compactions and active days, grouped by
    /// period, project, model, provider, session or tool (several --by nest).
    #[command(
        after_help = "Examples:\n  pidx stats --by month --by model\n  pidx stats --by day --since 30d --tz Europe/Paris\n  pidx stats --by tool --cwd ~/code/app --csv\n\nCopies of entries that forks make are counted once, except with --by session, where\neach session's figures are pi's own /session numbers."
    )]
    Stats(StatsArgs),
    /// Run one read-only SQL query against the index (views: v_sessions, v_entries,
    /// v_messages, v_usage, v_tool_calls). Anything that would write is refused.
    Sql(SqlArgs),
    /// Write a self-contained HTML report: cost and tokens over time, by model and project,
    /// and the most expensive sessions.
    Report(ReportArgs),
}

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// Delete the index and build it again from the session files.
    #[arg(long)]
    pub rebuild: bool,
    /// List every skipped line as `path:line: reason`.
    #[arg(long, short)]
    pub verbose: bool,
}

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

/// Agent-gateway filters (roots holding `agents/<id>/sessions/`, see the README).
#[derive(Args, Debug, Clone, Default)]
pub struct GatewayArgs {
    /// Only this gateway agent's transcripts.
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Only session keys matching this glob, e.g. 'agent:main:telegram:*'.
    #[arg(long, value_name = "PATTERN")]
    pub key: Option<String>,
    /// Only this channel (telegram, discord, slack, cron, hook, ...).
    #[arg(long, value_name = "NAME")]
    pub channel: Option<String>,
    /// Only direct, group or room chats.
    #[arg(long, value_name = "TYPE", value_parser = ["direct", "group", "room"])]
    pub chat_type: Option<String>,
}

impl GatewayArgs {
    pub fn filter(&self) -> crate::query::GatewayFilter {
        crate::query::GatewayFilter {
            agent: self.agent.clone(),
            key: self.key.clone(),
            channel: self.channel.clone(),
            chat_type: self.chat_type.clone(),
        }
    }
}

#[derive(Args, Debug)]
pub struct SessionArg {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// Build the context at this entry instead of the current leaf (the last entry).
    #[arg(long, value_name = "ENTRY_ID")]
    pub leaf: Option<String>,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// What to find (see below). Quote it in the shell.
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    /// Every project (the default).
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// Only this project.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Only entries at or after DATE.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only entries before DATE (a plain date includes that whole day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only sessions that used a model whose id contains M.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Only this session (a path, an id or a unique id prefix).
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,
    /// Only entries on each session's current branch (what pi would send as context).
    #[arg(long)]
    pub branch: bool,
    /// Only these kinds of text, comma-separated.
    #[arg(long = "in", value_name = "KINDS", value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// The exact text, character for character (case-sensitive substring).
    #[arg(long)]
    pub literal: bool,
    /// Show at most N hits.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// One JSON object per hit and line.
    #[arg(long, conflicts_with = "json")]
    pub jsonl: bool,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    /// Gateways: also search silent NO_REPLY turns (housekeeping users never saw).
    #[arg(long)]
    pub include_silent: bool,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Group by day, week, month, project, model, provider, session, tool, agent or channel;
    /// repeat to nest.
    #[arg(long, value_name = "DIM", value_delimiter = ',')]
    pub by: Vec<String>,
    /// Only activity at or after DATE (2026-11-01, an ISO date-time, or 12h / 7d / 2w ago).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only activity before DATE (a plain date includes that whole day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Every project (the default).
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// Only this project.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Time zone for day/week/month boundaries: local (default), UTC, Europe/Paris, +02:00.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// Comma-separated values with a header line.
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub gateway: GatewayArgs,
}

#[derive(Args, Debug)]
pub struct SqlArgs {
    /// One SELECT (or read-only PRAGMA) statement.
    pub query: String,
    /// Comma-separated values with a header line.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Where to write the page.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// Only activity at or after DATE.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only activity before DATE.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only this project.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Time zone for days.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Poll every SECS seconds instead of using file events (network mounts, WSL drives).
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "2")]
    pub poll: Option<f64>,
    /// A full stat-only reconcile every SECS seconds, whatever the events say.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    pub reconcile_every: f64,
}
