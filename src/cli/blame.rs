//! `pidx blame`: the session that last produced each line of a file
//! (`query::files::blame`), as `git blame` prints it.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::files::{code_line, when};
use super::Found;
use crate::app::env::Env;
use crate::present::output::Out;
use crate::query::files::blame::{blame, BlameOptions};
use crate::term::one_line;

#[derive(Args, Debug)]
pub struct BlameArgs {
    /// The file, as it is on disk now.
    pub file: PathBuf,
    /// Only lines START to END (1-based, inclusive), as `git blame -L`.
    #[arg(short = 'L', value_name = "START,END", value_parser = parse_range)]
    pub lines: Option<(usize, usize)>,
    /// Also the git commit that last changed each line.
    #[arg(long)]
    pub git: bool,
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?}: give START,END (1-based line numbers, START <= END)");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if a == 0 || b < a {
        return Err(bad());
    }
    Ok((a, b))
}

pub fn run(env: &Env, args: &BlameArgs, out: &mut Out) -> Result<Found> {
    let (store, _) = env.open_fresh()?;
    let opts = BlameOptions {
        range: args.lines,
        git: args.git,
    };
    let b = blame(&store.conn, &args.file, &opts)?;
    let found = b.lines.iter().any(|l| l.by.is_some());
    if env.global.json {
        out.json(&b)?;
        return Ok(found);
    }
    let width = b.lines.last().map_or(1, |l| l.line.to_string().len());
    let handle = b
        .lines
        .iter()
        .filter_map(|l| l.by.as_ref().map(|w| w.session.len()))
        .max()
        .unwrap_or(8);
    let lines = b.lines.iter().map(|l| {
        let (who, t) = match &l.by {
            Some(w) => (one_line(&w.session), when(w.ts_ms)),
            None => ("-".into(), " ".repeat(16)),
        };
        let commit = match (&l.commit, args.git) {
            (Some(c), true) => format!("{} ", &c[..c.len().min(8)]),
            (None, true) => "-------- ".into(),
            _ => String::new(),
        };
        format!(
            "{commit}{who:<handle$} {t} {:>width$}) {}",
            l.line,
            code_line(&l.text)
        )
    });
    out.lines(lines)?;
    if b.steps == 0 {
        crate::term::say(&format!(
            "pidx: no session's successful edit or write of {} is indexed",
            b.path
        ));
    }
    Ok(found)
}
