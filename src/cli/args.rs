//! Arguments several commands share, defined once and flattened where used: the global
//! options, SESSION, the gateway filters, the project scope, the date range and the time zone.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::app::dates;
use crate::pi::layout::absolute;
use crate::query::stats::Zone;

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
    /// Answer at once while another pidx (a background sync, a watcher catching up) is still
    /// indexing, instead of waiting for it; an answer from an index that is behind exits 3
    /// (`--json`: `{"complete": false, "filesLeft": N, "results": ...}`).
    #[arg(long, global = true)]
    pub no_wait: bool,
    /// Machine-readable output on stdout (diagnostics stay on stderr).
    #[arg(long, global = true)]
    pub json: bool,
    /// Answer from a team server (PostgreSQL) instead of the local index; `push` sends there.
    /// Credentials: the URL, PG* variables or ~/.pgpass [env: PIDX_PG]
    #[arg(long, global = true, value_name = "URL")]
    pub pg: Option<String>,
    /// With --pg: only this source's sessions (a machine: user@host, or its --source name).
    #[arg(long, global = true, value_name = "NAME")]
    pub source: Option<String>,
    /// Print transcript text with every secret pidx finds (API keys, tokens, private keys,
    /// passwords, auth headers, cookies, secret env values) replaced by `[redacted: RULE]`;
    /// a search then matches the redacted text only.
    #[arg(long, global = true)]
    pub redact: bool,
}

impl Global {
    /// The team server's URL: `--pg`, else `PIDX_PG`.
    pub fn pg_url(&self) -> Option<String> {
        self.options().pg_url()
    }

    /// The flags as the application floor takes them.
    pub fn options(&self) -> crate::app::Options {
        crate::app::Options {
            roots: self.roots.clone(),
            db: self.db.clone(),
            no_sync: self.no_sync,
            no_wait: self.no_wait,
            json: self.json,
            pg: self.pg.clone(),
            source: self.source.clone(),
            redact: self.redact,
            team: Some(crate::team::reads::open),
        }
    }
}

#[derive(Args, Debug)]
pub struct SessionArg {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
}

/// Agent-gateway filters (roots holding `agents/<id>/sessions/`, see docs/gateways.md).
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
    /// OpenClaw stores: also the sessions of keys OpenClaw no longer lists (deleted keys,
    /// whose rows the store keeps).
    #[arg(long)]
    pub include_deleted: bool,
}

impl GatewayArgs {
    /// Whether any gateway filter is given.
    pub fn any(&self) -> bool {
        !self.filter().is_empty()
    }

    /// Sets `scope`'s gateway filter and whether deleted keys' sessions are left out.
    pub fn apply(&self, scope: &mut crate::store::Scope) {
        scope.gateway = self.filter();
        scope.hide_deleted &= !self.include_deleted;
    }

    pub fn filter(&self) -> crate::store::GatewayFilter {
        crate::store::GatewayFilter {
            agent: self.agent.clone(),
            key: self.key.clone(),
            channel: self.channel.clone(),
            chat_type: self.chat_type.clone(),
        }
    }
}

/// Which projects: every one (the default) or one.
#[derive(Args, Debug, Clone, Default)]
pub struct ProjectArgs {
    /// Every project (the default).
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// Only this project.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

impl ProjectArgs {
    /// The project folder as pi resolves it, if one was named.
    pub fn cwd(&self) -> Option<String> {
        self.cwd
            .as_ref()
            .map(|d| absolute(d).to_string_lossy().into_owned())
    }
}

/// `--since` / `--until`.
#[derive(Args, Debug, Clone, Default)]
pub struct RangeArgs {
    /// Only activity at or after DATE (2026-11-01, an ISO date-time, or 12h / 7d / 2w ago).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only activity before DATE (a plain date includes that whole day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
}

impl RangeArgs {
    /// The bounds as epoch milliseconds (the first inclusive, the second exclusive).
    ///
    /// # Errors
    /// A value that is not a date, or an `--until` before `--since`.
    pub fn bounds(&self, now_ms: i64) -> Result<(Option<i64>, Option<i64>)> {
        dates::date_range(self.since.as_deref(), self.until.as_deref(), now_ms)
    }
}

/// `--tz`.
#[derive(Args, Debug, Clone, Default)]
pub struct ZoneArgs {
    /// Time zone for day/week/month boundaries: local (default), UTC, Europe/Paris, +02:00.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
}

impl ZoneArgs {
    /// The zone, local when absent.
    ///
    /// # Errors
    /// A value that names no zone.
    pub fn zone(&self) -> Result<Zone> {
        dates::zone_arg(self.tz.as_deref())
    }

    /// The zone as the team server names it (UTC when absent): an IANA name, or a fixed offset
    /// in POSIX form, whose sign is the reverse of ISO's (`+02:00` is `UTC-02:00:00`).
    ///
    /// # Errors
    /// A value that names no zone, and `local`, which the server cannot know.
    pub fn server_zone(&self) -> Result<String> {
        if self.tz.is_none() {
            return Ok("UTC".into());
        }
        Ok(match self.zone()? {
            Zone::Local => anyhow::bail!(
                "--tz local: the server does not know this machine's zone; name it (UTC, Europe/Paris, +02:00)"
            ),
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Fixed(off) => {
                let secs = off.local_minus_utc();
                let a = secs.abs();
                format!(
                    "UTC{}{:02}:{:02}:{:02}",
                    if secs > 0 { '-' } else { '+' },
                    a / 3600,
                    a / 60 % 60,
                    a % 60
                )
            }
        })
    }
}

/// The team server does not filter by gateway metadata yet: one clear line instead of an
/// answer that silently ignores the filter.
pub fn refuse_gateway_remote(g: &GatewayArgs, include_silent: bool) -> anyhow::Result<()> {
    if g.any() {
        anyhow::bail!("--agent, --key, --channel and --chat-type are not available with --pg yet");
    }
    if g.include_deleted {
        anyhow::bail!("--include-deleted is not available with --pg yet");
    }
    if include_silent {
        anyhow::bail!("--include-silent is not available with --pg yet");
    }
    Ok(())
}

/// `pidx serve`'s flags.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The address to listen on; another than loopback needs the access token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7777")]
    pub listen: std::net::SocketAddr,
    /// The access token (default: none on loopback, a new one printed otherwise).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PIDX_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Show secrets as they are in the transcripts (pages redact them by default).
    #[arg(long)]
    pub no_redact: bool,
    /// Open the address in your browser once the server listens.
    #[arg(long)]
    pub open: bool,
}

/// `pidx export SESSION --html|--md`.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// A session file path, a full session id, or a unique id prefix.
    pub session: String,
    /// A self-contained HTML page (the default): no script, nothing loaded from anywhere.
    #[arg(long, conflicts_with = "md")]
    pub html: bool,
    /// Markdown.
    #[arg(long)]
    pub md: bool,
    /// The context at this entry instead of the current leaf.
    #[arg(long, value_name = "ENTRY_ID")]
    pub leaf: Option<String>,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Keep secrets as they are in the transcript (the export redacts them by default).
    #[arg(long)]
    pub no_redact: bool,
}

/// `pidx pick [QUERY]`.
#[derive(Args, Debug, Clone)]
pub struct PickArgs {
    /// Start with this text typed (as `pidx list --query`).
    #[arg(allow_hyphen_values = true)]
    pub query: Option<String>,
    /// Print the chosen session's path on stdout instead of resuming it (the screen is drawn
    /// on stderr). Without a terminal, prints the best match for QUERY.
    #[arg(long)]
    pub print: bool,
    /// What Enter runs, through `sh -c`, in the session's directory; `{path}` is replaced by
    /// the session file's path, quoted (added at the end when absent).
    #[arg(long, env = "PIDX_PICK_EXEC", value_name = "CMD", default_value = crate::app::pi_agent::RESUME_EXEC)]
    pub exec: Option<String>,
    /// Start with every project instead of the current one.
    #[arg(long)]
    pub all: bool,
    /// Only sessions whose successful edits or writes changed this file (or a file under
    /// this folder, or matching this glob), as `pidx files` finds them.
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,
}
