//! The command line: the clap definitions and dispatch to one file per command, each with one
//! `run`. Shared arguments are in `args`, opening the index in `env`, rendering in `render` and
//! `output`.

pub mod args;
mod blame;
mod commits;
mod context;
mod files;
mod forget;
mod list;
mod model;
mod pg;
mod pi;
mod push;
mod report;
mod search;
mod secrets;
mod show;
mod similar;
mod skill;
mod sql;
mod stats;
mod status;
mod sync;
mod team;
mod tree;
mod watch;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::app::Env;
pub use crate::app::Outcome;
use crate::present::output::Out;
pub use args::Global;

pub use crate::app::outcome::Found;

/// Where a command runs: the command line prints its answer itself; the picker, the MCP server
/// and the web server are sibling front doors that `main.rs` starts with the opened [`Env`]
/// (no front door imports another).
pub enum Door {
    /// The command ran here.
    Done(Outcome),
    Pick(Env, args::PickArgs),
    Mcp(Env),
    Serve(Env, args::ServeArgs),
    /// One session as a page or Markdown, drawn as the web pages draw it.
    Export(Env, args::ExportArgs),
}

/// Runs one command, or opens what another front door needs to run it.
///
/// # Errors
/// Anything that should end the program with exit code 2 (or 1 for `pidx::Error::NotFound`).
pub fn run(cli: Cli) -> Result<Door> {
    refuse_meaningless_flags(&cli)?;
    if let Command::Skill(cmd) = &cli.command {
        return skill::run(cmd).map(done);
    }
    if let Command::Pi(cmd) = &cli.command {
        return pi::run(cmd).map(done);
    }
    if let Command::Model(cmd) = &cli.command {
        return model::run(cmd).map(done);
    }
    let env = Env::new(&cli.global.options())?;
    // With --pg a reading command reads the team server (`app::Env::open_reader`) and `pg`
    // works on the server's schema: no local roots to check.
    let server_only = reads_from_server(&cli.command) || matches!(cli.command, Command::Pg(_));
    if !(cli.global.pg_url().is_some() && server_only) {
        env.check_roots(matches!(cli.command, Command::Sync(_) | Command::Watch(_)))?;
    }
    // Before `Out` locks stdout: the MCP server writes the protocol there itself.
    match &cli.command {
        Command::Mcp => return Ok(Door::Mcp(env)),
        Command::Serve(args) => return Ok(Door::Serve(env, args.clone())),
        Command::Export(args) => return Ok(Door::Export(env, args.clone())),
        Command::Pick(args) => return Ok(Door::Pick(env, args.clone())),
        _ => {}
    }
    let found = run_local(&env, &cli.command)?;
    Ok(Door::Done(env.outcome(found)))
}

fn done(found: Found) -> Door {
    Door::Done(Outcome::of(found))
}

/// Runs a command on the local index.
fn run_local(env: &Env, command: &Command) -> Result<Found> {
    let mut out = Out::new();
    out.redact = env.global.redact;
    let found = match command {
        Command::Sync(args) => sync::run(env, args, &mut out),
        Command::List(args) => list::run(env, args, &mut out),
        Command::Show(args) => show::run(env, args, &mut out),
        Command::Context(args) => context::run(env, args, &mut out),
        Command::Tree(args) => tree::run(env, args, &mut out),
        Command::Status => status::run(env, &mut out),
        Command::Search(args) => search::run(env, args, &mut out),
        Command::Similar(args) => similar::run(env, args, &mut out),
        Command::Secrets(args) => secrets::run(env, args, &mut out),
        Command::Forget(args) => forget::run(env, args, &mut out),
        Command::Watch(args) => watch::run(env, args),
        Command::Stats(args) => stats::run(env, args, &mut out),
        Command::Sql(args) => sql::run(env, args, &mut out),
        Command::Report(args) => report::run(env, args, &mut out),
        Command::Files(args) => files::run(env, args, &mut out),
        Command::Blame(args) => blame::run(env, args, &mut out),
        Command::Commits(args) => commits::run(env, args, &mut out),
        Command::Push(args) => push::run(env, args, &mut out),
        Command::Pg(cmd) => pg::run(env, cmd, &mut out),
        Command::Team(cmd) => team::run(env, cmd, &mut out),
        Command::Mcp
        | Command::Serve(_)
        | Command::Export(_)
        | Command::Pick(_)
        | Command::Skill(_)
        | Command::Pi(_)
        | Command::Model(_) => {
            unreachable!("run before stdout is locked")
        }
    }?;
    out.flush()?;
    Ok(found)
}

/// Whether `pidx --pg` answers this command from the team server.
fn reads_from_server(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::List(_)
            | Command::Show(_)
            | Command::Context(_)
            | Command::Tree(_)
            | Command::Search(_)
            | Command::Stats(_)
            | Command::Sql(_)
            | Command::Serve(_)
            | Command::Export(_)
            | Command::Mcp
    )
}

/// A global flag that would do nothing for the command is an error rather than silence.
fn refuse_meaningless_flags(cli: &Cli) -> Result<()> {
    let server = cli.global.pg_url().is_some();
    let watch_push = matches!(&cli.command, Command::Watch(w) if w.push.is_some());
    if cli.global.source.is_some() && !server && !watch_push {
        anyhow::bail!(
            "--source names a machine on the team server: use it with --pg URL (or PIDX_PG)"
        );
    }
    if cli.global.pg.is_some()
        && !reads_from_server(&cli.command)
        && !matches!(
            cli.command,
            Command::Push(_) | Command::Pg(_) | Command::Watch(_) | Command::Forget(_)
        )
    {
        anyhow::bail!("--pg: this command reads the local index only (with --pg: list, show, context, tree, search, stats, sql, serve, export, mcp, push, forget, pg migrate)");
    }
    if cli.global.no_wait && cli.global.no_sync {
        anyhow::bail!(
            "--no-wait with --no-sync: --no-sync never waits (and cannot tell what the index misses); choose one"
        );
    }
    if matches!(cli.command, Command::Serve(_)) {
        if cli.global.json {
            anyhow::bail!("--json does nothing for `pidx serve`: it serves web pages");
        }
        if cli.global.redact {
            anyhow::bail!(
                "--redact does nothing for `pidx serve`: its pages are redacted already (--no-redact shows secrets)"
            );
        }
    }
    let name = match &cli.command {
        Command::Sync(_) => "sync",
        Command::Watch(_) => "watch",
        // `status --no-sync` is accepted: status never syncs, so the flag says what it does.
        _ => return Ok(()),
    };
    if cli.global.no_sync {
        anyhow::bail!("--no-sync does nothing for `pidx {name}`: leave it out");
    }
    if cli.global.no_wait {
        anyhow::bail!("--no-wait does nothing for `pidx {name}`: leave it out");
    }
    if cli.global.json && name == "watch" {
        anyhow::bail!(
            "--json does nothing for `pidx watch`: it prints no data (`pidx status --json` does)"
        );
    }
    Ok(())
}

/// pidx: pi's sessions, indexed in SQLite. Lists, shows, rebuilds context and draws trees
/// exactly as pi does, in milliseconds, without ever writing a session file.
#[derive(Parser, Debug)]
// `pidx --version`: the version and the commit it was built from (build.rs).
#[command(name = "pidx", about, long_about = None)]
#[command(version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("PIDX_COMMIT"), ")"))]
#[command(
    after_help = "Exit codes: 0 results, 1 nothing found, 2 error, 3 an answer from an \
index still being written (--no-wait).\n\
Sessions root: $PI_CODING_AGENT_DIR/sessions (default ~/.pi/agent/sessions), plus the flat folder \
$PI_CODING_AGENT_SESSION_DIR when set. Index: $PIDX_DB (default ~/.local/share/pidx/index.db)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Bring the index up to date with the session files (incremental: only new bytes are read).
    #[command(
        after_help = "Examples:\n  pidx sync\n  pidx sync --verbose            # every line the index skipped, as path:line: reason\n  pidx sync --check              # also read the whole index to check it is sound\n  pidx sync --rebuild            # delete the index and build it again from the JSONL\n  pidx --root ~/.openclaw sync   # an agent gateway (OpenClaw)"
    )]
    Sync(sync::SyncArgs),
    /// List sessions like pi's /resume: the current project by default, newest first.
    #[command(
        after_help = "Examples:\n  pidx list\n  pidx list --all --limit 20\n  pidx list --all -q 'flaky \"test runner\"'\n  pidx list --cwd ~/code/app --json --with-text\n\nThe ID column is a handle: the shortest unique id prefix, which every SESSION argument takes."
    )]
    List(list::ListArgs),
    /// Everything about one session: header, counts, labels, leaf, pi's /session figures.
    #[command(
        after_help = "Examples:\n  pidx show 019cb679-40\n  pidx show ~/.pi/agent/sessions/--home-me-app--/2026-03-04T01-32-05-663Z_019cb679.jsonl\n  pidx show 019cb679-40 --json"
    )]
    Show(args::SessionArg),
    /// The messages pi would send to the model at a leaf (pi's buildSessionContext).
    #[command(
        after_help = "Examples:\n  pidx context 019cb679-40\n  pidx context 019cb679-40 --leaf a1b2c3d4 --json"
    )]
    Context(context::ContextArgs),
    /// The session's entry tree (pi's getTree), with labels, branch points and the current leaf.
    #[command(after_help = "Examples:\n  pidx tree 019cb679-40\n  pidx tree 019cb679-40 --json")]
    Tree(args::SessionArg),
    /// Where the index is, what it holds, and whether a watcher is keeping it fresh.
    #[command(after_help = "Examples:\n  pidx status\n  pidx status --json")]
    Status,
    /// Keep the index fresh as pi writes (until Ctrl-C / SIGTERM). One watcher per index; while
    /// it runs, other commands read what it committed instead of syncing themselves.
    #[command(
        after_help = "Examples:\n  pidx watch\n  pidx watch --poll          # poll every 2 s (network mounts, WSL drives)\n  pidx watch --poll 10 --reconcile-every 600"
    )]
    Watch(watch::WatchArgs),
    /// Search every session: ranked words, "phrases", prefix*, -excluded, OR; exact literal
    /// text (--literal, or automatically for queries without words); re:REGEX.
    #[command(
        after_help = "Examples:\n  pidx search 'flaky test' --since 7d\n  pidx search --literal 'src/main.rs:42'\n  pidx search 're:TODO\\(\\w+\\)' --in assistant,tool\n  pidx search RESTAURANT_SIGNALS --cwd ~/code/app --json\n\nDATE: 2026-11-01, 2026-11-01T12:00:00Z, or relative: 12h, 7d, 2w.\nKINDS: user, assistant, thinking, tool, bash, custom, summary, name."
    )]
    Search(search::SearchArgs),
    /// The sessions closest in meaning to one session ("did we already do this somewhere
    /// else?"); needs `pidx sync --embed`.
    #[command(
        after_help = "Examples:\n  pidx similar 019cb679-40\n  pidx similar 019cb679-40 --limit 5 --json"
    )]
    Similar(similar::SimilarArgs),
    /// Tokens, cost, messages, tool calls and errors, compactions and active days, grouped by
    /// period, project, model, provider, session or tool (several --by nest).
    #[command(
        after_help = "Examples:\n  pidx stats --by month --by model\n  pidx stats --by day --since 30d --tz Europe/Paris\n  pidx stats --by tool --cwd ~/code/app --csv\n\nCopies of entries that forks make are counted once, except with --by session, where\neach session's figures are pi's own /session numbers."
    )]
    Stats(stats::StatsArgs),
    /// Run one read-only SQL query against the index (views: v_sessions, v_entries,
    /// v_messages, v_usage, v_tool_calls, v_file_touches). Anything that would write is refused.
    #[command(
        after_help = "Examples:\n  pidx sql \"SELECT coalesce(model, '(no model)') AS model, round(sum(cost), 2) AS cost FROM v_usage GROUP BY 1 ORDER BY 2 DESC\"\n  pidx sql --csv \"SELECT name, count(*) FROM v_tool_calls GROUP BY name\"\n  pidx sql \"PRAGMA table_info(v_usage)\""
    )]
    Sql(sql::SqlArgs),
    /// A self-contained HTML report (or its data as JSON): cost and tokens over time, by model,
    /// project and tool, and the most expensive sessions.
    #[command(
        after_help = "Examples:\n  pidx report --html ~/pi-report.html --since 90d\n  pidx report --html - > report.html\n  pidx report --json --since 30d\n\nOne bar per day (per week past 120 days, per month past three years), quiet periods empty;\nentries without a valid timestamp are counted apart. The page has no script and loads nothing."
    )]
    Report(report::ReportArgs),
    /// Which sessions hold which kinds of secret (API keys, tokens, private keys, passwords,
    /// auth headers, cookies, secret env values): rule, time, session and entry, never the
    /// secret itself, so you know what to rotate.
    #[command(
        after_help = "Examples:\n  pidx secrets --since 30d\n  pidx secrets --cwd . --json\n\nThe same detector redacts what push, mcp and report --html send (see the README's Privacy section)."
    )]
    Secrets(secrets::SecretsArgs),
    /// Take sessions out of the index (with --pg, off the team server too) and keep them out
    /// of every later sync and watch, until --undo. pi's JSONL files are never deleted.
    #[command(
        after_help = "Examples:\n  pidx forget 019cb679-40\n  pidx forget --cwd ~/code/secret-project\n  pidx forget --before 2026-01-01 --dry-run\n  pidx forget 019cb679-40 --pg postgresql://me@db.example/pidx\n  pidx forget --list\n  pidx forget --undo\n\nA watcher must be stopped first (it is the index's one writer)."
    )]
    Forget(forget::ForgetArgs),
    /// Which sessions touched a file: time, kind, session and, for edits, a compact diff;
    /// without PATH, the files of this project sessions changed most.
    #[command(
        after_help = "Examples:\n  pidx files src/main.rs\n  pidx files src/ --kind edit,write --since 7d\n  pidx files 'src/*.rs' --json\n  pidx files                      # this project's most changed files"
    )]
    Files(files::FilesArgs),
    /// For each line of a file as it is now, the session whose successful edit or write last
    /// produced it ('-' when none did). See docs/files.md for the rule and its limits.
    #[command(
        after_help = "Examples:\n  pidx blame src/main.rs\n  pidx blame src/main.rs -L 40,60 --git\n  pidx blame src/main.rs --json"
    )]
    Blame(blame::BlameArgs),
    /// For each git commit, the sessions whose edits produced its added lines, with each
    /// one's share of them.
    #[command(
        after_help = "Examples:\n  pidx commits\n  pidx commits main~50..main --repo ~/code/app\n  pidx commits HEAD --limit 200 --json"
    )]
    Commits(commits::CommitsArgs),
    /// Find a session as you type (this project or all, by listing or full text), preview it,
    /// and resume it in pi with Enter. `?` lists the keys.
    #[command(
        after_help = "Examples:\n  pidx pick\n  pidx pick --all 'flaky test'\n  pidx pick --print 'flaky test'   # no screen: the best match's path\n\n\
Enter runs `pi --session PATH` in the session's directory (replacing pidx).\n\
Without a terminal, `--print QUERY` prints the best match's path.\n\
Shell: pi --session \"$(pidx pick --print)\"\n\
Exit codes: 0 a session was chosen, 1 none (Esc), 2 error."
    )]
    Pick(args::PickArgs),
    /// Serve the index to agents over the Model Context Protocol (stdio; read-only tools:
    /// search_sessions, list_sessions, get_session, get_context, get_tree, usage_stats,
    /// sql_query, file_history, blame). Set-up for Claude Code, Codex and Cursor: see docs/mcp.md.
    #[command(
        after_help = "Examples:\n  pidx mcp\n  claude mcp add pidx -- pidx mcp   # Claude Code\n  pi mcp add pidx -- pidx mcp       # pi 0.99 and newer (`pidx pi install` does it)\n  pidx --pg \"$PIDX_PG\" mcp           # the team server's sessions (not file_history, blame, sql_query)"
    )]
    Mcp,
    /// A read-only web application over the index: sessions, conversations, trees, search
    /// as you type, usage charts, live updates (127.0.0.1:7777 by default).
    #[command(
        after_help = "Examples:\n  pidx serve\n  pidx serve --listen 127.0.0.1:8080\n  pidx serve --listen 0.0.0.0:7777          # needs the access token it prints\n  pidx serve --listen 0.0.0.0:7777 --token \"$TOKEN\"\n\nPages redact secrets unless --no-redact. See docs/web.md."
    )]
    Serve(args::ServeArgs),
    /// One session (or the context at an entry) as a self-contained HTML page or as Markdown,
    /// secrets redacted: a conversation to share.
    #[command(
        after_help = "Examples:\n  pidx export 019c4f > session.html\n  pidx export 019c4f --md -o session.md\n  pidx export 019c4f --leaf a1b2c3d4 --html -o branch.html\n\nThe page has no script and loads nothing; images are inside it. Secrets are redacted unless --no-redact."
    )]
    Export(args::ExportArgs),
    /// Send this machine's index to a team server (PostgreSQL): only what changed since the
    /// last push; transcripts rewritten or deleted here are replaced or removed there.
    #[command(
        after_help = "Examples:\n  pidx push --pg postgresql://me@db.example/pidx\n  pidx push --pg postgresql://me@db.example/pidx --source laptop-2 --images\n\nCredentials: the URL, PGPASSWORD/PGUSER/PGHOST..., or ~/.pgpass; TLS with ?sslmode=require."
    )]
    Push(push::PushArgs),
    /// The team server's schema.
    #[command(
        subcommand,
        after_help = "Examples:\n  pidx pg migrate --pg postgresql://postgres@db.example/pidx"
    )]
    Pg(pg::PgCommand),
    /// People on the team server: a role of their own for each member (who may write only
    /// their own sources) and readers limited to chosen sources and projects.
    #[command(
        subcommand,
        after_help = "Examples:\n  pidx team add-member alice --writes alice@laptop\n  pidx team members --admin postgresql://postgres@db.example/pidx\n  pidx team remove-member alice --admin postgresql://postgres@db.example/pidx"
    )]
    Team(team::TeamCommand),
    /// The static embedding model that search by meaning uses: distil one from a
    /// sentence-transformer, or fetch a published one.
    #[command(
        subcommand,
        after_help = "Examples:\n  pidx model distill --from all_minilm_l6_v2/model.zip\n  pidx model fetch"
    )]
    Model(model::ModelCommand),
    /// The pi skill that teaches pi's agent to use pidx.
    #[command(
        subcommand,
        after_help = "Examples:\n  pidx skill install\n  pidx skill install --project   # into this project's .pi/skills/\n  pidx skill show"
    )]
    Skill(skill::SkillCommand),
    /// The pidx pi package: /history, /sessions, /related, /files inside pi and `--pidx-entry`.
    #[command(
        subcommand,
        after_help = "Examples:\n  pidx pi install\n  pidx pi install --from integrations/pi --no-mcp\n  pidx pi uninstall --keep-mcp\n\nSee docs/pi-package.md."
    )]
    Pi(pi::PiCommand),
}
