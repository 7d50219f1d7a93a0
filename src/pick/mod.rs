//! `pidx pick`: a full-screen picker over the index that finds any session as you type,
//! previews it, and resumes it in pi with Enter (`cd` to its cwd, then exec `pi --session
//! PATH`, or `--exec`/`PIDX_PICK_EXEC`), or prints its path with `--print`. This file decides
//! how to start (terminal or not) and what the chosen session becomes; the parts are `app`
//! (state, keys), `rows` (order), `data` (index reads, background sync), `preview`, `ui`, `term`.

mod app;
mod data;
mod enter;
mod keys;
mod preview;
mod rows;
mod term;
mod ui;

use std::io::{self, IsTerminal};
use std::os::unix::process::CommandExt;
use std::process::Command;

use anyhow::{bail, Context as _, Result};

use crate::app::env::Env;
use crate::app::outcome::Found;
use crate::query::{list, picker};
use app::Choice;
use app::{App, Effect};

/// What `pidx pick` was asked (the command line's `pick` arguments, without clap).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Start with this text typed (as `pidx list --query`).
    pub query: Option<String>,
    /// Print the chosen session's path instead of resuming it.
    pub print: bool,
    /// What Enter runs, through `sh -c`, in the session's directory; `{path}` is replaced by
    /// the session file's path, quoted (`None`: [`DEFAULT_EXEC`]).
    pub exec: Option<String>,
    /// Start with every project instead of the current one.
    pub all: bool,
    /// Only sessions whose successful edits or writes changed this file.
    pub file: Option<String>,
}

/// What Enter runs when neither `--exec` nor `PIDX_PICK_EXEC` says otherwise.
pub use crate::app::pi_agent::RESUME_EXEC as DEFAULT_EXEC;

/// Runs the picker, or without a terminal prints the best match for `--print QUERY`.
///
/// # Errors
/// No terminal (and not `--print QUERY`), index errors, a resume command that cannot start.
pub fn run(env: &Env, args: &Options) -> Result<Found> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = cwd.to_string_lossy().into_owned();
    if !(io::stdin().is_terminal() && io::stderr().is_terminal()) {
        return match (&args.query, args.print) {
            (Some(q), true) => print_best(env, q, &cwd, args.file.as_deref()),
            _ => bail!(
                "pidx pick needs a terminal; without one use `pidx pick --print QUERY` (prints the best match) or `pidx list`"
            ),
        };
    }
    let mut source = data::Source::open(env, cwd, args.file.as_deref())?;
    let query = args.query.clone().unwrap_or_default();
    let mut app = App::new(&source, query, args.print, args.all)?;
    let effect = {
        let mut screen = term::Screen::enter().context("setting up the terminal")?;
        let cwd = source.cwd.clone();
        let sync = || (!env.global.no_sync).then(|| data::spawn_sync(env, &cwd));
        term::run(&mut screen, &mut app, &mut source, sync)?
    };
    match effect {
        Effect::Chosen(choice) => finish(args, &choice),
        _ => Ok(false),
    }
}

/// `--print QUERY` without a terminal: the session a person would pick. pi's order (as
/// `pidx list -q QUERY`) ranks every project's matches; the closest kind of match wins (the
/// query as typed, then every word as typed, then letters in order), this project's first
/// within a kind. stderr says which session and why (exit 1 when nothing matches).
fn print_best(env: &Env, query: &str, cwd: &str, file: Option<&str>) -> Result<Found> {
    let (store, scope) = env.open_fresh()?;
    let only = match file {
        Some(f) => Some(crate::query::files::list::sessions_changing(
            &store.conn,
            f,
        )?),
        None => None,
    };
    let listed = |cwd: Option<String>| -> crate::Result<Vec<list::SessionInfo>> {
        let opts = list::ListOptions {
            cwd,
            limit: None,
            with_text: false,
        };
        let mut found = list::list_sessions(&store.conn, &scope, &opts)?;
        if let Some(only) = &only {
            found.retain(|s| only.contains(&s.path));
        }
        Ok(found)
    };
    let here: std::collections::HashSet<String> = listed(Some(cwd.to_string()))?
        .into_iter()
        .map(|s| s.path)
        .collect();
    let sessions = listed(None)?;
    let ranked = picker::rank_closeness_streamed(&sessions, query, |s| {
        list::all_messages_text(&store.conn, s.file_id)
    })?;
    let Some(&(_, closest)) = ranked.iter().max_by_key(|(_, c)| *c) else {
        crate::term::say(&format!("pidx: no session matches {query:?}"));
        return Ok(false);
    };
    let of_kind = || ranked.iter().filter(|(_, c)| *c == closest);
    let local = of_kind().find(|(i, _)| here.contains(&sessions[*i].path));
    let (best, _) = *local
        .or_else(|| of_kind().next())
        .expect("a match of the closest kind");
    let s = &sessions[best];
    let title = s.name.as_deref().unwrap_or(&s.first_message);
    let why = match closest {
        picker::Closeness::Phrase => "it holds the query as typed",
        picker::Closeness::EveryWord => "it holds every word as typed, not together",
        picker::Closeness::Scattered => {
            "only its letters match, in order (no session holds a word as typed)"
        }
    };
    let place = if local.is_some() {
        "this project".to_string()
    } else if here.is_empty() {
        s.cwd.clone()
    } else {
        format!("{} (this project has no closer match)", s.cwd)
    };
    crate::term::say(&format!(
        "pidx: picked {:?} in {place}: {why}",
        crate::term::one_line_upto(title, 60)
    ));
    println!("{}", s.path);
    Ok(true)
}

/// What happens to the chosen session once the screen is restored.
fn finish(args: &Options, choice: &Choice) -> Result<Found> {
    if let Some(key) = &choice.gateway_key {
        if !args.print {
            crate::term::say("pidx: a gateway transcript: pi cannot resume it; its key and path:");
            println!("{key}");
        }
        println!("{}", choice.path);
        return Ok(true);
    }
    if args.print {
        println!("{}", choice.path);
        return Ok(true);
    }
    let template = args.exec.as_deref().unwrap_or(DEFAULT_EXEC);
    let mut command = exec_command(template, &choice.path);
    if let Some(entry) = choice
        .entry_id
        .as_deref()
        .filter(|_| template == DEFAULT_EXEC)
    {
        // Only the pidx pi package teaches pi `--pidx-entry`; a plain pi would refuse it.
        if crate::app::pi_agent::package_installed() {
            command.push_str(&format!(" --pidx-entry {}", shell_quote(entry)));
        } else {
            crate::term::say(
                "pidx: pi resumes this session at its last entry, not at the hit (`pidx pi install` lets Enter resume at the hit)",
            );
        }
    }
    let dir = if choice.here {
        std::env::current_dir().context("reading the current directory")?
    } else {
        choice.cwd.clone().into()
    };
    let err = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(&dir)
        .exec();
    bail!("cannot run `{command}` in {}: {err}", dir.display())
}

/// The shell command for `template`: `{path}` becomes the session path, quoted for `sh` (it is
/// added at the end when the template does not name it).
pub fn exec_command(template: &str, path: &str) -> String {
    let quoted = shell_quote(path);
    if template.contains("{path}") {
        template.replace("{path}", &quoted)
    } else {
        format!("{template} {quoted}")
    }
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_quoted_for_the_shell() {
        assert_eq!(
            exec_command(DEFAULT_EXEC, "/s/it's here.jsonl"),
            r"pi --session '/s/it'\''s here.jsonl'"
        );
        assert_eq!(exec_command("code", "/a b"), "code '/a b'");
    }
}
