//! `pidx show`: everything about one session, and the git commits its edits ended up in.

use anyhow::Result;

use super::args::SessionArg;
use super::Found;
use crate::app::env::{Env, First};
use crate::present::output::Out;
use crate::present::render;
use crate::query::files::commits;
use crate::query::Reader;
use crate::query::{resolve, show};
use crate::term::one_line;

pub fn run(env: &Env, args: &SessionArg, out: &mut Out) -> Result<Found> {
    let mut opened = env.open_reader(Some(First::Session(&args.session)))?;
    let mut reader = opened.reader()?;
    let session = resolve::resolve(&mut reader, &args.session)?;
    let detail = show::show(&mut reader, &session)?;
    // The commits its edits ended up in: from the local index's file touches (the team server
    // holds none); a repository pidx cannot read costs the section, not the answer.
    let commits = match &reader {
        Reader::Local { conn, .. } => {
            commits::of_session(conn, session.file_id, &detail.cwd).unwrap_or_default()
        }
        Reader::Server(_) => Vec::new(),
    };
    reader.finish()?;
    if env.global.json {
        let mut v = serde_json::to_value(&detail)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("commits".into(), serde_json::to_value(&commits)?);
        }
        out.line(&serde_json::to_string(&v)?)?;
    } else {
        render::session_detail(out, &detail)?;
        if !commits.is_empty() {
            out.line("Commits holding its edits:")?;
            for c in &commits {
                let mine = c.sessions.first().map_or(0, |p| p.lines);
                out.line(&format!(
                    "  {}  {}/{} added lines  {}",
                    &c.commit[..c.commit.len().min(10)],
                    mine,
                    c.added,
                    one_line(&c.summary)
                ))?;
            }
        }
    }
    Ok(true)
}
